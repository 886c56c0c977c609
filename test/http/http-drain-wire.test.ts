// picomcp/node's close({ graceMs }) on real sockets: a request on an idle kept-alive connection is
// answered 503 (never reset), an answer still leaving for a slow reader is not cut, a request cut
// past the grace is told so on its stream (and in the event store) and a batch for each of its
// requests, streams that open once the drain began end at once, graceMs 0 cuts at once, and the
// drain's 503 carries CORS headers for an allowed origin.
import { once } from "node:events";
import { Agent, request as httpRequest, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler, type HttpHandler, MemoryEventStore } from "../../src/http/index.js";
import { type NodeServer, serve } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { call, initialize, messagesOf, POST_HEADERS, post, readEvents } from "../http-helpers.js";
import { meta, SERVER_META, V } from "../modern-helpers.js";

const DRAINING = {
  jsonrpc: "2.0",
  error: {
    code: -32000,
    message:
      "Service Unavailable: this server is shutting down; retry the request (another instance serves it)",
  },
};
const CUT = "Service Unavailable: the server shut down before the request finished";
const BIG = 16 * 1024 * 1024;

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const handlers: HttpHandler[] = [];
const nodes: NodeServer[] = [];
afterEach(async () => {
  for (const h of handlers.splice(0)) h.close();
  for (const n of nodes.splice(0)) await n.close();
});

/** `wait` runs until the gate opens or it is cancelled; `chatty` logs once, then waits to be cancelled; `big` answers 16 MiB. */
function setup() {
  const gate = deferred();
  const started = deferred();
  const server = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
  const cancelled = (signal: AbortSignal) =>
    new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
  server.tool("wait", {
    description: "waits for the gate",
    run: async (_a, ctx) => {
      started.resolve();
      await Promise.race([gate.promise, cancelled(ctx.signal)]);
      return "waited";
    },
  });
  server.tool("chatty", {
    description: "logs, then runs until cancelled",
    run: async (_a, ctx) => {
      ctx.progress(1);
      started.resolve();
      await cancelled(ctx.signal);
      return "never seen";
    },
  });
  server.tool("big", { description: "a large answer", run: () => "x".repeat(BIG) });
  return { server, gate, started };
}

/** A 2026-07-28 request's headers and body. */
function modernRequest(method: string, params: object, id: number | string, extra: object = {}) {
  const headers: { [k: string]: string } = {
    ...POST_HEADERS,
    "mcp-protocol-version": V,
    "mcp-method": method,
  };
  delete headers.host;
  const name = (params as { name?: unknown }).name;
  if (typeof name === "string") headers["mcp-name"] = name;
  return {
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: { _meta: { ...meta(), ...extra }, ...params },
    }),
  };
}

async function started(options: Parameters<typeof serve>[1] = { port: 0 }) {
  const s = setup();
  const node = await serve(s.server, options);
  nodes.push(node);
  return { ...s, node };
}

/** A request with node:http (an agent of one's own): status, the headers a retry reads, and the body. */
function send(url: string, init: { agent?: Agent; headers?: object; body?: string; method?: string }) {
  type Got = { status: number; retryAfter: unknown; connection: unknown; body: unknown };
  return new Promise<Got & { allowOrigin?: unknown; expose?: unknown }>((resolve, reject) => {
    const req = httpRequest(
      url,
      { agent: init.agent, method: init.method ?? "POST", headers: init.headers as never },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () =>
          resolve({
            status: res.statusCode!,
            retryAfter: res.headers["retry-after"],
            connection: res.headers.connection,
            body: text === "" ? "" : JSON.parse(text),
            ...(res.headers["access-control-allow-origin"]
              ? {
                  allowOrigin: res.headers["access-control-allow-origin"],
                  expose: res.headers["access-control-expose-headers"],
                }
              : {}),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}

describe("picomcp/node close({ graceMs }) on the wire", () => {
  it("a request on an idle kept-alive connection right after the drain begins gets 503 + Retry-After, never a reset", async () => {
    const { node, gate, started: running } = await started();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const base = node.url.replace(/\/mcp$/, "");
    expect((await send(`${base}/healthz`, { agent, method: "GET" })).status).toBe(200);
    await expect.poll(() => Object.values(agent.freeSockets).flat().length).toBe(1);
    // a request in flight keeps the drain going
    const w = modernRequest("tools/call", { name: "wait", arguments: {} }, 1);
    const inFlight = fetch(node.url, { method: "POST", ...w });
    await running.promise;
    const closed = node.close({ graceMs: 30_000 });
    const ping = modernRequest("ping", {}, 2);
    const refused = await send(node.url, { agent, ...ping });
    expect(refused).toEqual({ status: 503, retryAfter: "1", connection: "close", body: DRAINING });
    gate.resolve();
    expect((await inFlight).status).toBe(200);
    await closed;
    agent.destroy();
  });

  it("an answer still leaving for a slow reader is written whole before its connection closes", async () => {
    const { node } = await started();
    const port = Number(new URL(node.url).port);
    const { headers, body } = modernRequest("tools/call", { name: "big", arguments: {} }, 1);
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const first = deferred();
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (chunks.length === 1) {
        socket.pause();
        first.resolve();
      }
    });
    const ended = once(socket, "close");
    const lines = Object.entries({ ...headers, "content-length": String(Buffer.byteLength(body)) });
    socket.write(
      `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`,
    );
    await first.promise;
    const closed = node.close({ graceMs: 30_000 });
    // the drain is over (nothing runs): what comes next is the wait for the answer's bytes
    await node.handler.drain();
    socket.resume();
    await ended;
    const all = Buffer.concat(chunks);
    const split = all.indexOf("\r\n\r\n");
    const head = all.subarray(0, split).toString();
    const length = Number(/content-length: (\d+)/i.exec(head)![1]);
    expect(length).toBeGreaterThan(BIG);
    expect(all.length - split - 4).toBe(length);
    await closed;
  });

  it("graceMs 0 cuts at once: a 2026-07-28 request that streams gets the cut error with its id as its last event", async () => {
    const { node, started: running } = await started();
    const c = modernRequest("tools/call", { name: "chatty", arguments: {} }, "c1", { progressToken: 1 });
    const res = await fetch(node.url, { method: "POST", ...c });
    expect(res.status).toBe(200);
    const events = readEvents(res, Number.POSITIVE_INFINITY, 10_000);
    await running.promise;
    await node.close({ graceMs: 0 });
    const messages = messagesOf(await events);
    expect(messages.map((m) => m.method ?? m.id)).toEqual(["notifications/progress", "c1"]);
    expect(messages[1]).toEqual({ jsonrpc: "2.0", id: "c1", error: { code: -32603, message: CUT } });
  });

  it("a graceMs that is not a non-negative integer is refused before anything closes", async () => {
    const { node } = await started();
    await expect(node.close({ graceMs: -1 })).rejects.toThrow("graceMs must be a non-negative integer");
    expect(node.handler.draining).toBe(false);
    expect((await send(node.url.replace(/\/mcp$/, "/readyz"), { method: "GET" })).status).toBe(200);
  });

  it("a listen whose body was still arriving when the drain began ends at once with its final result", async () => {
    const { node } = await started();
    const { headers, body } = modernRequest(
      "subscriptions/listen",
      { notifications: { toolsListChanged: true } },
      "L",
    );
    const arrived = once(node.server, "request");
    const req = httpRequest(node.url, {
      method: "POST",
      headers: { ...headers, "content-length": Buffer.byteLength(body) },
    });
    const answered = once(req, "response") as Promise<[IncomingMessage]>;
    req.write(body.slice(0, 10));
    await arrived;
    const closed = node.close({ graceMs: 60_000 });
    req.end(body.slice(10));
    const [res] = await answered;
    expect(res.statusCode).toBe(200);
    const sse = new Response(Readable.toWeb(res) as ReadableStream);
    const sub = { "io.modelcontextprotocol/subscriptionId": "L" };
    expect(messagesOf(await readEvents(sse, Number.POSITIVE_INFINITY, 60_000)).at(-1)).toEqual({
      jsonrpc: "2.0",
      id: "L",
      result: { resultType: "complete", _meta: { ...SERVER_META, ...sub } },
    });
    await closed;
  }, 10_000);

  it("a GET stream that opens once the drain began (its credentials were still being checked) closes at once with a retry hint", async () => {
    const checking = deferred();
    const checked = deferred();
    const s = setup();
    const node = await serve(s.server, {
      port: 0,
      retryMs: 250,
      authenticate: async (request) => {
        if (request.method === "GET") {
          checking.resolve();
          await checked.promise;
        }
        return { token: "t", clientId: "c", scopes: [] };
      },
    });
    nodes.push(node);
    const init = await fetch(node.url, {
      method: "POST",
      headers: { accept: POST_HEADERS.accept, "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } },
      }),
    });
    const sid = init.headers.get("mcp-session-id")!;
    const get = fetch(node.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
    });
    await checking.promise;
    const closed = node.close({ graceMs: 60_000 });
    checked.resolve();
    const res = await get;
    expect(res.status).toBe(200);
    const got = await readEvents(res, Number.POSITIVE_INFINITY, 60_000);
    expect(got.at(-1)).toEqual({ retry: 250, data: "" });
    await closed;
  }, 10_000);

  it("the drain's 503 carries the CORS headers of an allowed origin", async () => {
    const {
      node,
      gate,
      started: running,
    } = await started({
      port: 0,
      allowedOrigins: ["http://app.example"],
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await send(node.url.replace(/\/mcp$/, "/healthz"), { agent, method: "GET" })).status).toBe(200);
    await expect.poll(() => Object.values(agent.freeSockets).flat().length).toBe(1);
    const w = modernRequest("tools/call", { name: "wait", arguments: {} }, 1);
    const inFlight = fetch(node.url, { method: "POST", ...w });
    await running.promise;
    const closed = node.close({ graceMs: 30_000 });
    const ping = modernRequest("ping", {}, 2);
    const res = await send(node.url, {
      agent,
      headers: { ...ping.headers, origin: "http://app.example" },
      body: ping.body,
    });
    expect([res.status, res.allowOrigin, res.body]).toEqual([503, "http://app.example", DRAINING]);
    expect(String(res.expose).toLowerCase()).toContain("retry-after");
    gate.resolve();
    await (await inFlight).text();
    await closed;
    agent.destroy();
  });
});

describe("handler.drain(): requests cut past the grace", () => {
  it("a 2025 request whose answer streams gets the cut error with its id as its stream's last event", async () => {
    const { server, started: running } = setup();
    const handler = createHttpHandler(server, { eventStore: new MemoryEventStore() });
    handlers.push(handler);
    const sid = await initialize(handler);
    const chatty = {
      ...call(7, "chatty"),
      params: { name: "chatty", arguments: {}, _meta: { progressToken: 1 } },
    };
    const res = await post(handler, chatty, { "mcp-session-id": sid });
    expect(res.status).toBe(200);
    const events = readEvents(res, Number.POSITIVE_INFINITY, 10_000);
    await running.promise;
    await handler.drain({ graceMs: 0 });
    const got = await events;
    expect(got.map((e) => e.id?.replace(/^.*\./, "."))).toEqual([".0", ".1", ".2"]);
    expect(messagesOf(got)).toEqual([
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } },
      { jsonrpc: "2.0", id: 7, error: { code: -32603, message: CUT } },
    ]);
  });

  it("a 2025-03-26 batch cut past the grace is answered for every one of its requests", async () => {
    const { server, started: running } = setup();
    const handler = createHttpHandler(server);
    handlers.push(handler);
    const sid = await initialize(handler, "2025-03-26");
    const inFlight = post(handler, [call(1, "wait"), call(2, "wait")], { "mcp-session-id": sid });
    await running.promise;
    await handler.drain({ graceMs: 0 });
    const res = await inFlight;
    const error = { code: -32603, message: CUT };
    expect([res.status, await res.json()]).toEqual([
      503,
      [
        { jsonrpc: "2.0", id: 1, error },
        { jsonrpc: "2.0", id: 2, error },
      ],
    ]);
  });
});
