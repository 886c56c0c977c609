import { describe, expect, it } from "vitest";
import { McpError, McpServer } from "../../src/index.js";
import { rawPeer } from "../helpers.js";
import { meta, modernPeer, SERVER_META, V } from "../modern-helpers.js";

const SUPPORTED = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

function server(options: object = {}) {
  const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {}, ...options });
  s.tool("echo", { description: "Echo", run: () => "hi" });
  s.tool("logs", {
    run: (_a, ctx) => {
      ctx.log("info", "info line");
      ctx.log("error", "error line");
      return "logged";
    },
  });
  s.resource("test://a", { name: "A", read: () => "a" });
  s.resource("test://gone", {
    read: () => {
      throw new McpError(-32002, "Resource not found: test://gone", { uri: "test://gone" });
    },
  });
  s.prompt("p", { description: "P", get: () => "text" });
  return s;
}

const CAPS = {
  completions: {},
  logging: {},
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  tools: { listChanged: true },
};

describe("2026-07-28 requests", () => {
  it("answers server/discover with versions, capabilities, caching and serverInfo", async () => {
    const p = modernPeer(server({ instructions: "Be brief" }));
    expect((await p.request("server/discover")).answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resultType: "complete",
        supportedVersions: SUPPORTED,
        capabilities: CAPS,
        instructions: "Be brief",
        ttlMs: 0,
        cacheScope: "private",
        _meta: SERVER_META,
      },
    });
  });

  it("rejects a request without its protocol version or capabilities with -32602", async () => {
    const p = modernPeer(server());
    const noVersion = await p.raw({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: { _meta: { "io.modelcontextprotocol/clientCapabilities": {} } },
    });
    expect(noVersion.answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32602,
        message: 'Invalid params: _meta must carry "io.modelcontextprotocol/protocolVersion"',
      },
    });
    const noCaps = await p.raw({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": V } },
    });
    expect(noCaps.answer).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32602,
        message:
          'Invalid params: _meta must carry "io.modelcontextprotocol/clientCapabilities" (an object; {} declares none)',
      },
    });
    // a transport that saw the 2026-07-28 header says so: no _meta at all is then -32602 too
    const bare = await p.raw({ jsonrpc: "2.0", id: 3, method: "tools/list" }, { stateless: true });
    expect(bare.answer.error.code).toBe(-32602);
    // a discover probe always gets a 2026-07-28 answer, never a legacy "initialize first"
    const probe = await p.raw({ jsonrpc: "2.0", id: 4, method: "server/discover" });
    expect(probe.answer.error.code).toBe(-32602);
  });

  it("answers an unsupported version with -32022 naming the supported ones", async () => {
    const p = modernPeer(server());
    const r = await p.raw({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/list",
      params: { _meta: { ...meta(), "io.modelcontextprotocol/protocolVersion": "v999" } },
    });
    expect(r.answer).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32022,
        message: "Unsupported protocol version: v999",
        data: { supported: SUPPORTED, requested: "v999" },
      },
    });
  });

  it("answers -32601 for the methods 2026-07-28 removed and for names of Object.prototype", async () => {
    const p = modernPeer(server());
    for (const method of [
      "ping",
      "initialize",
      "logging/setLevel",
      "resources/subscribe",
      "resources/unsubscribe",
      "constructor",
      "__proto__",
      "toString",
    ]) {
      const { answer } = await p.request(method, { level: "info", uri: "test://a" });
      expect(answer).toEqual({
        jsonrpc: "2.0",
        id: answer.id,
        error: { code: -32601, message: `Method not found: ${method}` },
      });
    }
    const legacy = rawPeer(server());
    await legacy.initialize();
    expect(await legacy.send({ jsonrpc: "2.0", id: 9, method: "constructor" })).toEqual({
      jsonrpc: "2.0",
      id: 9,
      error: { code: -32601, message: "Method not found: constructor" },
    });
  });

  it("gives modern results resultType, caching and serverInfo, and legacy results none of them", async () => {
    const s = server();
    const legacy = rawPeer(s);
    await legacy.initialize();
    const modern = modernPeer(s);
    const [m, l] = await Promise.all([
      modern.request("prompts/list"),
      legacy.send({ jsonrpc: "2.0", id: 5, method: "prompts/list" }),
    ]);
    expect(m.answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resultType: "complete",
        prompts: [{ name: "p", description: "P" }],
        ttlMs: 0,
        cacheScope: "private",
        _meta: SERVER_META,
      },
    });
    expect(l).toEqual({ jsonrpc: "2.0", id: 5, result: { prompts: [{ name: "p", description: "P" }] } });
    const call = await modern.request("tools/call", { name: "echo" });
    expect(call.answer).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { resultType: "complete", content: [{ type: "text", text: "hi" }], _meta: SERVER_META },
    });
    expect(
      await legacy.send({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "echo" } }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 6,
      result: { content: [{ type: "text", text: "hi" }] },
    });
    // an initialized connection stays in its era even when a message carries 2026-07-28 _meta
    const onLegacy = await legacy.send({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "echo", _meta: meta() },
    });
    expect(onLegacy).toEqual({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "hi" }] } });
  });

  it("serves modern requests on a connection that never initializes, and initialize then makes it legacy", async () => {
    const s = server();
    const p = rawPeer(s);
    const modern = await p.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", _meta: meta() },
    });
    expect(modern.result.resultType).toBe("complete");
    expect(p.connection.protocolVersion).toBeUndefined();
    expect(await p.send({ jsonrpc: "2.0", id: 2, method: "ping" })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: {},
    });
    await p.initialize();
    expect(p.connection.protocolVersion).toBe("2025-11-25");
  });

  it("answers a missing resource with -32602 and its uri, never -32002", async () => {
    const s = server();
    const p = modernPeer(s);
    expect((await p.request("resources/read", { uri: "test://nope" })).answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "Resource not found: test://nope", data: { uri: "test://nope" } },
    });
    expect((await p.request("resources/read", { uri: "test://gone" })).answer).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32602, message: "Resource not found: test://gone", data: { uri: "test://gone" } },
    });
    const legacy = rawPeer(s);
    await legacy.initialize();
    const l = await legacy.send({
      jsonrpc: "2.0",
      id: 3,
      method: "resources/read",
      params: { uri: "test://gone" },
    });
    expect(l.error.code).toBe(-32002);
  });

  it("sends log messages only when the request asked for a level, and only on its own stream", async () => {
    const p = modernPeer(server());
    const quiet = await p.request("tools/call", { name: "logs" });
    expect(quiet.stream).toEqual([]);
    const loud = await p.request(
      "tools/call",
      { name: "logs" },
      {},
      { "io.modelcontextprotocol/logLevel": "warning" },
    );
    expect(loud.stream).toEqual([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "error", data: "error line" } },
    ]);
    expect(p.sent).toEqual([]);
    const bad = await p.request(
      "tools/call",
      { name: "logs" },
      {},
      { "io.modelcontextprotocol/logLevel": "loud" },
    );
    expect(bad.answer.error).toEqual({
      code: -32602,
      message:
        "Invalid log level: use one of debug, info, notice, warning, error, critical, alert, emergency",
      data: { level: "loud" },
    });
  });

  it("completes an argument named like an Object.prototype member with no values", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    s.prompt("q", { args: [{ name: "constructor" }], get: () => "x" });
    const p = modernPeer(s);
    const r = await p.request("completion/complete", {
      ref: { type: "ref/prompt", name: "q" },
      argument: { name: "toString", value: "" },
    });
    expect(r.answer.result).toEqual({
      resultType: "complete",
      completion: { values: [] },
      _meta: SERVER_META,
    });
  });
});

describe("the completion context", () => {
  it("is the request's own context: a completer can log and read the chosen arguments", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    s.prompt("q", {
      args: [{ name: "a" }, { name: "b" }],
      complete: {
        b: (v, ctx) => {
          ctx.log("info", "completing");
          return [`${ctx.arguments.a}-${v}`];
        },
      },
      get: () => "x",
    });
    const p = rawPeer(s);
    await p.initialize();
    const r = await p.send({
      jsonrpc: "2.0",
      id: 1,
      method: "completion/complete",
      params: {
        ref: { type: "ref/prompt", name: "q" },
        argument: { name: "b", value: "v" },
        context: { arguments: { a: "A" } },
      },
    });
    expect(r).toEqual({ jsonrpc: "2.0", id: 1, result: { completion: { values: ["A-v"] } } });
    expect(p.sent).toEqual([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "completing" } },
    ]);
  });
});

describe("names from the wire", () => {
  it("never finds an argument in Object.prototype: a missing required 'constructor' is reported", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    s.prompt("q", { args: [{ name: "constructor", required: true }], get: () => "x" });
    const p = modernPeer(s);
    const r = await p.request("prompts/get", { name: "q", arguments: {} });
    expect(r.answer.error).toEqual({
      code: -32602,
      message: "Missing required argument for prompt q: constructor",
      data: { missing: ["constructor"] },
    });
  });
});

describe("2026-07-28 caching hints", () => {
  it("takes the server default, per-registration overrides, the shortest ttl and public only if all are", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", cache: { ttlMs: 60_000, scope: "public" } });
    s.tool("a", { run: () => "a" });
    s.tool("b", { cache: { ttlMs: 5000 }, run: () => "b" });
    s.resource("test://open", { cache: { ttlMs: 1000 }, read: () => "open" });
    s.resource("test://mine", { cache: { scope: "private" }, read: () => "mine" });
    s.prompt("p", { get: () => "p" });
    const p = modernPeer(s);
    const hint = (r: any) => [r.answer.result.ttlMs, r.answer.result.cacheScope];
    expect(hint(await p.request("server/discover"))).toEqual([60_000, "public"]);
    expect(hint(await p.request("tools/list"))).toEqual([5000, "public"]);
    expect(hint(await p.request("prompts/list"))).toEqual([60_000, "public"]);
    expect(hint(await p.request("resources/list"))).toEqual([1000, "private"]);
    expect(hint(await p.request("resources/templates/list"))).toEqual([60_000, "public"]);
    expect(hint(await p.request("resources/read", { uri: "test://open" }))).toEqual([1000, "public"]);
    expect(hint(await p.request("resources/read", { uri: "test://mine" }))).toEqual([60_000, "private"]);
    // a change of the registrations changes the list's hint
    s.tool("c", { cache: { scope: "private" }, run: () => "c" });
    expect(hint(await p.request("tools/list"))).toEqual([5000, "private"]);
    const call = await p.request("tools/call", { name: "a" });
    expect(call.answer.result.ttlMs).toBeUndefined();
  });

  it("rejects a bad hint at registration", () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    expect(() => s.tool("a", { cache: { ttlMs: -1 }, run: () => "a" })).toThrow(
      "cache.ttlMs must be an integer >= 0",
    );
    expect(() => s.tool("b", { cache: { scope: "shared" as "public" }, run: () => "b" })).toThrow(
      'cache.scope must be "public" or "private"',
    );
    expect(() => new McpServer({ name: "t", version: "1", cache: { ttlMs: 1.5 } })).toThrow(RangeError);
  });
});

describe("2026-07-28 answers through handleNow (a transport that writes answers itself)", () => {
  const call = (id: number, name: string, extra: object = {}) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, _meta: meta({ elicitation: {} }), ...extra },
  });

  function asking() {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    s.tool("now", { run: () => "now" });
    s.tool("ask", {
      run: async (_a, ctx) =>
        (
          await ctx.elicit(
            { message: "ok?", requestedSchema: { type: "object", properties: {} } },
            { key: "k" },
          )
        ).action,
    });
    return s;
  }

  it("answers a synchronous tool synchronously, and one that asks the client input_required through a promise", async () => {
    const s = asking();
    const c = s.connect({ send: () => {} });
    expect(s.handleNow(call(1, "now"), c)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { resultType: "complete", content: [{ type: "text", text: "now" }], _meta: SERVER_META },
    });
    const asked = s.handleNow(call(2, "ask"), c);
    expect(asked).toBeInstanceOf(Promise);
    expect(((await asked) as any).result.resultType).toBe("input_required");
  });

  it("opens a sealed requestState through a promise, and a malformed inputResponses is -32602 at once", async () => {
    const s = asking();
    const c = s.connect({ send: () => {} });
    const first = (await s.handleNow(call(1, "ask"), c)) as any;
    const retry = s.handleNow(
      call(2, "ask", {
        inputResponses: { k: { action: "accept", content: {} } },
        requestState: first.result.requestState,
      }),
      c,
    );
    expect(retry).toBeInstanceOf(Promise);
    expect(((await retry) as any).result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "accept" }],
      _meta: SERVER_META,
    });
    expect(s.handleNow(call(3, "ask", { inputResponses: [1] }), c)).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32602, message: "Invalid params: inputResponses must be an object" },
    });
  });

  it("handle still opens the round after a tick: a connection closed right after the call runs nothing", async () => {
    const s = asking();
    const c = s.connect({ send: () => {} });
    const answer = s.handle(call(1, "now"), c);
    c.close();
    expect(await answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32600, message: "Invalid Request: the connection is closed" },
    });
  });
});
