// An application's extension has the built-ins' power: caching hints, personal results, request
// slots shared by a wrapper and its method, notifications on the request's stream; the same wire JSON.
import { describe, expect, it } from "vitest";
import { type Context, extendContext, McpServer, requestSlot } from "../../src/index.js";
import { rawPeer } from "../helpers.js";
import { modernPeer, SERVER_META } from "../modern-helpers.js";

const STARTED = requestSlot<number>("example/started");
const STEPS = requestSlot("example/steps", () => [] as string[]);

/** A server with one built-in of each kind and an application's extension doing the same things. */
function serverWithApp() {
  const s = new McpServer({ name: "t", version: "1.0.0" });
  s.resource("test://open", { cache: { ttlMs: 60_000, scope: "public" }, read: () => "open" });
  s.resource("test://mine", {
    cache: { ttlMs: 5000, scope: "public" },
    scopes: ["notes:read"],
    read: () => "mine",
  });
  let kept: Context | undefined;
  s.use({
    id: "example/weather",
    methods: {
      "weather/get": {
        run: (_p, ctx) => {
          ctx.cache({ ttlMs: 60_000, scope: "public" });
          ctx.get(STEPS).push("method");
          ctx.notify("notifications/weather", { step: 1 });
          kept = ctx;
          return { temp: 20, steps: ctx.get(STEPS), started: ctx.get(STARTED) ?? null };
        },
      },
      "weather/mine": {
        run: (_p, ctx) => {
          ctx.cache({ ttlMs: 5000, scope: "public" });
          ctx.personal();
          return { who: ctx.caller };
        },
      },
      "weather/plain": { run: (_p, ctx) => ({ started: ctx.get(STARTED) ?? null, steps: ctx.get(STEPS) }) },
    },
    wrap: {
      "weather/get": async (_p, ctx, next) => {
        ctx.set(STARTED, 42);
        ctx.get(STEPS).push("wrapper");
        // a view handed on keeps the request's own state: slots, hints and stream
        return next(extendContext(ctx, { units: "C" }));
      },
    },
  });
  return { s, kept: () => kept };
}

const auth = { subject: "alice", scopes: ["notes:read"] };

describe("an application's extension on the public seam, 2026-07-28", () => {
  it("gives its result the caching hint, as a built-in's cacheable result carries it", async () => {
    const { s } = serverWithApp();
    const p = modernPeer(s, auth);
    const app = await p.request("weather/get");
    expect(app.answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resultType: "complete",
        temp: 20,
        steps: ["wrapper", "method"],
        started: 42,
        ttlMs: 60_000,
        cacheScope: "public",
        _meta: SERVER_META,
      },
    });
    const builtIn = await p.request("resources/read", { uri: "test://open" });
    expect([builtIn.answer.result.ttlMs, builtIn.answer.result.cacheScope]).toEqual([60_000, "public"]);
  });

  it("keeps a personal result private, as a built-in keeps a scoped read", async () => {
    const { s } = serverWithApp();
    const p = modernPeer(s, auth);
    const app = await p.request("weather/mine");
    expect(app.answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resultType: "complete",
        who: "principal:user::alice",
        ttlMs: 5000,
        cacheScope: "private",
        _meta: SERVER_META,
      },
    });
    const builtIn = await p.request("resources/read", { uri: "test://mine" });
    expect([builtIn.answer.result.ttlMs, builtIn.answer.result.cacheScope]).toEqual([5000, "private"]);
  });

  it("sends its notification on the request's stream while it is open, and drops one sent after the answer", async () => {
    const { s, kept } = serverWithApp();
    const p = modernPeer(s);
    const app = await p.request("weather/get");
    expect(app.stream).toEqual([{ jsonrpc: "2.0", method: "notifications/weather", params: { step: 1 } }]);
    kept()!.notify("notifications/weather", { step: 2 });
    expect(app.stream).toHaveLength(1);
    expect(p.sent).toEqual([]);
  });

  it("gives each request its own slot values, and none to a request whose wrapper set none", async () => {
    const { s } = serverWithApp();
    const p = modernPeer(s);
    await p.request("weather/get");
    const plain = await p.request("weather/plain");
    expect(plain.answer.result).toMatchObject({ started: null, steps: [] });
    const again = await p.request("weather/get");
    expect(again.answer.result.steps).toEqual(["wrapper", "method"]);
  });

  it("refuses a bad hint where it is given, as registration does", async () => {
    const errors: unknown[] = [];
    const s = new McpServer({ name: "t", version: "1.0.0", onError: (e) => void errors.push(e) });
    s.use({
      id: "example/bad",
      methods: { "bad/hint": { run: (_p, ctx) => ctx.cache({ ttlMs: -1 }) } },
    });
    const p = modernPeer(s);
    const r = await p.request("bad/hint");
    expect(r.answer.error).toEqual({ code: -32603, message: "Internal error" });
    expect(errors).toEqual([new RangeError("cache.ttlMs must be an integer >= 0")]);
  });

  it("does not take the server's cache option as its default: a hint without a scope stays private", async () => {
    // the server's option describes the results it builds; an extension's result may depend on the caller
    const s = new McpServer({ name: "t", version: "1.0.0", cache: { ttlMs: 5_000, scope: "public" } });
    s.use({
      id: "example/weather",
      methods: {
        "weather/get": {
          run: (_p, ctx) => {
            ctx.cache({ ttlMs: 60_000 });
            return { forecast: "sun" };
          },
        },
      },
    });
    const r = await modernPeer(s).request("weather/get");
    expect(r.answer.result).toEqual({
      forecast: "sun",
      resultType: "complete",
      ttlMs: 60_000,
      cacheScope: "private",
      _meta: SERVER_META,
    });
  });
});

describe("an application's extension on the public seam, initialize era", () => {
  it("sends no caching hint (the era has none), and the same slots and notifications", async () => {
    const { s } = serverWithApp();
    const p = rawPeer(s, auth);
    await p.initialize("2025-11-25");
    const answer = await p.send({ jsonrpc: "2.0", id: 1, method: "weather/get", params: {} });
    expect(answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { temp: 20, steps: ["wrapper", "method"], started: 42 },
    });
    expect(p.sent).toEqual([{ jsonrpc: "2.0", method: "notifications/weather", params: { step: 1 } }]);
    const mine = await p.send({ jsonrpc: "2.0", id: 2, method: "weather/mine", params: {} });
    expect(mine).toEqual({ jsonrpc: "2.0", id: 2, result: { who: "principal:user::alice" } });
  });
});
