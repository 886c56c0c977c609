// How the node:http bridge reads a POST's body: a body that came with its headers is taken at once
// (no listener, no promise: the request begins once the bytes that came with its headers are
// parsed), any other (split over writes, chunked, late) is read as it arrives; both give the same
// answers, byte for byte, on both eras, and a bad body is refused the same way on either path.
// Raw sockets on 127.0.0.1, so that the test decides what arrives with the headers.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, type Socket, connect as tcpConnect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler } from "../../src/http/index.js";
import { toNodeListener } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server whose requests are kept, to look at the listeners the bridge left on them. */
async function start(): Promise<{ port: number; requests: IncomingMessage[] }> {
  const mcp = new McpServer({ name: "body", version: "1.0.0" });
  mcp.tool("echo", {
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: ({ text }: { text: string }) => text,
  });
  const listener = toNodeListener(createHttpHandler(mcp, { sessions: false }), { path: "/mcp" });
  const requests: IncomingMessage[] = [];
  const http = createServer((req, res) => {
    requests.push(req);
    listener(req, res);
  });
  servers.push(http);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { port: (http.address() as AddressInfo).port, requests };
}

const MODERN = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

function head(length: number | "chunked", modern: boolean): string {
  const era = modern
    ? "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"
    : "MCP-Protocol-Version: 2025-11-25\r\n";
  const size = length === "chunked" ? "Transfer-Encoding: chunked\r\n" : `Content-Length: ${length}\r\n`;
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${era}${size}\r\n`;
}

function echo(text: string, modern: boolean): Buffer {
  const params = modern
    ? { name: "echo", arguments: { text }, _meta: MODERN }
    : { name: "echo", arguments: { text } };
  return Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params }));
}

/** One raw connection: what it received so far. */
function open(port: number): { socket: Socket; seen: () => string } {
  const socket = tcpConnect(port, "127.0.0.1");
  socket.on("error", () => {});
  let data = "";
  socket.on("data", (c) => (data += c.toString("utf8")));
  return { socket, seen: () => data };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

/** The status line and body of the one answer on a connection, once it is whole. */
async function answer(seen: () => string): Promise<{ status: string; body: string }> {
  await until(() => {
    const text = seen();
    const end = text.indexOf("\r\n\r\n");
    if (end === -1) return false;
    const length = /content-length: (\d+)/i.exec(text.slice(0, end));
    return length !== null && Buffer.byteLength(text.slice(end + 4)) >= Number(length[1]);
  });
  const text = seen();
  const end = text.indexOf("\r\n\r\n");
  return { status: text.slice(0, text.indexOf("\r\n")), body: text.slice(end + 4) };
}

/** Sends the headers and `body` in one write: the body came with them. */
async function whole(port: number, head: string, body: Buffer) {
  const { socket, seen } = open(port);
  socket.write(Buffer.concat([Buffer.from(head), body]));
  const out = await answer(seen);
  socket.destroy();
  return out;
}

/** Sends the headers, waits until the server has begun the request, then the body in two writes. */
async function split(port: number, requests: IncomingMessage[], head: string, body: Buffer) {
  const before = requests.length;
  const { socket, seen } = open(port);
  socket.write(head);
  await until(() => requests.length > before && requests[before]!.listenerCount("data") > 0);
  socket.write(body.subarray(0, 5));
  socket.write(body.subarray(5));
  const out = await answer(seen);
  socket.destroy();
  return out;
}

describe("the node:http bridge reads a body", () => {
  for (const modern of [false, true]) {
    const era = modern ? "2026-07-28" : "2025-11-25 without sessions";
    it(`that came with its headers at once, without a listener; a split one as it arrives; the same answer (${era})`, async () => {
      const { port, requests } = await start();
      const body = echo("héllo wörld", modern);
      const a = await whole(port, head(body.length, modern), body);
      expect(requests[0]!.listenerCount("data")).toBe(0);
      const b = await split(port, requests, head(body.length, modern), body);
      expect(a.status).toBe("HTTP/1.1 200 OK");
      expect(JSON.parse(a.body)).toEqual({
        jsonrpc: "2.0",
        id: 7,
        result: {
          content: [{ type: "text", text: "héllo wörld" }],
          ...(modern
            ? {
                resultType: "complete",
                _meta: { "io.modelcontextprotocol/serverInfo": { name: "body", version: "1.0.0" } },
              }
            : {}),
        },
      });
      expect(b).toEqual(a);
    });

    it(`refuses a body that is not UTF-8, or not JSON, the same way on either path (${era})`, async () => {
      const { port, requests } = await start();
      for (const bad of [Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x20, 0x20]), Buffer.from('{"jsonrpc":')]) {
        const a = await whole(port, head(bad.length, modern), bad);
        const b = await split(port, requests, head(bad.length, modern), bad);
        expect(a.status).toBe("HTTP/1.1 400 Bad Request");
        expect(JSON.parse(a.body).error.code).toBe(-32700);
        expect(b).toEqual(a);
      }
    });
  }

  it("reads a chunked body, and one whose bytes come after its headers in the same write's stead", async () => {
    const { port, requests } = await start();
    const body = echo("chunked", false);
    const chunked = Buffer.from(
      `${(5).toString(16)}\r\n${body.subarray(0, 5)}\r\n${(body.length - 5).toString(16)}\r\n${body.subarray(5)}\r\n0\r\n\r\n`,
    );
    const a = await whole(port, head("chunked", false), chunked);
    expect(a.status).toBe("HTTP/1.1 200 OK");
    expect(JSON.parse(a.body).result.content[0].text).toBe("chunked");
    // a body longer than what came with the headers: the rest is waited for
    const { socket, seen } = open(port);
    socket.write(Buffer.concat([Buffer.from(head(body.length, false)), body.subarray(0, 10)]));
    await until(() => requests.length === 2 && requests[1]!.listenerCount("data") > 0);
    expect(seen()).toBe("");
    socket.write(body.subarray(10));
    expect(JSON.parse((await answer(seen)).body).result.content[0].text).toBe("chunked");
    socket.destroy();
  });

  it("keeps a connection alive across requests whose bodies were taken at once", async () => {
    const { port } = await start();
    const { socket, seen } = open(port);
    const bodies = ["one", "two", "three"].map((t) => echo(t, false));
    // three requests in one write: each body taken at once, each answered in order on one connection
    socket.write(Buffer.concat(bodies.flatMap((b) => [Buffer.from(head(b.length, false)), b])));
    await until(() => (seen().match(/HTTP\/1\.1 200/g) ?? []).length === 3);
    const texts = [...seen().matchAll(/"text":"(\w+)"/g)].map((m) => m[1]);
    expect(texts).toEqual(["one", "two", "three"]);
    socket.destroy();
  });
});
