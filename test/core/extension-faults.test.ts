/**
 * What an application's extension may get wrong, and what the client and `onError` get then: a
 * method whose result is not an object, an async notification handler or hook that rejects, a
 * method that asks the client without `input`, a bad caching hint; exact wire JSON in both eras.
 */
import { describe, expect, it } from "vitest";
import { type Extension, McpServer } from "../../src/index.js";
import { rawPeer, tick, unhandledDuring } from "../helpers.js";
import { modernPeer, SERVER_META } from "../modern-helpers.js";

const INTERNAL = { code: -32603, message: "Internal error" };

function server() {
  const errors: unknown[][] = [];
  const s = new McpServer({
    name: "t",
    version: "1.0.0",
    onError: (error, info) => void errors.push([String(error), info]),
  });
  return { s, errors };
}

/** Methods that return what is not a result: nothing, a string, an array, null; and one that does it late. */
const careless: Extension = {
  id: "com.example/careless",
  methods: {
    "careless/nothing": { run: () => undefined },
    "careless/text": { run: () => "hi" },
    "careless/list": { run: () => [1, 2] },
    "careless/null": { run: () => null },
    "careless/later": { run: async () => undefined },
    "careless/fine": { run: () => ({ ok: true }) },
  },
};

const WHAT = {
  "careless/nothing": "undefined",
  "careless/text": "string",
  "careless/list": "an array",
  "careless/null": "null",
  "careless/later": "undefined",
};

describe("a method's result must be an object", () => {
  it("in a session: -32603 to the client, onError names the method and what it returned", async () => {
    const { s, errors } = server();
    s.use(careless);
    const a = rawPeer(s);
    await a.initialize();
    let id = 1;
    for (const [method, what] of Object.entries(WHAT)) {
      const n = id++;
      expect(await a.send({ jsonrpc: "2.0", id: n, method })).toEqual({
        jsonrpc: "2.0",
        id: n,
        error: INTERNAL,
      });
      expect(errors.shift()).toEqual([
        `TypeError: ${method} returned ${what}: a method's result must be an object`,
        { method, requestId: n },
      ]);
    }
    expect(await a.send({ jsonrpc: "2.0", id: 9, method: "careless/fine" })).toEqual({
      jsonrpc: "2.0",
      id: 9,
      result: { ok: true },
    });
    expect(errors).toEqual([]);
  });

  it("in 2026-07-28: handle resolves with -32603 (it never rejects), nothing is spread into a result", async () => {
    const { s, errors } = server();
    s.use(careless);
    const p = modernPeer(s);
    for (const [method, what] of Object.entries(WHAT)) {
      const { answer } = await p.request(method);
      expect(answer).toEqual({ jsonrpc: "2.0", id: answer.id, error: INTERNAL });
      expect(errors.shift()).toEqual([
        `TypeError: ${method} returned ${what}: a method's result must be an object`,
        { method, requestId: answer.id },
      ]);
    }
    const fine = await p.request("careless/fine");
    expect(fine.answer.result).toEqual({ resultType: "complete", ok: true, _meta: SERVER_META });
    expect(errors).toEqual([]);
  });

  it("a long-lived request that ctx.end answered may return nothing: it is answered once, no error", async () => {
    const { s, errors } = server();
    s.use({
      id: "com.example/ends",
      methods: {
        "ends/now": {
          run: async (_p, ctx) => {
            ctx.end({ done: true });
            return undefined;
          },
        },
      },
    });
    const a = rawPeer(s);
    await a.initialize();
    expect(await a.send({ jsonrpc: "2.0", id: 1, method: "ends/now" })).toBeUndefined();
    expect(a.sent).toEqual([{ jsonrpc: "2.0", id: 1, result: { done: true } }]);
    const p = modernPeer(s);
    const modern = await p.request("ends/now");
    expect(modern.answer).toBeUndefined();
    expect(modern.stream).toEqual([
      { jsonrpc: "2.0", id: 1, result: { resultType: "complete", done: true, _meta: SERVER_META } },
    ]);
    expect(errors).toEqual([]);
  });
});

describe("async notification handlers and hooks that reject", () => {
  it("reach onError as a throw does; no unhandled rejection, and other clients are served", async () => {
    const { s, errors } = server();
    s.resource("test://r", { read: () => "r" });
    await tick();
    s.use({
      id: "com.example/async",
      notifications: {
        "async/poke": async () => {
          throw new Error("poke failed");
        },
      },
      change: async () => {
        throw new Error("change failed");
      },
      sessionEnd: async ({ sessionId }) => {
        throw new Error(`end of ${sessionId} failed`);
      },
      methods: { "async/ping": { run: () => ({ pong: true }) } },
    });
    const a = rawPeer(s);
    const b = rawPeer(s);
    const unhandled = await unhandledDuring(async () => {
      await a.initialize();
      await b.initialize();
      expect(await a.send({ jsonrpc: "2.0", method: "async/poke" })).toBeUndefined();
      s.resourceUpdated("test://r");
      s.endGracefully(a.connection);
      await expect.poll(() => errors.length).toBe(3);
    });
    expect(unhandled).toEqual([]);
    expect(errors).toEqual([
      ["Error: poke failed", { method: "async/poke", requestId: "notification" }],
      ["Error: change failed", { method: "change", requestId: "hook", name: "com.example/async" }],
      [
        `Error: end of ${a.connection.id} failed`,
        { method: "sessionEnd", requestId: "hook", name: "com.example/async" },
      ],
    ]);
    expect(await b.send({ jsonrpc: "2.0", id: 1, method: "async/ping" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { pong: true },
    });
  });
});

describe("asking the client in 2026-07-28", () => {
  const ELICIT = { elicitation: { form: {} } };
  const question = { message: "Name?", requestedSchema: { type: "object" as const, properties: {} } };

  it("a method without input: true is told that its extension must declare it, by name", async () => {
    const { s, errors } = server();
    s.use({
      id: "com.example/asks",
      methods: {
        "asks/without": { run: async (_p, ctx) => ({ answer: await ctx.elicit(question) }) },
        "asks/with": { input: true, run: async (_p, ctx) => ({ answer: await ctx.elicit(question) }) },
      },
    });
    const p = modernPeer(s);
    const without = await p.request("asks/without", {}, ELICIT);
    expect(without.answer).toEqual({ jsonrpc: "2.0", id: 1, error: INTERNAL });
    expect(errors).toEqual([
      [
        "Error: elicitation/create: asks/without cannot ask the client in 2026-07-28: its extension must declare input: true on it",
        { method: "asks/without", requestId: 1 },
      ],
    ]);
    const withInput = await p.request("asks/with", {}, ELICIT);
    expect(withInput.answer.result.resultType).toBe("input_required");
  });
});

describe("clientMustDeclare", () => {
  it("has effect only for an extension with settings: one without is never refused for it", async () => {
    const { s } = server();
    s.use({
      id: "com.example/plain",
      methods: { "plain/get": { clientMustDeclare: true, run: () => ({ ok: true }) } },
    });
    s.use({
      id: "com.example/declared",
      settings: () => ({}),
      methods: { "declared/get": { clientMustDeclare: true, run: () => ({ ok: true }) } },
    });
    const p = modernPeer(s);
    expect((await p.request("plain/get")).answer.result.ok).toBe(true);
    expect((await p.request("declared/get")).answer.error).toEqual({
      code: -32021,
      message: "Missing required client capability: extensions",
      data: { requiredCapabilities: { extensions: { "com.example/declared": {} } } },
    });
  });
});

describe("ctx.cache", () => {
  it("refuses a bad hint in both eras alike; a session's result carries no hint", async () => {
    const { s, errors } = server();
    s.use({
      id: "com.example/cached",
      methods: {
        "cached/bad": {
          run: (_p, ctx) => {
            ctx.cache({ ttlMs: -1 });
            return { ok: true };
          },
        },
        "cached/scope": {
          run: (_p, ctx) => {
            ctx.cache({ scope: "everyone" as never });
            return { ok: true };
          },
        },
        "cached/good": {
          run: (_p, ctx) => {
            ctx.cache({ ttlMs: 1000, scope: "public" });
            return { ok: true };
          },
        },
      },
    });
    const a = rawPeer(s);
    await a.initialize();
    const p = modernPeer(s);
    const refusals = [
      ["cached/bad", "RangeError: cache.ttlMs must be an integer >= 0"],
      ["cached/scope", 'TypeError: cache.scope must be "public" or "private"'],
    ];
    for (const [method, error] of refusals) {
      expect(await a.send({ jsonrpc: "2.0", id: 1, method })).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: INTERNAL,
      });
      const modern = await p.request(method!);
      expect(modern.answer).toEqual({ jsonrpc: "2.0", id: modern.answer.id, error: INTERNAL });
      expect(errors.splice(0)).toEqual([
        [error, { method, requestId: 1 }],
        [error, { method, requestId: modern.answer.id }],
      ]);
    }
    expect(await a.send({ jsonrpc: "2.0", id: 2, method: "cached/good" })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { ok: true },
    });
    expect((await p.request("cached/good")).answer.result).toEqual({
      resultType: "complete",
      ok: true,
      ttlMs: 1000,
      cacheScope: "public",
      _meta: SERVER_META,
    });
  });
});
