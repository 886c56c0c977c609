import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { connect } from "../../src/testing.js";
import { rawPeer, tick } from "../helpers.js";
import { sdkClient } from "../sdk-bridge.js";

describe("logging", () => {
  function server() {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("chatty", {
      run: (_a, ctx) => {
        for (const level of ["debug", "info", "warning", "error"] as const)
          ctx.log(level, { level }, "chatty");
        return "done";
      },
    });
    return s;
  }

  it("sends everything before setLevel, and filters per connection after it", async () => {
    const s = server();
    const client = await sdkClient(s);
    const seen: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(n.params));
    const other = await connect(s);
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "chatty", arguments: {} });
    await other.callTool("chatty");
    expect(seen).toEqual([
      { level: "warning", logger: "chatty", data: { level: "warning" } },
      { level: "error", logger: "chatty", data: { level: "error" } },
    ]);
    expect(other.notifications.map((n) => n.params?.level)).toEqual(["debug", "info", "warning", "error"]);
  });

  it("answers setLevel with exactly {} and an invalid level with -32602", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(
      await p.send({ jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "info" } }),
    ).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(
      await p.send({ jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level: "loud" } }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32602,
        message:
          "Invalid log level: use one of debug, info, notice, warning, error, critical, alert, emergency",
        data: { level: "loud" },
      },
    });
  });
});

describe("progress", () => {
  function server() {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("work", {
      run: async (_a, ctx) => {
        ctx.progress(0, 100);
        ctx.progress(50, 100, "halfway");
        ctx.progress(100, 100);
        return "done";
      },
    });
    s.tool("backwards", {
      run: (_a, ctx) => {
        ctx.progress(5);
        ctx.progress(4);
        return "never";
      },
    });
    return s;
  }

  it("sends notifications/progress with the client's token, echoed exactly", async () => {
    const client = await sdkClient(server());
    const seen: unknown[] = [];
    await client.callTool({ name: "work", arguments: {} }, undefined, {
      onprogress: (p) => void seen.push(p),
    });
    expect(seen).toEqual([
      { progress: 0, total: 100 },
      { progress: 50, total: 100, message: "halfway" },
      { progress: 100, total: 100 },
    ]);
    const p = rawPeer(server());
    await p.initialize();
    await p.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "work", _meta: { progressToken: "tok-1" } },
    });
    expect(p.sent.map((m) => m.params.progressToken)).toEqual(["tok-1", "tok-1", "tok-1"]);
  });

  it("sends nothing without a progressToken, and drops the message field before 2025-03-26", async () => {
    const p = rawPeer(server());
    await p.initialize("2024-11-05");
    await p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "work" } });
    expect(p.sent).toEqual([]);
    await p.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "work", _meta: { progressToken: 7 } },
    });
    expect(p.sent[1]).toEqual({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: 7, progress: 50, total: 100 },
    });
  });

  it("refuses progress that does not increase", async () => {
    const client = await connect(server());
    const r = await client.request<{ isError?: boolean; content: { text: string }[] }>("tools/call", {
      name: "backwards",
      _meta: { progressToken: 1 },
    });
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toBe("progress must increase: 4 after 5");
  });
});

describe("cancellation", () => {
  it("aborts the handler's signal when the SDK client cancels, and sends no answer", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    let aborted: unknown;
    s.tool("hang", {
      run: (_a, ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener("abort", () => {
            aborted = ctx.signal.reason;
            resolve("aborted");
          }),
        ),
    });
    const client = await sdkClient(s);
    const controller = new AbortController();
    const call = client.callTool({ name: "hang", arguments: {} }, undefined, { signal: controller.signal });
    await tick();
    controller.abort("user gave up");
    await expect(call).rejects.toThrow();
    await tick();
    expect(aborted).toBeInstanceOf(Error);
  });

  it("sends no progress or log after the request is cancelled", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    let later!: () => void;
    s.tool("t", {
      run: (_a, ctx) =>
        new Promise((resolve) => {
          later = () => {
            ctx.progress(1);
            ctx.log("info", "late");
            resolve("x");
          };
        }),
    });
    const p = rawPeer(s);
    await p.initialize();
    const call = p.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "t", _meta: { progressToken: 1 } },
    });
    await tick();
    await p.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
    later();
    expect(await call).toBeUndefined();
    expect(p.sent).toEqual([]);
  });
});

describe("requests to the client", () => {
  function server() {
    const s = new McpServer({ name: "t", version: "1", requestTimeoutMs: 200 });
    s.tool("ask", {
      run: async (_a, ctx) => {
        const r = await ctx.elicit({
          message: "Who are you?",
          requestedSchema: {
            type: "object",
            properties: {
              name: { type: "string", default: "John Doe" },
              age: { type: "integer", default: 30 },
              status: { type: "string", enum: ["active", "inactive"], default: "active" },
              color: {
                type: "string",
                oneOf: [
                  { const: "r", title: "Red" },
                  { const: "g", title: "Green" },
                ],
              },
              tags: { type: "array", items: { type: "string", enum: ["a", "b"] } },
              titled: { type: "array", items: { anyOf: [{ const: "x", title: "Ex" }] } },
              legacy: { type: "string", enum: ["o1", "o2"], enumNames: ["One", "Two"] },
            },
            required: ["name"],
          },
        });
        return JSON.stringify(r);
      },
    });
    s.tool("url", {
      run: async (_a, ctx) =>
        JSON.stringify(
          await ctx.elicit({ mode: "url", message: "Log in", url: "https://example.com/login" }),
        ),
    });
    s.tool("sample", {
      run: async (_a, ctx) => {
        const r = await ctx.sample({
          messages: [{ role: "user", content: { type: "text", text: "Hi" } }],
          maxTokens: 10,
        });
        return `model said: ${(r.content as { text: string }).text}`;
      },
    });
    s.tool("roots", { run: async (_a, ctx) => (await ctx.roots()).map((r) => r.uri).join(",") });
    return s;
  }

  it("elicits through the SDK client's handler, form mode with every 2025-11-25 schema shape", async () => {
    const client = await sdkClient(server(), { capabilities: { elicitation: { form: {}, url: {} } } });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params);
      return { action: "accept", content: { name: "Ada" } };
    });
    const r = await client.callTool({ name: "ask", arguments: {} });
    expect(r).toEqual({ content: [{ type: "text", text: '{"action":"accept","content":{"name":"Ada"}}' }] });
    expect(asked[0]).toMatchObject({
      mode: "form",
      message: "Who are you?",
      requestedSchema: { required: ["name"] },
    });
  });

  it("elicits in URL mode with an elicitationId", async () => {
    const client = await sdkClient(server(), { capabilities: { elicitation: { form: {}, url: {} } } });
    const asked: any[] = [];
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params);
      return { action: "accept" };
    });
    expect(await client.callTool({ name: "url", arguments: {} })).toEqual({
      content: [{ type: "text", text: '{"action":"accept"}' }],
    });
    expect(asked[0]).toMatchObject({ mode: "url", message: "Log in", url: "https://example.com/login" });
    expect(typeof asked[0].elicitationId).toBe("string");
  });

  it("samples and lists roots through the SDK client's handlers", async () => {
    const client = await sdkClient(server(), {
      capabilities: { sampling: {}, roots: { listChanged: true } },
    });
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: "assistant",
      content: { type: "text", text: "hello" },
      model: "m",
      stopReason: "endTurn",
    }));
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: "file:///a", name: "a" }, { uri: "file:///b" }],
    }));
    expect(await client.callTool({ name: "sample", arguments: {} })).toEqual({
      content: [{ type: "text", text: "model said: hello" }],
    });
    expect(await client.callTool({ name: "roots", arguments: {} })).toEqual({
      content: [{ type: "text", text: "file:///a,file:///b" }],
    });
  });

  it("refuses when the client lacks the capability, with a clear error", async () => {
    const client = await connect(server());
    for (const [tool, text] of [
      [
        "ask",
        "The client does not support form elicitation: it did not declare the `elicitation` capability",
      ],
      [
        "url",
        "The client does not support URL-mode elicitation: it did not declare the `elicitation.url` capability",
      ],
      ["sample", "The client does not support sampling: it did not declare the `sampling` capability"],
      ["roots", "The client does not support roots: it did not declare the `roots` capability"],
    ] as const) {
      expect(await client.callTool(tool)).toEqual({ content: [{ type: "text", text }], isError: true });
    }
  });

  it("refuses elicitation on 2025-03-26, which has none", async () => {
    const client = await connect(server(), {
      protocolVersion: "2025-03-26",
      capabilities: { elicitation: {} },
    });
    const r = await client.callTool("ask");
    expect(r.isError).toBe(true);
  });

  it("times out when the client never answers, and tells it with notifications/cancelled", async () => {
    const p = rawPeer(server());
    await p.initialize("2025-11-25", { sampling: {} });
    const answer = await p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "sample" } });
    expect(answer.result).toEqual({
      content: [{ type: "text", text: "The client did not answer sampling/createMessage within 200 ms" }],
      isError: true,
    });
    expect(p.sent.map((m) => m.method)).toEqual(["sampling/createMessage", "notifications/cancelled"]);
    expect(p.sent[1].params.requestId).toBe(p.sent[0].id);
  });

  it("routes the client's error answer back to the request that asked", async () => {
    const p = rawPeer(server());
    await p.initialize("2025-11-25", { roots: {} });
    const call = p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "roots" } });
    await tick();
    const asked = p.sent[0];
    expect(asked).toEqual({ jsonrpc: "2.0", id: asked.id, method: "roots/list", params: {} });
    await p.send({ jsonrpc: "2.0", id: asked.id, error: { code: -32601, message: "no roots here" } });
    expect((await call).result).toEqual({
      content: [{ type: "text", text: "no roots here" }],
      isError: true,
    });
  });
});
