// 2025-11-25 tasks (experimental core): the client asks for a task with params.task.
import { describe, expect, it } from "vitest";
import { McpError, McpServer } from "../../src/index.js";
import { rawPeer, tick } from "../helpers.js";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function session() {
  const gate = deferred();
  const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {}, tasks: { ttlMs: 60_000 } });
  s.tool("plain", { run: () => "plain" });
  s.tool("job", {
    task: "optional",
    run: async (_a, ctx) => {
      const task = await ctx.task();
      await gate.promise;
      return `done as ${task?.taskId}`;
    },
  });
  s.tool("must", { task: "required", run: () => "ran" });
  s.tool("bad", {
    task: "optional",
    run: () => ({ content: [{ type: "text", text: "no" }], isError: true }),
  });
  s.tool("proto", {
    task: "optional",
    run: () => {
      throw new McpError(-32001, "Gone", { why: 1 });
    },
  });
  s.tool("wait", {
    task: "optional",
    run: (_a, ctx) =>
      new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))),
  });
  s.tool("confirm", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      const r = await ctx.elicit({ message: "Sure?", requestedSchema: { type: "object", properties: {} } });
      return `answer: ${r.action}`;
    },
  });
  const peer = rawPeer(s);
  const init = await peer.initialize("2025-11-25", { elicitation: {} });
  let id = 1;
  const call = (method: string, params: object) => peer.send({ jsonrpc: "2.0", id: id++, method, params });
  return { call, gate, init, peer };
}

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);

describe("tasks at 2025-11-25", () => {
  it("declares the tasks capability and each tool's taskSupport", async () => {
    const { init, call } = await session();
    expect(init.result.capabilities.tasks).toEqual({ cancel: {}, requests: { tools: { call: {} } } });
    expect(init.result.capabilities.extensions).toBeUndefined();
    const tools = (await call("tools/list", {})).result.tools;
    expect(tools.map((t: { name: string; execution?: unknown }) => [t.name, t.execution])).toEqual([
      ["plain", undefined],
      ["job", { taskSupport: "optional" }],
      ["must", { taskSupport: "required" }],
      ["bad", { taskSupport: "optional" }],
      ["proto", { taskSupport: "optional" }],
      ["wait", { taskSupport: "optional" }],
      ["confirm", { taskSupport: "optional" }],
    ]);
  });

  it("params.task creates the task at once; tasks/result waits for the result and names the task", async () => {
    const { call, gate } = await session();
    const created = (await call("tools/call", { name: "job", arguments: {}, task: { ttl: 5000 } })).result;
    expect(created).toEqual({
      task: {
        taskId: expect.any(String),
        status: "working",
        createdAt: ISO,
        lastUpdatedAt: ISO,
        ttl: 5000,
        pollInterval: 1000,
      },
    });
    const { taskId } = created.task;
    expect((await call("tasks/get", { taskId })).result).toEqual(created.task);
    const result = call("tasks/result", { taskId });
    gate.resolve();
    expect((await result).result).toEqual({
      content: [{ type: "text", text: `done as ${taskId}` }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId } },
    });
    expect((await call("tasks/get", { taskId })).result.status).toBe("completed");
    // a ttl above the server's is capped
    const capped = (await call("tools/call", { name: "job", arguments: {}, task: { ttl: 1e9 } })).result;
    expect(capped.task.ttl).toBe(60_000);
  });

  it("an isError result fails the task, a protocol error is tasks/result's error", async () => {
    const { call } = await session();
    const bad = (await call("tools/call", { name: "bad", arguments: {}, task: {} })).result.task.taskId;
    expect((await call("tasks/result", { taskId: bad })).result).toEqual({
      content: [{ type: "text", text: "no" }],
      isError: true,
      _meta: { "io.modelcontextprotocol/related-task": { taskId: bad } },
    });
    expect((await call("tasks/get", { taskId: bad })).result.status).toBe("failed");
    const proto = (await call("tools/call", { name: "proto", arguments: {}, task: {} })).result.task.taskId;
    expect((await call("tasks/result", { taskId: proto })).error).toEqual({
      code: -32001,
      message: "Gone",
      data: { why: 1 },
    });
  });

  it("tasks/cancel answers the cancelled task and aborts the handler; a terminal task is -32602", async () => {
    const { call } = await session();
    const { taskId } = (await call("tools/call", { name: "wait", arguments: {}, task: {} })).result.task;
    const cancelled = (await call("tasks/cancel", { taskId })).result;
    expect(cancelled).toMatchObject({ taskId, status: "cancelled", ttl: 60_000 });
    expect((await call("tasks/cancel", { taskId })).error).toEqual({
      code: -32602,
      message: `Task ${taskId} is already cancelled`,
    });
    expect((await call("tasks/result", { taskId })).error.message).toBe("The task was cancelled");
  });

  it("a task's request to the client goes over the session and names the task", async () => {
    const { call, peer } = await session();
    const { taskId } = (await call("tools/call", { name: "confirm", arguments: {}, task: {} })).result.task;
    const result = call("tasks/result", { taskId });
    await tick();
    const asked = peer.sent.find((m) => m.method === "elicitation/create");
    expect(asked.params).toEqual({
      message: "Sure?",
      requestedSchema: { type: "object", properties: {} },
      mode: "form",
      _meta: { "io.modelcontextprotocol/related-task": { taskId } },
    });
    await peer.send({ jsonrpc: "2.0", id: asked.id, result: { action: "decline" } });
    expect((await result).result.content).toEqual([{ type: "text", text: "answer: decline" }]);
  });

  it("task support is negotiated per tool: -32601 for a task where none is allowed, or none where one is required", async () => {
    const { call } = await session();
    expect((await call("tools/call", { name: "plain", arguments: {}, task: {} })).error).toEqual({
      code: -32601,
      message: "Method not found: tools/call of plain does not run as a task",
    });
    expect((await call("tools/call", { name: "must", arguments: {} })).error).toEqual({
      code: -32601,
      message: "Method not found: tools/call of must needs a task (params.task)",
    });
    expect((await call("tools/call", { name: "job", arguments: {}, task: 3 })).error.code).toBe(-32602);
    expect((await call("tasks/update", { taskId: "x", inputResponses: {} })).error.code).toBe(-32601);
    expect((await call("tasks/get", { taskId: "nope" })).error.code).toBe(-32602);
  });
});

describe("a 2025-11-25 session is served the extensions it was told of at initialize", () => {
  it("tasks registered after initialize: -32601 for its methods, as for any undeclared capability", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    s.tool("plain", { run: () => "plain" });
    const before = rawPeer(s);
    expect((await before.initialize("2025-11-25")).result.capabilities.tasks).toBeUndefined();
    s.tool("job", { task: "optional", run: () => "done" });
    const after = rawPeer(s);
    expect((await after.initialize("2025-11-25")).result.capabilities.tasks).toBeDefined();
    const get = { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId: "nope" } };
    expect(await before.send(get)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32601, message: "Method not found: tasks/get" },
    });
    expect((await after.send(get)).error.code).toBe(-32602);
  });
});
