// Draining a handler before its process goes away: new requests get 503 with Retry-After and
// Connection: close, requests in flight finish (or are cancelled past the grace period), GET streams
// close with a retry hint, listen streams end with their final result, running tasks finish or are
// failed at once; picomcp/node's close({ graceMs }) and its health and readiness paths.
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler, type HttpHandler } from "../../src/http/index.js";
import { type NodeServer, serve } from "../../src/http/node.js";
import { type Context, McpError, McpServer, MemoryTaskStore, type TaskStore } from "../../src/index.js";
import {
  call,
  initialize,
  messagesOf,
  POST_HEADERS,
  post,
  readEvents,
  request,
  URL_,
} from "../http-helpers.js";
import { meta, modernPeer, SERVER_META, V } from "../modern-helpers.js";

const TASKS = "io.modelcontextprotocol/tasks";
const WITH = { extensions: { [TASKS]: {} } };
const DRAINING = {
  jsonrpc: "2.0",
  error: {
    code: -32000,
    message:
      "Service Unavailable: this server is shutting down; retry the request (another instance serves it)",
  },
};

const CUT = "Service Unavailable: the server shut down before the request finished";

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

/** A server whose `wait` tool runs until the test opens its gate (or its signal aborts). */
function setup(options: { retryMs?: number; sessions?: false } = {}) {
  const gate = deferred();
  const started = deferred();
  const seen = { aborted: 0, taskAborted: 0 };
  const server = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
  server.tool("wait", {
    description: "waits for the gate",
    run: async (_a, ctx) => {
      started.resolve();
      const aborted = new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r()));
      await Promise.race([gate.promise, aborted]);
      if (ctx.signal.aborted) seen.aborted++;
      return "waited";
    },
  });
  server.tool("job", {
    description: "a task that ends when the gate opens",
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      await gate.promise;
      return "job done";
    },
  });
  server.tool("forever", {
    description: "a task that ends only when aborted",
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r()));
      seen.taskAborted++;
      return "never seen";
    },
  });
  server.resource("note://a", { description: "a note", read: () => "a" });
  const handler = createHttpHandler(server, options);
  handlers.push(handler);
  return { server, handler, gate, started, seen };
}

/** A 2026-07-28 POST with the headers a conforming client sends. */
function modern(
  handler: HttpHandler,
  method: string,
  params: object,
  id: number | string,
  caps: object = {},
) {
  const headers: { [k: string]: string } = {
    ...POST_HEADERS,
    "mcp-protocol-version": V,
    "mcp-method": method,
  };
  const name = (params as { name?: unknown }).name;
  if (typeof name === "string") headers["mcp-name"] = name;
  const body = { jsonrpc: "2.0", id, method, params: { _meta: meta(caps), ...params } };
  return handler(new Request(URL_, { method: "POST", headers, body: JSON.stringify(body) }));
}

async function refused(res: Response) {
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    connection: res.headers.get("connection"),
    body: await res.json(),
  };
}
const REFUSED = { status: 503, retryAfter: "1", connection: "close", body: DRAINING };

describe("handler.drain()", () => {
  it("refuses every new request with 503, Retry-After: 1, Connection: close and a JSON-RPC error", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    expect(handler.draining).toBe(false);
    const drained = handler.drain({ graceMs: 5000 });
    expect(handler.draining).toBe(true);
    expect(await refused(await post(handler, call(1, "wait")))).toEqual(REFUSED);
    expect(await refused(await post(handler, call(2, "wait"), { "mcp-session-id": sid }))).toEqual(REFUSED);
    const get = { accept: "text/event-stream", "mcp-session-id": sid };
    expect(await refused(await request(handler, "GET", get))).toEqual(REFUSED);
    expect(await refused(await modern(handler, "tools/list", {}, 3))).toEqual(REFUSED);
    // nothing in flight: it is over at once, and the same promise comes back
    expect(handler.drain()).toBe(drained);
    await drained;
    expect(handler.sessionCount).toBe(0);
  });

  it("lets a request in flight finish (its answer closes its connection), and resolves only after it", async () => {
    const { handler, gate, started, seen } = setup();
    const inFlight = modern(handler, "tools/call", { name: "wait", arguments: {} }, 1);
    await started.promise;
    let over = false;
    const drained = handler.drain({ graceMs: 10_000 }).then(() => (over = true));
    expect((await modern(handler, "tools/list", {}, 2)).status).toBe(503);
    expect(over).toBe(false);
    gate.resolve();
    const res = await inFlight;
    expect([res.status, res.headers.get("connection")]).toEqual([200, "close"]);
    expect((await res.json()).result.content).toEqual([{ type: "text", text: "waited" }]);
    await drained;
    expect(seen.aborted).toBe(0);
  });

  it("an answer a hook made (a Response) is told to close its connection too", async () => {
    const gate = deferred();
    const started = deferred();
    const server = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    server.tool("deny", {
      description: "refuses once the gate opens",
      run: async () => {
        started.resolve();
        await gate.promise;
        throw new McpError(-32003, "Forbidden");
      },
    });
    const handler = createHttpHandler(server, {
      errorStatus: (error) =>
        error.code === -32003 ? { status: 403, headers: { "x-why": "denied" } } : undefined,
    });
    handlers.push(handler);
    const inFlight = modern(handler, "tools/call", { name: "deny", arguments: {} }, 1);
    await started.promise;
    const drained = handler.drain({ graceMs: 10_000 });
    gate.resolve();
    const res = await inFlight;
    expect([res.status, res.headers.get("x-why"), res.headers.get("connection")]).toEqual([
      403,
      "denied",
      "close",
    ]);
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32003, message: "Forbidden" },
    });
    await drained;
  });

  it("past graceMs, a request still running is cancelled: its ctx.signal aborts", async () => {
    const { handler, started, seen } = setup();
    const sid = await initialize(handler);
    const inFlight = post(handler, call(7, "wait"), { "mcp-session-id": sid });
    await started.promise;
    await handler.drain({ graceMs: 30 });
    await expect.poll(() => seen.aborted).toBe(1);
    const res = await inFlight;
    expect([res.status, await res.json()]).toEqual([
      503,
      { jsonrpc: "2.0", id: 7, error: { code: -32603, message: CUT } },
    ]);
  });

  it("past graceMs, a 2026-07-28 request (no session) is cancelled too, and its client is told", async () => {
    const { handler, started, seen } = setup();
    const inFlight = modern(handler, "tools/call", { name: "wait", arguments: {} }, 1);
    await started.promise;
    await handler.drain({ graceMs: 30 });
    await expect.poll(() => seen.aborted).toBe(1);
    const res = await inFlight;
    // 503 without Retry-After: the request may have had effects, so it is not one to retry blindly
    expect([
      res.status,
      res.headers.get("retry-after"),
      res.headers.get("connection"),
      await res.json(),
    ]).toEqual([
      503,
      null,
      "close",
      {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -32603,
          message: "Service Unavailable: the server shut down before the request finished",
        },
      },
    ]);
  });

  it("past graceMs, a request of a handler without sessions is cancelled too, and told", async () => {
    const { handler, started, seen } = setup({ sessions: false });
    const inFlight = post(handler, call(4, "wait"));
    await started.promise;
    await handler.drain({ graceMs: 30 });
    await expect.poll(() => seen.aborted).toBe(1);
    const res = await inFlight;
    expect([
      res.status,
      res.headers.get("retry-after"),
      res.headers.get("connection"),
      await res.json(),
    ]).toEqual([503, null, "close", { jsonrpc: "2.0", id: 4, error: { code: -32603, message: CUT } }]);
  });

  it("a POST of a session with a request in flight here is still served (its answers to questions come here)", async () => {
    const { handler, started, gate } = setup();
    const sid = await initialize(handler);
    const inFlight = post(handler, call(1, "wait"), { "mcp-session-id": sid });
    await started.promise;
    const drained = handler.drain({ graceMs: 10_000 });
    const ping = await post(handler, { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": sid });
    expect([ping.status, ping.headers.get("connection"), await ping.json()]).toEqual([
      200,
      "close",
      { jsonrpc: "2.0", id: 2, result: {} },
    ]);
    // its GET is not an answer to anything: refused
    const get = { accept: "text/event-stream", "mcp-session-id": sid };
    expect(await refused(await request(handler, "GET", get))).toEqual(REFUSED);
    // another session has nothing in flight here: refused
    const other = await initialize(createHttpHandler(new McpServer({ name: "o", version: "1" })));
    expect((await post(handler, call(3, "wait"), { "mcp-session-id": other })).status).toBe(503);
    gate.resolve();
    await (await inFlight).text();
    await drained;
  });

  it("closes a GET stream with a retry hint after its last event id, so the client resumes elsewhere", async () => {
    const { server, handler } = setup({ retryMs: 250 });
    const sid = await initialize(handler);
    const get = await request(handler, "GET", {
      accept: "text/event-stream",
      "mcp-session-id": sid,
      "mcp-protocol-version": "2025-11-25",
    });
    expect(get.status).toBe(200);
    const events = readEvents(get, Number.POSITIVE_INFINITY, 5000);
    await post(
      handler,
      { jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "note://a" } },
      { "mcp-session-id": sid },
    );
    server.resourceUpdated("note://a");
    const drained = handler.drain({ graceMs: 5000 });
    const got = await events;
    // priming event (an id, empty data), the update with the next id, then a bare retry, and the end
    expect(got).toEqual([
      { id: expect.stringMatching(/\.0$/), retry: 250, data: "" },
      {
        id: expect.stringMatching(/\.1$/),
        data: JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/resources/updated",
          params: { uri: "note://a" },
        }),
      },
      { retry: 250, data: "" },
    ]);
    await drained;
  });

  it("ends a listen stream with its final result (resultType complete), then closes it", async () => {
    const { handler } = setup();
    const listen = await modern(
      handler,
      "subscriptions/listen",
      { notifications: { toolsListChanged: true } },
      "L",
    );
    expect(listen.status).toBe(200);
    const drained = handler.drain({ graceMs: 5000 });
    const sub = { "io.modelcontextprotocol/subscriptionId": "L" };
    expect(messagesOf(await readEvents(listen, Number.POSITIVE_INFINITY, 5000))).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { toolsListChanged: true }, _meta: sub },
      },
      { jsonrpc: "2.0", id: "L", result: { resultType: "complete", _meta: { ...SERVER_META, ...sub } } },
    ]);
    await drained;
  });

  it("ends an application's long-lived request through its extension's sessionEnd hook, with the result it gave", async () => {
    const { server, handler } = setup();
    const open = new Map<string, Context>();
    server.use({
      id: "com.example/follow",
      sessionEnd: ({ sessionId }) => open.get(sessionId)?.end({ followed: true }),
      methods: {
        "follow/start": {
          era: "stateless",
          run: async (_p, ctx) => {
            open.set(ctx.sessionId, ctx);
            ctx.notify("notifications/follow/started");
            await new Promise((r) => ctx.signal.addEventListener("abort", r, { once: true }));
            open.delete(ctx.sessionId);
            return { never: "sent" };
          },
        },
      },
    });
    const follow = await modern(handler, "follow/start", {}, "F");
    expect(follow.status).toBe(200);
    const drained = handler.drain({ graceMs: 5000 });
    expect(messagesOf(await readEvents(follow, Number.POSITIVE_INFINITY, 5000))).toEqual([
      { jsonrpc: "2.0", method: "notifications/follow/started" },
      { jsonrpc: "2.0", id: "F", result: { resultType: "complete", followed: true, _meta: SERVER_META } },
    ]);
    await drained;
    expect(open.size).toBe(0);
  });

  it("waits for a running task to end within graceMs; fails at once one still running past it", async () => {
    const { server, handler, gate, seen } = setup();
    const job = await modern(handler, "tools/call", { name: "job", arguments: {} }, 1, WITH);
    const forever = await modern(handler, "tools/call", { name: "forever", arguments: {} }, 2, WITH);
    const jobId = (await job.json()).result.taskId;
    const foreverId = (await forever.json()).result.taskId;
    let over = false;
    const drained = handler.drain({ graceMs: 200 }).then(() => (over = true));
    gate.resolve();
    await drained;
    expect(over).toBe(true);
    expect(seen.taskAborted).toBe(1);
    const peer = modernPeer(server);
    const get = async (taskId: string) => (await peer.request("tasks/get", { taskId }, WITH)).answer.result;
    expect(await get(jobId)).toMatchObject({ status: "completed" });
    expect(await get(foreverId)).toMatchObject({
      status: "failed",
      error: { code: -32603, message: "The server running the task went away" },
    });
  });

  it("a task store that cannot take the failures keeps the drain waiting one second more at most", async () => {
    const memory = new MemoryTaskStore();
    const store: TaskStore = {
      create: (t) => memory.create(t),
      get: (id) => memory.get(id),
      // the store is gone: a task's end never lands
      set: (t) => (t.status === "failed" ? new Promise(() => {}) : memory.set(t)),
    };
    const server = new McpServer({ name: "t", version: "1.0.0", onError: () => {}, tasks: { store } });
    server.tool("forever", {
      task: "optional",
      run: async (_a, ctx) => {
        await ctx.task();
        await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r()));
        return "never seen";
      },
    });
    const handler = createHttpHandler(server);
    handlers.push(handler);
    const started = await modern(handler, "tools/call", { name: "forever", arguments: {} }, 1, WITH);
    expect((await started.json()).result.resultType).toBe("task");
    await handler.drain({ graceMs: 20 });
    expect(handler.sessionCount).toBe(0);
  });

  it("graceMs must be a non-negative integer", () => {
    const { handler } = setup();
    expect(() => handler.drain({ graceMs: -1 })).toThrow("graceMs must be a non-negative integer");
  });
});

/** One GET over a fresh connection to `url`: its status and body. */
function getPath(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("picomcp/node: close({ graceMs }) and health", () => {
  it("answers /healthz and /readyz 200; /readyz 503 once the handler drains", async () => {
    const { server } = setup();
    const http = await serve(server, { port: 0 });
    nodes.push(http);
    const base = http.url.replace(/\/mcp$/, "");
    expect(await getPath(`${base}/healthz`)).toEqual({ status: 200, body: '{"status":"ok"}' });
    expect(await getPath(`${base}/readyz`)).toEqual({ status: 200, body: '{"status":"ok"}' });
    const drained = http.handler.drain({ graceMs: 5000 });
    expect(await getPath(`${base}/readyz`)).toEqual({ status: 503, body: '{"status":"draining"}' });
    expect(await getPath(`${base}/healthz`)).toEqual({ status: 200, body: '{"status":"ok"}' });
    await drained;
  });

  it("health: false serves neither path; other names can be given", async () => {
    const off = await serve(new McpServer({ name: "t", version: "1" }), { port: 0, health: false });
    nodes.push(off);
    expect((await getPath(off.url.replace(/\/mcp$/, "/healthz"))).status).toBe(404);
    const named = await serve(new McpServer({ name: "t", version: "1" }), {
      port: 0,
      health: { live: "/live", ready: "/ready" },
    });
    nodes.push(named);
    expect((await getPath(named.url.replace(/\/mcp$/, "/ready"))).status).toBe(200);
    expect((await getPath(named.url.replace(/\/mcp$/, "/readyz"))).status).toBe(404);
  });

  it("stops accepting, lets the request in flight finish, then closes", async () => {
    const { server, gate, started, seen } = setup();
    const http = await serve(server, { port: 0 });
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { _meta: meta(), name: "wait", arguments: {} },
    });
    const headers = {
      ...POST_HEADERS,
      "mcp-protocol-version": V,
      "mcp-method": "tools/call",
      "mcp-name": "wait",
    };
    delete (headers as { host?: string }).host;
    const inFlight = fetch(http.url, { method: "POST", headers, body });
    await started.promise;
    let over = false;
    const closed = http.close({ graceMs: 10_000 }).then(() => (over = true));
    // the listening socket is closed: a new connection is refused before any request is sent
    await expect(getPath(http.url.replace(/\/mcp$/, "/healthz"))).rejects.toMatchObject({
      code: "ECONNREFUSED",
    });
    expect(over).toBe(false);
    gate.resolve();
    const res = await inFlight;
    expect([res.status, res.headers.get("connection")]).toEqual([200, "close"]);
    expect((await res.json()).result.content).toEqual([{ type: "text", text: "waited" }]);
    await closed;
    expect(seen.aborted).toBe(0);
  });
});
