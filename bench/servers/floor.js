// The floor: the fixture by hand on plain node:http and stdin/stdout bytes, no library, no validation
// library. What any MCP server must do at least: parse, route, check the arguments, match the URI,
// encode; and the least work per message on each transport, with every I/O trick picomcp uses (any it
// learns later goes here too), so that picomcp can equal the floor but never beat it:
//   stdio: lines framed on bytes (no readline, no stream decoder), each line decoded once where it lies,
//          answers written 32 to a write, and the rest of a chunk's answers in one write as soon as its
//          lines are framed (picomcp's `writeNow`);
//   HTTP:  a request begun a microtask after its headers, so that a body that came with them is read at
//          once (no listener), the body's bytes decoded once, headers read from rawHeaders (no
//          req.headers object), and the answer's headers and body in one write with a Content-Length
//          (no chunked encoding).
// node:http and node:crypto are loaded by the HTTP floor alone: a stdio server has no use for them, and
// loading them is part of a cold start.
import { announce, itemText, parseArgs, profileText } from "./fixture.js";

const args = parseArgs();
// --zod: the floor loads the fixture's schema library too (it still checks the argument by hand)
if (args.zod) await import("zod");
const templates = [];
for (let i = 0; i < args.templates; i++)
  templates.push({ re: new RegExp(`^res${i}://items/([^/]+)$`), text: (id) => itemText(i, id) });
templates.push({ re: /^users:\/\/([^/]+)\/profile$/, text: profileText });
const statics = [];
for (let i = 0; i < args.statics; i++)
  statics.push({ uri: `static://item/${i}`, name: `static://item/${i}` });
const tools = [
  {
    name: "echo",
    description: "Echoes its text",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
];

const error = (id, code, message) => ({ jsonrpc: "2.0", id, error: { code, message } });
function handle(m) {
  if (m === null || typeof m !== "object" || m.jsonrpc !== "2.0" || typeof m.method !== "string")
    return error(null, -32600, "Invalid Request");
  if (m.id === undefined) return undefined;
  const p = m.params ?? {};
  switch (m.method) {
    case "initialize":
      return {
        jsonrpc: "2.0",
        id: m.id,
        result: {
          protocolVersion: p.protocolVersion === "2025-06-18" ? p.protocolVersion : "2025-11-25",
          capabilities: { tools: {}, resources: {} },
          serverInfo: { name: "bench", version: "1.0.0" },
        },
      };
    case "ping":
      return { jsonrpc: "2.0", id: m.id, result: {} };
    case "tools/list":
      return { jsonrpc: "2.0", id: m.id, result: { tools } };
    case "tools/call": {
      if (p.name !== "echo") return error(m.id, -32602, `Unknown tool: ${p.name}`);
      const text = p.arguments?.text;
      if (typeof text !== "string")
        return {
          jsonrpc: "2.0",
          id: m.id,
          result: { content: [{ type: "text", text: "text: expected string" }], isError: true },
        };
      return { jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text }] } };
    }
    case "resources/list":
      return { jsonrpc: "2.0", id: m.id, result: { resources: statics } };
    case "resources/read": {
      const uri = p.uri;
      if (typeof uri === "string")
        for (const t of templates) {
          const match = t.re.exec(uri);
          if (match)
            return {
              jsonrpc: "2.0",
              id: m.id,
              result: {
                contents: [{ uri, mimeType: "text/plain", text: t.text(decodeURIComponent(match[1])) }],
              },
            };
        }
      return error(m.id, -32002, "Resource not found");
    }
    default:
      return error(m.id, -32601, "Method not found");
  }
}

function handleText(text) {
  let m;
  try {
    m = JSON.parse(text);
  } catch {
    return error(null, -32700, "Parse error");
  }
  return handle(m);
}

/** Answers queued before they are written without waiting for the end of the turn (as picomcp's stdio). */
const WRITE_EVERY = 32;

function serveStdio() {
  let queue = [];
  let scheduled = false;
  let waiting = false;
  let ended = false;
  const pump = () => {
    scheduled = false;
    if (waiting) return;
    if (queue.length > 0) {
      const chunk = queue.length === 1 ? queue[0] : queue.join("");
      queue = [];
      if (!process.stdout.write(chunk)) {
        waiting = true;
        process.stdout.once("drain", () => {
          waiting = false;
          pump();
        });
        return;
      }
    }
    // every answer written: the end of input ends the process
    if (ended) process.stdout.write("", () => process.exit(0));
  };
  const write = (line) => {
    queue.push(line);
    if (waiting) return;
    if (queue.length >= WRITE_EVERY) pump();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(pump);
    }
  };
  // the answers of a chunk's lines go out once they are framed, not a turn of the event loop later
  const writeNow = () => {
    if (scheduled) pump();
  };
  const serve = (bytes, start, end) => {
    if (end > start && bytes[end - 1] === 0x0d) end--;
    if (end === start) return;
    const answer = handleText(bytes.toString("utf8", start, end));
    if (answer !== undefined) write(`${JSON.stringify(answer)}\n`);
  };
  // the start of a line whose end has not arrived yet (copied: the stream may reuse its buffer)
  let rest;
  process.stdin.on("data", (chunk) => {
    let at = 0;
    let nl = chunk.indexOf(0x0a);
    if (rest !== undefined && nl !== -1) {
      const line = Buffer.concat([rest, chunk.subarray(0, nl)]);
      rest = undefined;
      serve(line, 0, line.length);
      at = nl + 1;
      nl = chunk.indexOf(0x0a, at);
    }
    while (nl !== -1) {
      serve(chunk, at, nl);
      at = nl + 1;
      nl = chunk.indexOf(0x0a, at);
    }
    if (at < chunk.length)
      rest = rest === undefined ? Buffer.from(chunk.subarray(at)) : Buffer.concat([rest, chunk]);
    writeNow();
  });
  process.stdin.on("end", () => {
    if (rest !== undefined) serve(rest, 0, rest.length);
    ended = true;
    pump();
  });
}

/** The first value of a header (`name` in lower case) from the raw headers, as picomcp's bridge reads it. */
function header(req, name) {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === name) return raw[i + 1];
  return undefined;
}

function reply(res, status, headers, body) {
  headers["content-length"] = Buffer.byteLength(body);
  res.writeHead(status, headers);
  res.end(body);
}

async function serveHttp() {
  const { createServer } = await import("node:http");
  const { randomUUID } = await import("node:crypto");
  const sessions = new Set();
  const server = createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405, { "content-length": 0 }).end();
      return;
    }
    // begun once the bytes that came with the headers are parsed (a microtask later): a body that
    // came with them is read at once, without a listener
    queueMicrotask(() => {
      const length = Number(header(req, "content-length"));
      if (length > 0 && req.readableLength === length) return answer(req, res, req.read().toString());
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () =>
        answer(req, res, chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString()),
      );
    });
  });
  const answer = (req, res, text) => {
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      m = undefined;
    }
    const headers = { "content-type": "application/json" };
    if (args.sessions) {
      if (m?.method === "initialize") {
        const id = randomUUID();
        sessions.add(id);
        headers["mcp-session-id"] = id;
      } else if (!sessions.has(header(req, "mcp-session-id"))) {
        reply(res, 404, headers, JSON.stringify(error(null, -32001, "Session not found")));
        return;
      }
    }
    const out = m === undefined ? error(null, -32700, "Parse error") : handle(m);
    if (out === undefined) res.writeHead(202, { "content-length": 0 }).end();
    else reply(res, 200, headers, JSON.stringify(out));
  };
  announce(server);
}

if (args.transport === "stdio") serveStdio();
else await serveHttp();
