import { describe, expect, it } from "vitest";
import { McpError, McpServer } from "../../src/index.js";
import { rawPeer, tick } from "../helpers.js";

function server() {
  const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
  s.tool("echo", { description: "Echo", run: (_args, ctx) => `id ${ctx.requestId}` });
  return s;
}

describe("JSON-RPC envelope", () => {
  it("answers a non-object message with -32600 and no id", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send(42)).toEqual({
      jsonrpc: "2.0",
      error: { code: -32600, message: "Invalid Request: a message must be a JSON object" },
    });
    expect(await p.send("null")).toEqual({
      jsonrpc: "2.0",
      error: { code: -32600, message: "Invalid Request: a message must be a JSON object" },
    });
  });

  it("answers a missing or wrong jsonrpc with -32600 and the id", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send({ id: 1, method: "ping" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32600, message: 'Invalid Request: jsonrpc must be "2.0"' },
    });
    expect(await p.send({ jsonrpc: "1.0", id: "a", method: "ping" })).toEqual({
      jsonrpc: "2.0",
      id: "a",
      error: { code: -32600, message: 'Invalid Request: jsonrpc must be "2.0"' },
    });
  });

  it("answers a missing or non-string method with -32600", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 2 })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32600, message: "Invalid Request: method must be a string" },
    });
    expect(await p.send({ jsonrpc: "2.0", id: 3, method: 7 })).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32600, message: "Invalid Request: method must be a string" },
    });
  });

  it("answers id null and non-string/number ids with -32600 without an id (2025-11-25)", async () => {
    const p = rawPeer(server());
    await p.initialize();
    const expected = {
      jsonrpc: "2.0",
      error: { code: -32600, message: "Invalid Request: id must be a string or a number" },
    };
    expect(await p.send({ jsonrpc: "2.0", id: null, method: "ping" })).toEqual(expected);
    expect(await p.send({ jsonrpc: "2.0", id: { a: 1 }, method: "ping" })).toEqual(expected);
    expect(await p.send({ jsonrpc: "2.0", id: true, method: "ping" })).toEqual(expected);
  });

  it("uses id null for an unreadable id on 2025-06-18 and earlier", async () => {
    const p = rawPeer(server());
    await p.initialize("2025-06-18");
    expect(await p.send({ jsonrpc: "2.0", id: null, method: "ping" })).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid Request: id must be a string or a number" },
    });
  });

  it("rejects arrays unless the revision is 2025-03-26", async () => {
    const p = rawPeer(server());
    await p.initialize("2025-11-25");
    expect(await p.send([{ jsonrpc: "2.0", id: 1, method: "ping" }])).toEqual({
      jsonrpc: "2.0",
      error: {
        code: -32600,
        message: "Invalid Request: batches are only accepted on protocol revision 2025-03-26",
      },
    });
  });

  it("answers a 2025-03-26 batch with one answer per request, none for notifications", async () => {
    const p = rawPeer(server());
    await p.initialize("2025-03-26");
    expect(
      await p.send([
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { jsonrpc: "2.0", method: "notifications/whatever" },
        { jsonrpc: "2.0", id: 2, method: "nope" },
      ]),
    ).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found: nope" } },
    ]);
    expect(await p.send([{ jsonrpc: "2.0", method: "notifications/whatever" }])).toBeUndefined();
    expect(await p.send([])).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid Request: an empty batch" },
    });
  });

  it("answers an unknown method with -32601", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 9, method: "tools/frobnicate" })).toEqual({
      jsonrpc: "2.0",
      id: 9,
      error: { code: -32601, message: "Method not found: tools/frobnicate" },
    });
  });

  it("answers methods of capabilities the server lacks with -32601", async () => {
    const p = rawPeer(server());
    await p.initialize();
    for (const method of [
      "prompts/list",
      "prompts/get",
      "resources/list",
      "resources/read",
      "resources/subscribe",
      "completion/complete",
    ]) {
      expect(await p.send({ jsonrpc: "2.0", id: method, method, params: {} })).toEqual({
        jsonrpc: "2.0",
        id: method,
        error: { code: -32601, message: `Method not found: ${method}` },
      });
    }
  });

  it("answers non-object params with -32602", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 5, method: "tools/list", params: [1] })).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32602, message: "Invalid params: params must be an object" },
    });
  });

  it("never answers notifications, known or unknown, valid or not", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(
      await p.send({ jsonrpc: "2.0", method: "notifications/unknown", params: { x: 1 } }),
    ).toBeUndefined();
    expect(
      await p.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: "junk" }),
    ).toBeUndefined();
    expect(
      await p.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 999 } }),
    ).toBeUndefined();
    expect(p.sent).toEqual([]);
  });

  it("ignores responses to requests it never sent", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: "nope", result: {} })).toBeUndefined();
    expect(await p.send({ jsonrpc: "2.0", id: 77, error: { code: 1, message: "x" } })).toBeUndefined();
  });

  it("maps a thrown McpError to its code, message and data, and any other throw to a generic -32603", async () => {
    const errors: unknown[] = [];
    const s = new McpServer({ name: "t", version: "1", onError: (e) => errors.push(e) });
    s.prompt("boom", {
      description: "x",
      get: () => {
        throw new Error("secret detail at /srv/app.js:12");
      },
    });
    s.prompt("mcp", {
      description: "x",
      get: () => {
        throw new McpError(-32099, "Custom", { why: "because" });
      },
    });
    const p = rawPeer(s);
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "prompts/get", params: { name: "boom" } })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32603, message: "Internal error" },
    });
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain("secret detail");
    expect(await p.send({ jsonrpc: "2.0", id: 2, method: "prompts/get", params: { name: "mcp" } })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32099, message: "Custom", data: { why: "because" } },
    });
  });

  it("rejects a second request with an id that is still in flight", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    let release!: () => void;
    s.tool("slow", { run: () => new Promise<string>((r) => (release = () => r("done"))) });
    const p = rawPeer(s);
    await p.initialize();
    const first = p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow" } });
    await tick();
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "ping" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {},
    });
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "tools/list" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32600, message: "Invalid Request: a request with this id is still in flight" },
    });
    release();
    expect(await first).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "done" }] },
    });
  });
});

describe("lifecycle", () => {
  it("answers ping with exactly {} before and after initialize", async () => {
    const p = rawPeer(server());
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "ping" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {},
    });
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: "x", method: "ping", params: { _meta: { a: 1 } } })).toEqual({
      jsonrpc: "2.0",
      id: "x",
      result: {},
    });
  });

  it("rejects requests before initialize with a clear error", async () => {
    const p = rawPeer(server());
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "tools/list" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32600,
        message: "Invalid Request: the server is not initialized; send initialize first",
      },
    });
  });

  it("rejects a second initialize", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(
      await p.send({
        jsonrpc: "2.0",
        id: 2,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {} },
      }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32600, message: "Invalid Request: the connection is already initialized" },
    });
  });

  it("rejects initialize without a protocolVersion", async () => {
    const p = rawPeer(server());
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "Invalid params: initialize needs a protocolVersion string" },
    });
  });

  it.each(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])(
    "accepts protocol version %s as asked",
    async (v) => {
      const p = rawPeer(server());
      const answer = await p.initialize(v);
      expect(answer.result.protocolVersion).toBe(v);
    },
  );

  it.each(["2026-07-28", "1999-01-01", "latest"])(
    "answers an unknown version (%s) with 2025-11-25",
    async (v) => {
      const p = rawPeer(server());
      const answer = await p.initialize(v);
      expect(answer.result.protocolVersion).toBe("2025-11-25");
    },
  );

  it("sends serverInfo, instructions and derived capabilities, exactly", async () => {
    const s = new McpServer({
      name: "shop",
      version: "2.0.0",
      title: "Shop",
      description: "A shop",
      icons: [{ src: "https://example.com/i.png", mimeType: "image/png" }],
      websiteUrl: "https://example.com",
      instructions: "Be nice",
    });
    s.tool("t", { run: () => "" });
    s.resource("a://b", { read: () => "" });
    s.prompt("p", { get: () => "" });
    const p = rawPeer(s);
    expect(await p.initialize("2025-11-25")).toEqual({
      jsonrpc: "2.0",
      id: 0,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: {
          logging: {},
          completions: {},
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          tools: { listChanged: true },
        },
        serverInfo: {
          name: "shop",
          version: "2.0.0",
          title: "Shop",
          description: "A shop",
          icons: [{ src: "https://example.com/i.png", mimeType: "image/png" }],
          websiteUrl: "https://example.com",
        },
        instructions: "Be nice",
      },
    });
    const old = rawPeer(s);
    expect(await old.initialize("2024-11-05")).toEqual({
      jsonrpc: "2.0",
      id: 0,
      result: {
        protocolVersion: "2024-11-05",
        capabilities: {
          logging: {},
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          tools: { listChanged: true },
        },
        serverInfo: { name: "shop", version: "2.0.0" },
        instructions: "Be nice",
      },
    });
  });

  it("declares only logging when nothing is registered", async () => {
    const p = rawPeer(new McpServer({ name: "empty", version: "0" }));
    const answer = await p.initialize();
    expect(answer.result.capabilities).toEqual({ logging: {} });
  });
});

describe("concurrency and cancellation", () => {
  it("serves ping and other requests while a slow handler runs", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    let release!: () => void;
    s.tool("slow", { run: () => new Promise<string>((r) => (release = () => r("slow done"))) });
    s.tool("fast", { run: () => "fast done" });
    const p = rawPeer(s);
    await p.initialize();
    let slowAnswered = false;
    const slow = p
      .send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow" } })
      .then((a) => {
        slowAnswered = true;
        return a;
      });
    await tick();
    expect(await p.send({ jsonrpc: "2.0", id: 2, method: "ping" })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: {},
    });
    expect(await p.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "fast" } })).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { content: [{ type: "text", text: "fast done" }] },
    });
    expect(slowAnswered).toBe(false);
    release();
    expect((await slow).result.content[0].text).toBe("slow done");
  });

  it("aborts ctx.signal on notifications/cancelled and sends no answer", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    let aborted = false;
    s.tool("hang", {
      run: (_a, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            aborted = true;
            resolve("too late");
          });
        }),
    });
    const p = rawPeer(s);
    await p.initialize();
    const call = p.send({ jsonrpc: "2.0", id: "c1", method: "tools/call", params: { name: "hang" } });
    await tick();
    await p.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "c1", reason: "user" },
    });
    expect(await call).toBeUndefined();
    expect(aborted).toBe(true);
    // the id is free again
    expect(await p.send({ jsonrpc: "2.0", id: "c1", method: "ping" })).toEqual({
      jsonrpc: "2.0",
      id: "c1",
      result: {},
    });
  });

  it("ignores a cancel for initialize", async () => {
    const p = rawPeer(server());
    const init = p.send({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    });
    await p.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 0 } });
    expect((await init).result.protocolVersion).toBe("2025-11-25");
  });
});

describe("handler results that cannot be serialized", () => {
  it("turns a cyclic or BigInt result into an isError tool result", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    const cyclic: any = { a: 1 };
    cyclic.self = cyclic;
    s.tool("cyclic", { run: () => cyclic });
    s.tool("big", { run: () => ({ n: 10n }) });
    s.tool("fn", { run: () => () => 1 });
    const p = rawPeer(s);
    await p.initialize();
    for (const name of ["cyclic", "big", "fn"]) {
      const answer = await p.send({ jsonrpc: "2.0", id: name, method: "tools/call", params: { name } });
      expect(answer.id).toBe(name);
      expect(answer.result.isError).toBe(true);
      expect(answer.result.content[0].type).toBe("text");
    }
  });
});

describe("connections opened already initialized", () => {
  it("serve requests at once, at the given revision", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("v", { run: (_a, ctx) => ctx.client.protocolVersion });
    const conn = s.connect({
      send: () => {},
      initialized: { protocolVersion: "2025-06-18", capabilities: { roots: {} } },
    });
    expect(conn.protocolVersion).toBe("2025-06-18");
    expect(
      await s.handle({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "v" } }, conn),
    ).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "2025-06-18" }] },
    });
    expect(
      await s.handle(
        { jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "2025-06-18" } },
        conn,
      ),
    ).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32600, message: "Invalid Request: the connection is already initialized" },
    });
  });
});

describe("what a handshake declares", () => {
  it("follows the registrations made before it, at every revision; a session keeps what it was told", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    const caps = async (version: string) =>
      ((await rawPeer(s).initialize(version)) as any).result.capabilities;
    const early = rawPeer(s);
    expect((await early.initialize()).result.capabilities).toEqual({ logging: {} });
    expect(await caps("2025-06-18")).toEqual({ logging: {} });
    const tool = s.tool("late", { task: "optional", run: () => "late" });
    const withTasks = await caps("2025-11-25");
    expect(withTasks.tools).toEqual({ listChanged: true });
    expect(Object.keys(withTasks)).toContain("tasks");
    expect(await caps("2025-06-18")).toEqual({ logging: {}, tools: { listChanged: true } });
    // the session initialized before still has no tools
    expect((await early.send({ jsonrpc: "2.0", id: 1, method: "tools/list" })).error.code).toBe(-32601);
    tool.remove();
    expect(await caps("2025-11-25")).toEqual({ logging: {} });
  });
});

describe("a connection's id", () => {
  it("is the transport's, else one random UUID that every request of the connection sees", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("sid", { run: (_a, ctx) => ctx.sessionId });
    expect(s.connect({ send: () => {}, id: "given" }).id).toBe("given");
    const conn = s.connect({ send: () => {}, initialized: { protocolVersion: "2025-06-18" } });
    const call = async (id: number) =>
      ((await s.handle({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "sid" } }, conn)) as any)
        .result.content[0].text;
    const first = await call(1);
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await call(2)).toBe(first);
    expect(conn.id).toBe(first);
    expect(s.connect({ send: () => {} }).id).not.toBe(first);
  });
});

describe("synchronous handlers", () => {
  const conn = (s: McpServer) =>
    s.connect({ send: () => {}, initialized: { protocolVersion: "2025-11-25" } });
  const call = (id: number, name: string, args: object = {}) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  });

  it("are answered synchronously by handleNow, and through a promise by handle", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("now", { run: () => "now" });
    s.tool("later", { run: async () => "later" });
    s.resource("n://{x}", { read: ({ x }) => `n ${x}` });
    const c = conn(s);
    const answer = { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "now" }] } };
    expect(s.handleNow(call(1, "now"), c)).toEqual(answer);
    expect(
      s.handleNow({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "n://a" } }, c),
    ).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { contents: [{ uri: "n://a", mimeType: "text/plain", text: "n a" }] },
    });
    const pending = s.handleNow(call(3, "later"), c);
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { content: [{ type: "text", text: "later" }] },
    });
    const handled = s.handle(call(4, "now"), c);
    expect(handled).toBeInstanceOf(Promise);
    expect(await handled).toEqual({ ...answer, id: 4 });
  });

  it("are not answered when they close the connection, in the synchronous part or after it", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    let c!: ReturnType<typeof conn>;
    const signals: AbortSignal[] = [];
    s.tool("closeNow", {
      run: () => {
        c.close();
        return "closed";
      },
    });
    s.tool("closeThenWait", {
      run: (_a, ctx) => {
        c.close();
        signals.push(ctx.signal);
        return new Promise<string>((resolve) => ctx.signal.addEventListener("abort", () => resolve("late")));
      },
    });
    c = conn(s);
    expect(s.handleNow(call(1, "closeNow"), c)).toBeUndefined();
    c = conn(s);
    expect(await s.handleNow(call(2, "closeThenWait"), c)).toBeUndefined();
    expect(signals[0]!.aborted).toBe(true);
  });

  it("a running request is in flight until it settles: a twin is refused, a cancel aborts it", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("wait", {
      run: (_a, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve("x"))),
    });
    s.tool("now", { run: () => "now" });
    const c = conn(s);
    const first = s.handleNow(call(1, "wait"), c);
    expect(await s.handle(call(1, "now"), c)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32600, message: "Invalid Request: a request with this id is still in flight" },
    });
    s.handleNow({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }, c);
    expect(await first).toBeUndefined();
    // settled: the id is free again
    expect(s.handleNow(call(1, "now"), c)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "now" }] },
    });
  });
});
