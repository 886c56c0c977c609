// Issue 12's rules in both eras, over the HTTP handler with real authentication: the 2026-07-28 request
// state is the caller's, a 2026-07-28 request never reaches a session, scoped resources are watched only
// by those who may read them, subscriptions are bounded, and Object.prototype names are plain names.
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "../../src/http/index.js";
import { type AuthInfo, McpServer, type McpServerOptions } from "../../src/index.js";
import { call, initBody, post } from "../http-helpers.js";
import { meta } from "../modern-helpers.js";

const TOKENS: { [token: string]: AuthInfo } = {
  alice: { token: "alice", subject: "alice", scopes: ["files"] },
  bob: { token: "bob", subject: "bob", scopes: [] },
};
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const MODERN = { "mcp-protocol-version": "2026-07-28" };

const handlers: HttpHandler[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

function setup(options: HttpHandlerOptions = {}, serverOptions: Partial<McpServerOptions> = {}) {
  const server = new McpServer({ name: "security", version: "1.0.0", onError: () => {}, ...serverOptions });
  server.tool("whoami", { run: (_a, ctx) => `caller=${ctx.auth?.subject ?? "-"}` });
  server.tool("hold", {
    run: async (_a, ctx) => {
      let state = ctx.requestState as { owner: string } | undefined;
      if (state === undefined) {
        state = { owner: ctx.auth?.subject ?? "-" };
        ctx.setRequestState(state);
      }
      const answer = await ctx.elicit(
        { message: "Sure?", requestedSchema: { type: "object", properties: {} } },
        { key: "sure" },
      );
      return `owner=${state.owner} caller=${ctx.auth?.subject ?? "-"} ${answer.action}`;
    },
  });
  server.resource("secret://{name}", { scopes: ["files"], read: ({ name }) => name });
  server.resource("note://a", { read: () => "a" });
  server.prompt("p", { args: [{ name: "a" }], complete: { a: (v) => [`${v}!`] }, get: ({ a }) => `a=${a}` });
  const handler = createHttpHandler(server, {
    authenticate: (request) => {
      const header = request.headers.get("authorization");
      return header ? TOKENS[header.slice(7)] : undefined;
    },
    ...options,
  });
  handlers.push(handler);
  return handler;
}

/** A 2026-07-28 POST: its `_meta`, and the headers that mirror the body. */
function modern(handler: HttpHandler, id: number, method: string, params: object, headers: object = {}) {
  const name = (params as { name?: string; uri?: string }).name ?? (params as { uri?: string }).uri;
  return post(
    handler,
    { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta({ elicitation: {} }) } },
    { ...MODERN, "mcp-method": method, ...(name ? { "mcp-name": name } : {}), ...headers },
  );
}

async function session(handler: HttpHandler, token?: string) {
  const headers = token ? as(token) : {};
  const res = await post(handler, initBody(), headers);
  expect(res.status).toBe(200);
  const sid = res.headers.get("mcp-session-id")!;
  return {
    sid,
    send: (body: unknown, extra: object = {}) =>
      post(handler, body, {
        ...headers,
        "mcp-session-id": sid,
        "mcp-protocol-version": "2025-11-25",
        ...extra,
      }),
  };
}

describe("2026-07-28: the request state belongs to its caller", () => {
  it("a state sealed for alice completes for alice only: bob and an anonymous caller get -32602", async () => {
    const handler = setup();
    const first = await (await modern(handler, 1, "tools/call", { name: "hold" }, as("alice"))).json();
    expect(first.result.resultType).toBe("input_required");
    const retry = { name: "hold", inputResponses: { sure: { action: "accept", content: {} } } };
    const again = { ...retry, requestState: first.result.requestState };
    const refused = {
      code: -32602,
      message: "Invalid or expired requestState",
      data: { reason: "invalid_request_state" },
    };
    for (const headers of [as("bob"), {}]) {
      const res = await modern(handler, 2, "tools/call", again, headers);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: 2, error: refused });
    }
    const own = await (await modern(handler, 3, "tools/call", again, as("alice"))).json();
    expect(own.result.content).toEqual([{ type: "text", text: "owner=alice caller=alice accept" }]);
  });
});

describe("2026-07-28: a request never reaches, nor rebinds, a 2025 session", () => {
  it("bob's 2026-07-28 request with alice's session id runs as bob, as with an unknown id; the session stays alice's", async () => {
    const handler = setup();
    const alice = await session(handler, "alice");
    for (const headers of [as("bob"), {}]) {
      const answer = async (sid: string) => {
        const res = await modern(
          handler,
          4,
          "tools/call",
          { name: "whoami" },
          { ...headers, "mcp-session-id": sid },
        );
        return [res.status, await res.text()];
      };
      const [status, text] = await answer(alice.sid);
      // never as alice, and nothing tells that the session exists
      expect(text).not.toContain("caller=alice");
      expect([status, text]).toEqual(await answer("0".repeat(32)));
    }
    const bobs = await modern(
      handler,
      4,
      "tools/call",
      { name: "whoami" },
      { ...as("bob"), "mcp-session-id": alice.sid },
    );
    expect(bobs.status).toBe(200);
    expect((await bobs.json()).result.content[0].text).toBe("caller=bob");
    const own = await (await alice.send(call(5, "whoami"))).json();
    expect(own.result.content[0].text).toBe("caller=alice");
    const bob = await post(handler, call(6, "whoami"), { ...as("bob"), "mcp-session-id": alice.sid });
    expect(bob.status).toBe(404);
  });

  it("without a session id it is served on its own, as its own caller", async () => {
    const handler = setup();
    await session(handler, "alice");
    const res = await (await modern(handler, 7, "tools/call", { name: "whoami" }, as("bob"))).json();
    expect(res.result.content[0].text).toBe("caller=bob");
  });
});

describe("a scoped resource's updates go only to callers that may read it", () => {
  it("2025: resources/subscribe to it needs its scopes", async () => {
    const handler = setup();
    const bob = await session(handler, "bob");
    const sub = (id: number, uri: string) => ({
      jsonrpc: "2.0",
      id,
      method: "resources/subscribe",
      params: { uri },
    });
    expect((await (await bob.send(sub(8, "secret://x"))).json()).error).toEqual({
      code: -32600,
      message: "Forbidden: resource secret://x needs the scope files",
      data: { error: "insufficient_scope", scopes: ["files"] },
    });
    expect((await (await bob.send(sub(9, "note://a"))).json()).result).toEqual({});
    const alice = await session(handler, "alice");
    expect((await (await alice.send(sub(10, "secret://x"))).json()).result).toEqual({});
  });

  it("2026-07-28: a listen naming it needs its scopes", async () => {
    const handler = setup();
    const listen = { notifications: { resourceSubscriptions: ["secret://x"] } };
    const res = await modern(handler, 11, "subscriptions/listen", listen, as("bob"));
    expect((await res.json()).error).toEqual({
      code: -32600,
      message: "Forbidden: resource secret://x needs the scope files",
      data: { error: "insufficient_scope", scopes: ["files"] },
    });
    const ok = await modern(handler, 12, "subscriptions/listen", listen, as("alice"));
    expect([ok.status, ok.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
    await ok.body?.cancel();
  });
});

describe("2025 sessions: resources/subscribe is bounded", () => {
  it("at most maxResourceSubscriptions URIs per session, none longer than maxUriLength; unknown URIs count", async () => {
    const handler = setup({}, { subscriptionLimits: { maxResourceSubscriptions: 2, maxUriLength: 64 } });
    const s = await session(handler);
    const sub = (id: number, uri: string) => ({
      jsonrpc: "2.0",
      id,
      method: "resources/subscribe",
      params: { uri },
    });
    expect((await (await s.send(sub(1, "note://a"))).json()).result).toEqual({});
    expect((await (await s.send(sub(2, "nowhere://yet"))).json()).result).toEqual({});
    // the same URI again takes no new place
    expect((await (await s.send(sub(3, "note://a"))).json()).result).toEqual({});
    expect((await (await s.send(sub(4, "note://b"))).json()).error).toEqual({
      code: -32602,
      message: "At most 2 resource subscriptions per session",
      data: { max: 2 },
    });
    expect((await (await s.send(sub(5, `note://${"a".repeat(64)}`))).json()).error).toEqual({
      code: -32602,
      message: "The uri is longer than 64 characters",
      data: { maxUriLength: 64 },
    });
    const unsub = {
      jsonrpc: "2.0",
      id: 6,
      method: "resources/unsubscribe",
      params: { uri: "nowhere://yet" },
    };
    expect((await (await s.send(unsub)).json()).result).toEqual({});
    expect((await (await s.send(sub(7, "note://b"))).json()).result).toEqual({});
  });

  it("the defaults: 1000 URIs, 8192 characters", async () => {
    const handler = setup();
    const s = await session(handler);
    const batch = Array.from({ length: 1001 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: "resources/subscribe",
      params: { uri: `note://${i}` },
    }));
    for (let i = 0; i < 1000; i += 100) {
      for (const m of batch.slice(i, i + 100)) expect((await (await s.send(m)).json()).result).toEqual({});
    }
    expect((await (await s.send(batch[1000])).json()).error.code).toBe(-32602);
    const long = { jsonrpc: "2.0", id: 2000, method: "resources/unsubscribe", params: { uri: "note://1" } };
    await s.send(long);
    const tooLong = {
      jsonrpc: "2.0",
      id: 2001,
      method: "resources/subscribe",
      params: { uri: `note://${"a".repeat(8192)}` },
    };
    expect((await (await s.send(tooLong)).json()).error.data).toEqual({ maxUriLength: 8192 });
  });
});

describe("Object.prototype names from the wire are plain names, in both eras", () => {
  const NAMES = ["constructor", "toString", "__proto__", "hasOwnProperty"];

  it("as method, tool, prompt, completion and prompt-argument names over a 2025 session", async () => {
    const handler = setup();
    const s = await session(handler);
    for (const name of NAMES) {
      const method = await (await s.send({ jsonrpc: "2.0", id: 1, method: name })).json();
      expect(method.error).toEqual({ code: -32601, message: `Method not found: ${name}` });
      const tool = await (await s.send(call(2, name))).json();
      expect(tool.error).toMatchObject({ code: -32602, message: `Unknown tool: ${name}` });
      const prompt = await (
        await s.send({ jsonrpc: "2.0", id: 3, method: "prompts/get", params: { name } })
      ).json();
      expect(prompt.error.code).toBe(-32602);
      const complete = await (
        await s.send({
          jsonrpc: "2.0",
          id: 4,
          method: "completion/complete",
          params: { ref: { type: "ref/prompt", name: "p" }, argument: { name, value: "v" } },
        })
      ).json();
      expect(complete.result.completion.values).toEqual([]);
      // an argument the prompt does not declare is no argument of it, whatever its name
      const args = JSON.parse(`{"${name}":"x"}`);
      const got = await (
        await s.send({ jsonrpc: "2.0", id: 5, method: "prompts/get", params: { name: "p", arguments: args } })
      ).json();
      expect(got.result.messages[0].content.text).toBe("a=undefined");
    }
  });

  it("as method and tool names of 2026-07-28 requests, and as HTTP header names", async () => {
    const handler = setup();
    for (const name of NAMES) {
      const method = await modern(handler, 1, name, {});
      expect([method.status, (await method.json()).error.code]).toEqual([404, -32601]);
      const tool = await (await modern(handler, 2, "tools/call", { name })).json();
      expect(tool.error).toMatchObject({ code: -32602, message: `Unknown tool: ${name}` });
      const headers = { [name === "__proto__" ? "__proto__" : name]: "x", [`mcp-param-${name}`]: "x" };
      const res = await (await modern(handler, 3, "tools/call", { name: "whoami" }, headers)).json();
      expect(res.result.content[0].text).toBe("caller=-");
    }
  });
});

describe("a batch nested deep inside a batch", () => {
  it("gets its -32600 answer, not a 500 (expectsAnswer recursed once per level)", async () => {
    const handler = setup({ maxBatchSize: 10 });
    const res = await post(handler, initBody("2025-03-26"));
    const sid = res.headers.get("mcp-session-id")!;
    const deep = await post(handler, "[".repeat(20_000) + "]".repeat(20_000), {
      "mcp-session-id": sid,
      "mcp-protocol-version": "2025-03-26",
    });
    expect([deep.status, await deep.json()]).toEqual([
      200,
      [
        {
          jsonrpc: "2.0",
          id: null,
          error: { code: -32600, message: "Invalid Request: a message must be a JSON object" },
        },
      ],
    ]);
  });
});

describe("a token is never passed on", () => {
  it("neither a handler's error report nor any answer carries the bearer token, in either era", async () => {
    const reports: string[] = [];
    const secret = "alice";
    const server = new McpServer({
      name: "t",
      version: "1",
      onError: (error, info) => void reports.push(JSON.stringify({ error: String(error), info })),
    });
    server.resource("boom://x", {
      read: () => {
        throw new Error("failed");
      },
    });
    const handler = createHttpHandler(server, {
      authenticate: (request) => TOKENS[request.headers.get("authorization")?.slice(7) ?? ""],
    });
    handlers.push(handler);
    const s = await session(handler, secret);
    const read = { jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "boom://x" } };
    const legacy = await (await s.send(read)).text();
    const fresh = await (await modern(handler, 2, "resources/read", { uri: "boom://x" }, as(secret))).text();
    expect(reports.length).toBe(2);
    for (const text of [...reports, legacy, fresh]) expect(text).not.toContain(`"${secret}"`);
    expect(JSON.parse(legacy).error).toEqual({ code: -32603, message: "Internal error" });
  });
});

describe("the node:http bridge keeps a connection usable after a refusal that read no body", () => {
  it("the next request on the kept-alive socket is served (it was reset), small rests drained, large ones closed", async () => {
    const { Agent, request } = await import("node:http");
    const { serve } = await import("../../src/http/node.js");
    const running = await serve(new McpServer({ name: "t", version: "1" }), { port: 0 });
    const url = new URL(running.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (headers: object, body: string) =>
      new Promise<[number | string, boolean]>((resolve) => {
        const req = request({
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: {
            host: url.host,
            accept: "application/json, text/event-stream",
            "content-type": "application/json",
            ...headers,
          },
        });
        req.on("response", (res) => {
          res.resume();
          res.on("end", () => resolve([res.statusCode!, req.reusedSocket]));
        });
        req.on("error", (e) => resolve([String(e), req.reusedSocket]));
        req.end(body);
      });
    const ping = '{"jsonrpc":"2.0","id":2,"method":"ping"}';
    try {
      for (const size of [300_000, 3_000_000]) {
        const big = JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "ping",
          params: { x: "a".repeat(size) },
        });
        expect((await send({ "mcp-session-id": "nope" }, big))[0]).toBe(404);
        // drained: the same socket serves the next request; too large to drain: a new one does
        expect(await send({ "mcp-session-id": "nope" }, ping)).toEqual([404, size < 1024 * 1024]);
        expect(await send({ host: "evil.com" }, big)).toEqual([403, true]);
        expect((await send({ "mcp-session-id": "nope" }, ping))[0]).toBe(404);
      }
    } finally {
      agent.destroy();
      await running.close();
    }
  });
});
