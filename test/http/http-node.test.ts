// The node:http bridge over real sockets on 127.0.0.1: a malformed Host or request target, another
// path, and a handler that throws all get a status with a JSON-RPC error body, never a bodiless one.
import { connect as tcpConnect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeServer, serve, toNodeListener } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { initBody } from "../http-helpers.js";

let http: NodeServer;
beforeAll(async () => {
  const server = new McpServer({ name: "bridge", version: "1.0.0" });
  http = await serve(server, { port: 0 });
});
afterAll(() => http.close());

/** Sends one raw HTTP/1.1 request (Connection: close) and reads the whole answer. */
function raw(port: number, head: string, body = ""): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (c) => {
      data += c.toString("utf8");
    });
    socket.on("end", () => {
      const split = data.indexOf("\r\n\r\n");
      const headers = data.slice(0, split);
      let rest = data.slice(split + 4);
      if (/transfer-encoding: chunked/i.test(headers)) {
        let out = "";
        for (;;) {
          const nl = rest.indexOf("\r\n");
          const size = Number.parseInt(rest.slice(0, nl), 16);
          if (!size) break;
          out += rest.slice(nl + 2, nl + 2 + size);
          rest = rest.slice(nl + 2 + size + 2);
        }
        rest = out;
      }
      resolve({
        status: Number(headers.slice(9, 12)),
        type: /content-type: ([^\r]*)/i.exec(headers)?.[1] ?? "",
        body: rest,
      });
    });
    socket.on("error", reject);
    const length = body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : "";
    socket.write(`${head}\r\nConnection: close\r\n${length}\r\n${body}`);
  });
}

const port = () => Number(new URL(http.url).port);
const POST = (target: string, host: string) =>
  `POST ${target} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json`;
const error = (code: number, message: string) => JSON.stringify({ jsonrpc: "2.0", error: { code, message } });

describe("the node:http bridge", () => {
  it("a Host with user info (localhost:3000@evil.com) gets 400 with a JSON-RPC body", async () => {
    for (const host of ["localhost:3000@evil.com", "127.0.0.1:1@x", "a b", "evil.com/mcp"]) {
      const res = await raw(port(), POST("/mcp", host), JSON.stringify(initBody()));
      expect(res).toEqual({
        status: 400,
        type: "application/json",
        body: error(-32000, "Bad Request: the Host header is malformed"),
      });
    }
  });

  it("a request target with credentials gets 400 with a JSON-RPC body", async () => {
    const res = await raw(
      port(),
      POST(`http://user:pw@127.0.0.1:${port()}/mcp`, `127.0.0.1:${port()}`),
      JSON.stringify(initBody()),
    );
    expect(res).toEqual({
      status: 400,
      type: "application/json",
      body: error(-32000, "Bad Request: the request target is malformed"),
    });
  });

  it("another path gets 404 with a JSON-RPC body", async () => {
    const res = await raw(port(), `GET /other HTTP/1.1\r\nHost: 127.0.0.1:${port()}`);
    expect(res).toEqual({
      status: 404,
      type: "application/json",
      body: error(-32000, "Not Found: the MCP endpoint is /mcp"),
    });
  });

  it("a handler that throws gets 500 with a JSON-RPC body", async () => {
    const { createServer } = await import("node:http");
    const failing = createServer(
      toNodeListener(() => {
        throw new Error("boom");
      }),
    );
    await new Promise<void>((r) => failing.listen(0, "127.0.0.1", r));
    try {
      const { port: p } = failing.address() as { port: number };
      const res = await raw(p, `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${p}`);
      expect(res).toEqual({ status: 500, type: "application/json", body: error(-32603, "Internal error") });
    } finally {
      failing.close();
    }
  });

  it("still serves a well-formed request", async () => {
    const res = await raw(port(), POST("/mcp", `127.0.0.1:${port()}`), JSON.stringify(initBody()));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).result.serverInfo).toEqual({ name: "bridge", version: "1.0.0" });
  });
});
