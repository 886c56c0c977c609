// The node:http bridge against clients that stall, over raw sockets on 127.0.0.1: headers that never end,
// bodies that trickle, more connections than allowed. Small limits, and every wait is for an event.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Socket, connect as tcpConnect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler } from "../../src/http/index.js";
import { type NodeServer, type ServeOptions, serve, toNodeListener } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";

const running: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
});

async function start(options: Partial<ServeOptions> = {}): Promise<NodeServer & { port: number }> {
  const server = new McpServer({ name: "stall", version: "1.0.0" });
  server.tool("ping", { run: () => "pong" });
  const http = await serve(server, { port: 0, sessions: false, ...options });
  running.push(() => http.close());
  return Object.assign(http, { port: Number(new URL(http.url).port) });
}

/** A raw socket: what it received, and a promise of its close. */
function open(port: number, first = "") {
  const socket = tcpConnect(port, "127.0.0.1");
  const seen = { data: "", closed: false };
  socket.on("data", (c) => {
    seen.data += c.toString("utf8");
  });
  socket.on("error", () => {});
  const connected = new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const closed = new Promise<void>((resolve) =>
    socket.once("close", () => {
      seen.closed = true;
      resolve();
    }),
  );
  if (first) socket.write(first);
  return { socket, seen, connected, closed };
}

const HEAD =
  "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
const PING = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
const request = (body = PING) => `${HEAD}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** Resolves once `check` holds, looking again every few milliseconds. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

describe("the header timeout", () => {
  it("answers 408 and closes a connection whose headers never end, and one that sends nothing", async () => {
    const http = await start({ headersTimeoutMs: 200 });
    const partial = open(http.port, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const silent = open(http.port);
    await Promise.all([partial.closed, silent.closed]);
    expect(partial.seen.data).toMatch(/^HTTP\/1\.1 408 /);
    expect(silent.seen.data).toMatch(/^HTTP\/1\.1 408 /);
    // the server serves the next client as ever
    const next = open(http.port, request());
    await until(() => next.seen.data.includes('"result"'));
    next.socket.destroy();
  });
});

describe("the body timeout", () => {
  it("answers 408 with a JSON-RPC body and closes every connection whose body stalls", async () => {
    const http = await start({ bodyTimeoutMs: 200 });
    // 20 POSTs that stop after 11 bytes of a 100-byte body
    const stalled = Array.from({ length: 20 }, () =>
      open(http.port, `${HEAD}Content-Length: 100\r\n\r\n{"jsonrpc":`),
    );
    await Promise.all(stalled.map((s) => s.closed));
    for (const s of stalled) {
      const split = s.seen.data.indexOf("\r\n\r\n");
      expect(s.seen.data.slice(0, 13)).toBe("HTTP/1.1 408 ");
      expect(s.seen.data.slice(0, split)).toMatch(/\r\nconnection: close/i);
      expect(JSON.parse(s.seen.data.slice(split + 4))).toEqual({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Request Timeout: the body did not arrive within 200 ms" },
      });
    }
    await until(
      async () => (await new Promise<number>((r) => http.server.getConnections((_e, n) => r(n)))) === 0,
    );
  });

  it("leaves a body that arrives in time, in pieces, alone", async () => {
    const http = await start({ bodyTimeoutMs: 5_000 });
    const c = open(http.port, `${HEAD}Content-Length: ${PING.length}\r\n\r\n${PING.slice(0, 5)}`);
    await c.connected;
    c.socket.write(PING.slice(5));
    await until(() => c.seen.data.includes('"result"'));
    expect(c.seen.data).toMatch(/^HTTP\/1\.1 200 /);
    expect(c.seen.closed).toBe(false);
    c.socket.destroy();
  });

  it("holds on a node:http server of one's own, through toNodeListener", async () => {
    const server = new McpServer({ name: "own", version: "1.0.0" });
    const handler = createHttpHandler(server, { allowedHosts: "*" });
    const own: Server = createServer(toNodeListener(handler, { bodyTimeoutMs: 200 }));
    await new Promise<void>((r) => own.listen(0, "127.0.0.1", r));
    running.push(async () => {
      handler.close();
      own.closeAllConnections();
      await new Promise((r) => own.close(r));
    });
    const s = open((own.address() as AddressInfo).port, `${HEAD}Content-Length: 100\r\n\r\n{"jsonrpc":`);
    await s.closed;
    expect(s.seen.data).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("refuses limits that are not positive numbers", async () => {
    const server = new McpServer({ name: "x", version: "1.0.0" });
    await expect(serve(server, { port: 0, bodyTimeoutMs: 0 })).rejects.toThrow(
      "bodyTimeoutMs must be a positive number",
    );
    await expect(serve(server, { port: 0, headersTimeoutMs: -1 })).rejects.toThrow(
      "headersTimeoutMs must be a positive number",
    );
    await expect(serve(server, { port: 0, maxConnections: Number.NaN })).rejects.toThrow(
      "maxConnections must be a positive number",
    );
  });
});

describe("the connection cap", () => {
  it("closes a connection past maxConnections at once, and takes one again when a place is free", async () => {
    const http = await start({ maxConnections: 3 });
    const connections = () => new Promise<number>((r) => http.server.getConnections((_e, n) => r(n)));
    const held: ReturnType<typeof open>[] = [];
    for (let i = 0; i < 3; i++) {
      held.push(open(http.port));
      await until(async () => (await connections()) === i + 1);
    }
    const extra = open(http.port, request());
    await extra.closed;
    expect(extra.seen.data).toBe("");
    expect(held.some((h) => h.seen.closed)).toBe(false);
    // one leaves: the next client is served
    held[0]!.socket.destroy();
    await until(async () => (await connections()) === 2);
    const next = open(http.port, request());
    await until(() => next.seen.data.includes('"result"'));
    for (const s of [...held, next]) (s.socket as Socket).destroy();
  });
});
