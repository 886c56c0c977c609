// The floor: the fixture by hand on plain readline / node:http, no library, no validation library.
// What any MCP server must do at least: parse, route, check the arguments, match the URI, encode.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { createInterface } from "node:readline";
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

if (args.transport === "stdio") {
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    const answer = handleText(line);
    if (answer !== undefined) process.stdout.write(`${JSON.stringify(answer)}\n`);
  });
  lines.on("close", () => process.exit(0));
} else {
  const sessions = new Set();
  const server = createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const text = chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString();
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
        } else if (!sessions.has(req.headers["mcp-session-id"])) {
          res.writeHead(404, headers).end(JSON.stringify(error(null, -32001, "Session not found")));
          return;
        }
      }
      const answer = m === undefined ? error(null, -32700, "Parse error") : handle(m);
      if (answer === undefined) res.writeHead(202).end();
      else res.writeHead(200, headers).end(JSON.stringify(answer));
    });
  });
  announce(server);
}
