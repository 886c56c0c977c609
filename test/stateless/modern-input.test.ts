import { afterEach, describe, expect, it, vi } from "vitest";
import { McpServer } from "../../src/index.js";
import { rawPeer } from "../helpers.js";
import { modernPeer, SERVER_META } from "../modern-helpers.js";

const KEY_A = "a".repeat(32);
const KEY_B = "b".repeat(32);
const NAME = { type: "object" as const, properties: { name: { type: "string" } }, required: ["name"] };
const ELICIT = { elicitation: {} };
const INVALID = {
  code: -32602,
  message: "Invalid or expired requestState",
  data: { reason: "invalid_request_state" },
};

function server(options: object = {}) {
  const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {}, ...options });
  s.tool("greet", {
    input: { type: "object", properties: { lang: { type: "string" } } },
    run: async (_a, ctx) => {
      const r = await ctx.elicit({ message: "Name?", requestedSchema: NAME }, { key: "user_name" });
      return `Hello, ${r.content?.name}!`;
    },
  });
  s.tool("two_steps", {
    run: async (_a, ctx) => {
      if (ctx.requestState === undefined) ctx.setRequestState({ order: 42 });
      const a = await ctx.elicit({ message: "Name?", requestedSchema: NAME }, { key: "step1" });
      const b = await ctx.elicit({ message: "Again?", requestedSchema: NAME }, { key: "step2" });
      return `${a.content?.name}+${b.content?.name} order ${(ctx.requestState as { order: number }).order}`;
    },
  });
  s.tool("all_at_once", {
    run: async (_a, ctx) => {
      const [n, m, roots] = await Promise.all([
        ctx.elicit({ message: "Name?", requestedSchema: NAME }),
        ctx.sample({ messages: [{ role: "user", content: { type: "text", text: "Hi" } }], maxTokens: 5 }),
        ctx.roots(),
      ]);
      return `${n.content?.name} ${(m.content as { text: string }).text} ${roots.length}`;
    },
  });
  s.tool("awaits_one", {
    run: async (_a, ctx) => {
      const a = ctx.elicit({ message: "Name?", requestedSchema: NAME }, { key: "a" });
      const b = ctx.sample({ messages: [], maxTokens: 1 }, { key: "b" });
      return `${(await a).action} ${(await b).model}`;
    },
  });
  s.tool("needs_sampling", {
    run: async (_a, ctx) => (await ctx.sample({ messages: [], maxTokens: 1 })).model,
  });
  s.tool("needs_url", {
    run: async (_a, ctx) =>
      (await ctx.elicit({ mode: "url", message: "Log in", url: "https://x.test/login" })).action,
  });
  s.prompt("ask_prompt", {
    get: async (_a, ctx) => {
      const r = await ctx.elicit({ message: "Context?", requestedSchema: NAME }, { key: "ctx" });
      return `Context: ${r.content?.name}`;
    },
  });
  s.resource("test://asks", {
    read: async (_p, ctx) => (await ctx.roots({ key: "r" })).map((r) => r.uri).join(","),
  });
  s.prompt("completes", {
    args: [{ name: "x" }],
    complete: { x: async (_v, ctx) => [(await ctx.elicit({ message: "?", requestedSchema: NAME })).action] },
    get: () => "x",
  });
  return s;
}

const accept = (name: string) => ({ action: "accept", content: { name } });

afterEach(() => vi.restoreAllMocks());

describe("2026-07-28 input-required results", () => {
  it("reports no failure for a round that asks the client: onError hears nothing", async () => {
    const errors: unknown[] = [];
    const p = modernPeer(server({ onError: (e: unknown) => errors.push(e) }));
    const call = await p.request("tools/call", { name: "greet" }, ELICIT);
    expect(call.answer.result.resultType).toBe("input_required");
    const prompt = await p.request("prompts/get", { name: "ask_prompt" }, ELICIT);
    expect(prompt.answer.result.resultType).toBe("input_required");
    const read = await p.request("resources/read", { uri: "test://asks" }, { roots: {} });
    expect(read.answer.result.resultType).toBe("input_required");
    expect(errors).toEqual([]);
  });

  it("answers a call that needs input with input_required, then completes on the retry", async () => {
    const p = modernPeer(server());
    const first = await p.request("tools/call", { name: "greet" }, ELICIT);
    const state = first.answer.result.requestState;
    expect(first.answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resultType: "input_required",
        inputRequests: {
          user_name: { method: "elicitation/create", params: { message: "Name?", requestedSchema: NAME } },
        },
        requestState: state,
        _meta: SERVER_META,
      },
    });
    expect(state).toMatch(/^rs1\.[A-Za-z0-9_-]+$/);
    // never a request to the client, on any channel
    expect([...first.stream, ...p.sent]).toEqual([]);
    const retry = await p.request(
      "tools/call",
      { name: "greet", inputResponses: { user_name: accept("Ann"), extra: { x: 1 } }, requestState: state },
      ELICIT,
    );
    expect(retry.answer).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: {
        resultType: "complete",
        content: [{ type: "text", text: "Hello, Ann!" }],
        _meta: SERVER_META,
      },
    });
  });

  it("asks again for a missing or malformed answer instead of failing", async () => {
    const p = modernPeer(server());
    for (const inputResponses of [null, {}, { wrong_key: accept("Ann") }, { user_name: 12345 }]) {
      const r = await p.request("tools/call", { name: "greet", inputResponses }, ELICIT);
      expect(r.answer.result.resultType).toBe("input_required");
      expect(Object.keys(r.answer.result.inputRequests)).toEqual(["user_name"]);
    }
    const bad = await p.request("tools/call", { name: "greet", inputResponses: "yes" }, ELICIT);
    expect(bad.answer.error).toEqual({
      code: -32602,
      message: "Invalid params: inputResponses must be an object",
    });
  });

  it("carries earlier answers and the handler's own state across rounds", async () => {
    const p = modernPeer(server());
    const r1 = await p.request("tools/call", { name: "two_steps" }, ELICIT);
    expect(Object.keys(r1.answer.result.inputRequests)).toEqual(["step1"]);
    const r2 = await p.request(
      "tools/call",
      {
        name: "two_steps",
        inputResponses: { step1: accept("A") },
        requestState: r1.answer.result.requestState,
      },
      ELICIT,
    );
    expect(Object.keys(r2.answer.result.inputRequests)).toEqual(["step2"]);
    expect(r2.answer.result.requestState).not.toBe(r1.answer.result.requestState);
    // the client sends only this round's answer: step1 comes back from the sealed state
    const r3 = await p.request(
      "tools/call",
      {
        name: "two_steps",
        inputResponses: { step2: accept("B") },
        requestState: r2.answer.result.requestState,
      },
      ELICIT,
    );
    expect(r3.answer.result.content).toEqual([{ type: "text", text: "A+B order 42" }]);
  });

  it("collects parallel calls into one round with default keys", async () => {
    const p = modernPeer(server());
    const caps = { elicitation: {}, sampling: {}, roots: {} };
    const r1 = await p.request("tools/call", { name: "all_at_once" }, caps);
    expect(r1.answer.result.inputRequests).toEqual({
      "elicitation-1": { method: "elicitation/create", params: { message: "Name?", requestedSchema: NAME } },
      "sampling-1": {
        method: "sampling/createMessage",
        params: { messages: [{ role: "user", content: { type: "text", text: "Hi" } }], maxTokens: 5 },
      },
      "roots-1": { method: "roots/list", params: {} },
    });
    const inputResponses = {
      "elicitation-1": accept("Ann"),
      "sampling-1": { role: "assistant", content: { type: "text", text: "Paris" }, model: "m" },
      "roots-1": { roots: [{ uri: "file:///a" }] },
    };
    const r2 = await p.request("tools/call", { name: "all_at_once", inputResponses }, caps);
    expect(r2.answer.result.content).toEqual([{ type: "text", text: "Ann Paris 1" }]);
  });

  it("records calls it never awaited, without an unhandled rejection", async () => {
    const p = modernPeer(server());
    const r = await p.request("tools/call", { name: "awaits_one" }, { elicitation: {}, sampling: {} });
    expect(Object.keys(r.answer.result.inputRequests)).toEqual(["a", "b"]);
    const none = await p.request("tools/call", { name: "awaits_one" }, { elicitation: {} });
    expect(Object.keys(none.answer.result.inputRequests)).toEqual(["a"]);
    await new Promise((done) => setTimeout(done, 10));
  });

  it("answers -32021 with the capability a handler needs and the request did not declare", async () => {
    const p = modernPeer(server());
    expect((await p.request("tools/call", { name: "needs_sampling" }, {})).answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32021,
        message: "Missing required client capability: sampling",
        data: { requiredCapabilities: { sampling: {} } },
      },
    });
    const greet = await p.request("tools/call", { name: "greet" }, { sampling: {} });
    expect(greet.answer.error.data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } });
    const url = await p.request("tools/call", { name: "needs_url" }, ELICIT);
    expect(url.answer.error.data).toEqual({ requiredCapabilities: { elicitation: { url: {} } } });
    const roots = await p.request("resources/read", { uri: "test://asks" }, {});
    expect(roots.answer.error.data).toEqual({ requiredCapabilities: { roots: {} } });
  });

  it("asks from prompts/get and resources/read too, and never from other methods", async () => {
    const errors: unknown[] = [];
    const p = modernPeer(server({ onError: (e: unknown) => errors.push(e) }));
    const prompt = await p.request("prompts/get", { name: "ask_prompt" }, ELICIT);
    expect(Object.keys(prompt.answer.result.inputRequests)).toEqual(["ctx"]);
    const done = await p.request(
      "prompts/get",
      { name: "ask_prompt", inputResponses: { ctx: accept("c") } },
      ELICIT,
    );
    expect(done.answer.result.messages).toEqual([
      { role: "user", content: { type: "text", text: "Context: c" } },
    ]);
    const read = await p.request("resources/read", { uri: "test://asks" }, { roots: {} });
    expect(read.answer.result).toEqual({
      resultType: "input_required",
      inputRequests: { r: { method: "roots/list", params: {} } },
      requestState: read.answer.result.requestState,
      _meta: SERVER_META,
    });
    const completion = await p.request(
      "completion/complete",
      { ref: { type: "ref/prompt", name: "completes" }, argument: { name: "x", value: "" } },
      ELICIT,
    );
    expect(completion.answer.error).toEqual({ code: -32603, message: "Internal error" });
    expect(String(errors[0])).toBe(
      "Error: elicitation/create: completion/complete cannot ask the client in 2026-07-28: its extension must declare input: true on it",
    );
  });

  it("rejects a tampered, foreign, stale or misused requestState", async () => {
    const s = server();
    const p = modernPeer(s);
    const first = await p.request("tools/call", { name: "greet", arguments: { lang: "en" } }, ELICIT);
    const state: string = first.answer.result.requestState;
    const retry = (params: object) =>
      p.request("tools/call", { inputResponses: { user_name: accept("Ann") }, ...params }, ELICIT);
    expect(
      (await retry({ name: "greet", arguments: { lang: "en" }, requestState: state })).answer.result
        .resultType,
    ).toBe("complete");
    for (const requestState of [`${state}-TAMPERED`, state.slice(0, -2), "rs1.", "garbage", 42]) {
      const r = await retry({ name: "greet", arguments: { lang: "en" }, requestState });
      expect(r.answer.error).toEqual(INVALID);
    }
    // other arguments, another tool, another method
    expect(
      (await retry({ name: "greet", arguments: { lang: "fr" }, requestState: state })).answer.error,
    ).toEqual(INVALID);
    expect((await retry({ name: "two_steps", requestState: state })).answer.error).toEqual(INVALID);
    expect(
      (await p.request("prompts/get", { name: "ask_prompt", requestState: state }, ELICIT)).answer.error,
    ).toEqual(INVALID);
    // another caller
    const other = modernPeer(s, { subject: "mallory" });
    const stolen = await other.request(
      "tools/call",
      { name: "greet", arguments: { lang: "en" }, inputResponses: {}, requestState: state },
      ELICIT,
    );
    expect(stolen.answer.error).toEqual(INVALID);
    // expired
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + 600_001);
    expect(
      (await retry({ name: "greet", arguments: { lang: "en" }, requestState: state })).answer.error,
    ).toEqual(INVALID);
  });

  it("binds the state to auth.subject, else auth.clientId", async () => {
    const s = server();
    const alice = modernPeer(s, { clientId: "app", subject: "alice" });
    const first = await alice.request("tools/call", { name: "greet" }, ELICIT);
    const requestState = first.answer.result.requestState;
    const params = { name: "greet", inputResponses: { user_name: accept("A") }, requestState };
    expect((await alice.request("tools/call", params, ELICIT)).answer.result.resultType).toBe("complete");
    const sameApp = modernPeer(s, { clientId: "app" });
    expect((await sameApp.request("tools/call", params, ELICIT)).answer.error).toEqual(INVALID);
  });

  it("opens states sealed by any key of the ring, and only those", async () => {
    const before = modernPeer(server({ requestState: { keys: [KEY_A] } }));
    const r = await before.request("tools/call", { name: "greet" }, ELICIT);
    const params = {
      name: "greet",
      inputResponses: { user_name: accept("A") },
      requestState: r.answer.result.requestState,
    };
    const rotated = modernPeer(server({ requestState: { keys: [KEY_B, KEY_A] } }));
    expect((await rotated.request("tools/call", params, ELICIT)).answer.result.resultType).toBe("complete");
    const retired = modernPeer(server({ requestState: { keys: [KEY_B] } }));
    expect((await retired.request("tools/call", params, ELICIT)).answer.error).toEqual(INVALID);
    // the default key is random per server
    expect((await modernPeer(server()).request("tools/call", params, ELICIT)).answer.error).toEqual(INVALID);
    expect(() => server({ requestState: { keys: ["short"] } })).toThrow("at least 32 bytes");
  });

  it("runs the same handler with requests to the client in the initialize era", async () => {
    const p = rawPeer(server());
    await p.initialize("2025-11-25", { elicitation: {} });
    const pending = p.send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "greet" } });
    await new Promise((r) => setTimeout(r, 0));
    const id = (p.sent[0] as { id?: unknown } | undefined)?.id;
    expect(p.sent).toEqual([
      {
        jsonrpc: "2.0",
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        method: "elicitation/create",
        params: { mode: "form", message: "Name?", requestedSchema: NAME },
      },
    ]);
    await p.send({ jsonrpc: "2.0", id, result: accept("Ann") });
    expect(await pending).toEqual({
      jsonrpc: "2.0",
      id: 5,
      result: { content: [{ type: "text", text: "Hello, Ann!" }] },
    });
  });
});
