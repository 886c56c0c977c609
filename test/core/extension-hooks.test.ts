/**
 * The `change` and `sessionEnd` hooks of `Extension`, from an application's extension: what reaches a server
 * from its bus, and a long-lived request of its own ended with its final result.
 */
import { describe, expect, it } from "vitest";
import type { ChangeEvent, Context, Extension } from "../../src/index.js";
import { LocalBus, McpServer } from "../../src/index.js";
import { encodeMessage } from "../../src/jsonrpc.js";
import type { JsonRpcMessage } from "../../src/types.js";
import { rawPeer, tick } from "../helpers.js";
import { meta, SERVER_META } from "../modern-helpers.js";

const SUB = "io.modelcontextprotocol/subscriptionId";

function server(options: object = {}) {
  const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {}, ...options });
  s.tool("echo", { run: () => "hi" });
  s.resource("test://watched", { read: () => "w" });
  return s;
}

/** An application's extension that only watches: every change event it is told of. */
function watcher(id = "com.example/watch") {
  const seen: ChangeEvent[] = [];
  const ext: Extension = { id, change: (event) => void seen.push(event) };
  return { ext, seen };
}

/** Sends a 2026-07-28 request on its own stream: what the stream carries, and the handler's answer. */
function request(s: McpServer, id: number | string, method: string, params: object = {}) {
  const stream: unknown[] = [];
  const conn = s.connect({ send: () => {} });
  const answer = s
    .handle({ jsonrpc: "2.0", id, method, params: { _meta: meta(), ...params } }, conn, {
      send: (m: JsonRpcMessage) => void stream.push(JSON.parse(encodeMessage(m))),
    })
    .then((a) => (a === undefined ? undefined : JSON.parse(encodeMessage(a))));
  return { stream, answer, conn };
}

describe("Extension.change", () => {
  it("an application's hook sees every change event of its server: resource updates, list changes", async () => {
    const s = server();
    await tick(); // the registrations above are published
    const w = watcher();
    s.use(w.ext);
    s.connect({ send: () => {} });
    s.resourceUpdated("test://watched");
    s.tool("added", { run: () => "x" });
    await tick();
    expect(w.seen).toEqual([
      { type: "resource_updated", uri: "test://watched" },
      { type: "list_changed", kind: "tools" },
    ]);
  });

  it("hears list changes while no client is connected, and a session opened later is not told of them", async () => {
    const s = server();
    const w = watcher();
    s.use(w.ext);
    const bus = new LocalBus();
    const other = server({ bus });
    const shared = server({ bus });
    await tick();
    const o = watcher("com.example/other");
    other.use(o.ext);
    s.tool("added", { run: () => "x" });
    s.prompt("p", { get: () => "p" });
    shared.tool("added", { run: () => "x" });
    await tick();
    expect(w.seen).toEqual([
      { type: "list_changed", kind: "tools" },
      { type: "list_changed", kind: "resources" },
      { type: "list_changed", kind: "tools" },
      { type: "list_changed", kind: "prompts" },
    ]);
    // another instance on the bus hears it too
    expect(o.seen).toEqual([{ type: "list_changed", kind: "tools" }]);
    s.tool("late", { run: () => "x" });
    const legacy = rawPeer(s);
    await legacy.initialize();
    await tick();
    expect(w.seen.at(-1)).toEqual({ type: "list_changed", kind: "tools" });
    expect(w.seen).toHaveLength(5);
    expect(legacy.sent).toEqual([]);
  });

  it("hears what another server publishes on the same bus, and nothing of a server on another bus", async () => {
    const bus = new LocalBus();
    const a = server({ bus });
    const b = server({ bus });
    const elsewhere = server();
    const w = watcher();
    b.use(w.ext);
    a.resourceUpdated("test://watched");
    elsewhere.resourceUpdated("test://other");
    expect(w.seen).toEqual([{ type: "resource_updated", uri: "test://watched" }]);
  });

  it("once removed, hears nothing; a hook that throws goes to onError and the others are still told", async () => {
    const errors: unknown[] = [];
    const s = server({ onError: (e: unknown, info: unknown) => void errors.push([String(e), info]) });
    const legacy = rawPeer(s);
    await legacy.initialize();
    await legacy.send({
      jsonrpc: "2.0",
      id: 1,
      method: "resources/subscribe",
      params: { uri: "test://watched" },
    });
    s.use({
      id: "com.example/broken",
      change: () => {
        throw new Error("broken hook");
      },
    });
    const w = watcher();
    const registration = s.use(w.ext);
    s.resourceUpdated("test://watched");
    registration.remove();
    s.resourceUpdated("test://watched");
    expect(w.seen).toEqual([{ type: "resource_updated", uri: "test://watched" }]);
    expect(errors).toEqual([
      ["Error: broken hook", { method: "change", requestId: "hook", name: "com.example/broken" }],
      ["Error: broken hook", { method: "change", requestId: "hook", name: "com.example/broken" }],
    ]);
    // the session's subscription is delivered by the subscriptions extension's hook, whatever the others do
    const updated = {
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "test://watched" },
    };
    expect(legacy.sent).toEqual([updated, updated]);
  });

  it("refuses a hook that is not a function, by name", () => {
    const s = server();
    expect(() => s.use({ id: "com.example/bad", change: "no" } as unknown as Extension)).toThrow(
      "The change hook of com.example/bad must be a function",
    );
  });

  it("nothing extra reaches anyone: an unsubscribed session, a listen of other kinds, another request", async () => {
    const s = server();
    await tick();
    const w = watcher();
    s.use(w.ext);
    const legacy = rawPeer(s);
    await legacy.initialize();
    const listen = request(s, "L", "subscriptions/listen", { notifications: { promptsListChanged: true } });
    const call = request(s, 2, "tools/call", { name: "echo" });
    expect((await call.answer).result.content).toEqual([{ type: "text", text: "hi" }]);
    s.resourceUpdated("test://watched");
    await tick();
    expect(w.seen).toHaveLength(1);
    expect(legacy.sent).toEqual([]);
    // no prompts: the listen honours nothing of what it asked, and hears nothing after its acknowledgement
    expect(listen.stream).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { _meta: { [SUB]: "L" }, notifications: {} },
      },
    ]);
    expect(call.stream).toEqual([]);
    s.close();
  });
});

describe("Extension.sessionEnd and ctx.end: a long-lived request of an application's own", () => {
  /** `feed/follow` streams each resource update on its request, and ends with a count when the server ends it. */
  function feed() {
    const open = new Map<string, Set<{ ctx: Context; sent: number }>>();
    const ext: Extension = {
      id: "com.example/feed",
      change: (event) => {
        if (event.type !== "resource_updated") return;
        for (const follows of open.values())
          for (const f of follows) {
            f.sent++;
            f.ctx.notify("notifications/feed/updated", { uri: event.uri, caller: f.ctx.caller });
          }
      },
      sessionEnd: ({ sessionId }) => {
        for (const f of open.get(sessionId) ?? []) f.ctx.end({ sent: f.sent });
      },
      methods: {
        "feed/follow": {
          era: "stateless",
          run: async (_p, ctx) => {
            const follow = { ctx, sent: 0 };
            const mine = open.get(ctx.sessionId) ?? new Set();
            open.set(ctx.sessionId, mine.add(follow));
            await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
            mine.delete(follow);
            return { never: "sent" };
          },
        },
      },
    };
    return ext;
  }

  it("server.close(): the request is answered on its stream with the result end gave, shaped for its revision", async () => {
    const s = server();
    s.use(feed());
    const f = request(s, "F", "feed/follow");
    s.resourceUpdated("test://watched");
    s.close();
    expect(await f.answer).toBeUndefined();
    expect(f.stream).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/feed/updated",
        params: { uri: "test://watched", caller: "anonymous" },
      },
      { jsonrpc: "2.0", id: "F", result: { resultType: "complete", sent: 1, _meta: SERVER_META } },
    ]);
  });

  it("a sessionEnd hook that throws goes to onError; the others still end their requests, and the server closes", async () => {
    const errors: unknown[] = [];
    const s = server({ onError: (e: unknown, info: unknown) => void errors.push([String(e), info]) });
    s.use({
      id: "com.example/broken",
      sessionEnd: () => {
        throw new Error("broken end");
      },
    });
    s.use(feed());
    const f = request(s, "F", "feed/follow");
    s.close();
    expect(f.conn.closed).toBe(true);
    expect(f.stream).toEqual([
      { jsonrpc: "2.0", id: "F", result: { resultType: "complete", sent: 0, _meta: SERVER_META } },
    ]);
    expect(errors).toEqual([
      ["Error: broken end", { method: "sessionEnd", requestId: "hook", name: "com.example/broken" }],
    ]);
  });

  it("server.endGracefully(connection) ends that connection's requests only; cancelled ones are never answered", async () => {
    const s = server();
    s.use(feed());
    const a = request(s, "A", "feed/follow");
    const b = request(s, "B", "feed/follow");
    s.endGracefully(a.conn);
    expect(await a.answer).toBeUndefined();
    expect(a.stream).toEqual([
      { jsonrpc: "2.0", id: "A", result: { resultType: "complete", sent: 0, _meta: SERVER_META } },
    ]);
    expect(b.stream).toEqual([]);
    s.resourceUpdated("test://watched");
    expect(a.stream).toHaveLength(1);
    expect(b.stream).toHaveLength(1);
    await s.handle({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "B" } }, b.conn);
    expect(await b.answer).toBeUndefined();
    s.endGracefully(b.conn);
    expect(b.stream).toHaveLength(1);
  });
});
