import { describe, expect, it, vi } from "vitest";
import { McpError, McpServer, MemoryTaskStore, type TaskRecord, type TaskStore } from "../../src/index.js";
import { rawPeer, tick } from "../helpers.js";
import { meta, modernPeer, SERVER_META } from "../modern-helpers.js";

const SUB = "io.modelcontextprotocol/subscriptionId";

const TASKS = "io.modelcontextprotocol/tasks";
const WITH = { extensions: { [TASKS]: {} }, elicitation: {} };
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function server(options: object = {}) {
  const gate = deferred();
  const seen: { aborted?: boolean } = {};
  const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {}, ...options });
  s.tool("plain", { run: () => "plain" });
  s.tool("job", {
    task: "optional",
    run: async (_a, ctx) => {
      const task = await ctx.task({ statusMessage: "started" });
      await gate.promise;
      await task?.status("finishing");
      return task ? `done as ${task.taskId}` : "done at once";
    },
  });
  s.tool("must", { task: "required", run: async (_a, ctx) => ((await ctx.task()) ? "task" : "sync") });
  s.tool("wait", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
      seen.aborted = ctx.signal.aborted;
      return "a result after the cancel, which nobody sees";
    },
  });
  s.tool("ask", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      const schema = { type: "object" as const, properties: { n: { type: "string" } } };
      const [a, b] = await Promise.all([
        ctx.elicit({ message: "A?", requestedSchema: schema }, { key: "a" }),
        ctx.elicit({ message: "B?", requestedSchema: schema }, { key: "b" }),
      ]);
      return `${a.content?.n}+${b.content?.n}`;
    },
  });
  s.tool("broken", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      throw new McpError(-32603, "Broke", { why: "test" });
    },
  });
  s.tool("oops", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      throw new Error("Tool failed");
    },
  });
  s.tool("first_ask", {
    task: "required",
    run: async (_a, ctx) => {
      const r = await ctx.elicit(
        { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
        { key: "name" },
      );
      await ctx.task();
      return `Hi ${r.content?.name}`;
    },
  });
  return { s, gate, seen };
}

/** tasks/get until `done(result)` (the task runs in the background; each poll lets it move on). */
async function until(p: ReturnType<typeof modernPeer>, taskId: string, done: (r: any) => boolean) {
  for (let i = 0; i < 50; i++) {
    const r = (await p.request("tasks/get", { taskId }, WITH)).answer.result;
    if (done(r)) return r;
    await tick();
  }
  throw new Error(`task ${taskId} did not get there`);
}

describe("tasks (io.modelcontextprotocol/tasks)", () => {
  it("is declared in server/discover only while a tool may run as a task, and never in the initialize era", async () => {
    const { s } = server();
    const caps = (await modernPeer(s).request("server/discover")).answer.result.capabilities;
    expect(caps.extensions).toEqual({ [TASKS]: {} });
    expect(caps.tasks).toBeUndefined();
    const init = await rawPeer(s).initialize();
    expect(init.result.capabilities.extensions).toBeUndefined();
    const bare = new McpServer({ name: "t", version: "1.0.0" });
    bare.tool("x", { run: () => "x" });
    expect((await modernPeer(bare).request("server/discover")).answer.result.capabilities.extensions).toBe(
      undefined,
    );
  });

  it("a client without the extension: optional tools run inline, required ones and tasks/* are -32021", async () => {
    const { s, gate } = server();
    const p = modernPeer(s);
    gate.resolve();
    expect((await p.request("tools/call", { name: "job" })).answer.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "done at once" }],
      _meta: SERVER_META,
    });
    const required = {
      code: -32021,
      message: `Missing required client capability: extensions`,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    };
    expect((await p.request("tools/call", { name: "must" })).answer).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: required,
    });
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"])
      expect((await p.request(method, { taskId: "x", inputResponses: {} })).answer.error).toEqual(required);
    expect((await p.request("tasks/result", { taskId: "x" }, WITH)).answer.error.code).toBe(-32601);
    expect((await p.request("tasks/list", {}, WITH)).answer.error.code).toBe(-32601);
  });

  it("creates the task before answering, then inlines the result once the handler returns", async () => {
    const { s, gate } = server();
    const p = modernPeer(s);
    const created = (await p.request("tools/call", { name: "job" }, WITH)).answer.result;
    expect(created).toEqual({
      resultType: "task",
      taskId: expect.any(String),
      status: "working",
      statusMessage: "started",
      createdAt: ISO,
      lastUpdatedAt: ISO,
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
      _meta: SERVER_META,
    });
    const { taskId } = created;
    expect((await p.request("tasks/get", { taskId }, WITH)).answer.result).toEqual({
      ...created,
      resultType: "complete",
    });
    gate.resolve();
    const done = await until(p, taskId, (r) => r.status === "completed");
    expect(done).toEqual({
      resultType: "complete",
      taskId,
      status: "completed",
      statusMessage: "finishing",
      createdAt: created.createdAt,
      lastUpdatedAt: ISO,
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
      // what the call would have answered at once, resultType included
      result: { resultType: "complete", content: [{ type: "text", text: `done as ${taskId}` }] },
      _meta: SERVER_META,
    });
    // cancelling a finished task is the same empty acknowledgement, and changes nothing
    expect((await p.request("tasks/cancel", { taskId }, WITH)).answer.result).toEqual({
      resultType: "complete",
      _meta: SERVER_META,
    });
    expect((await p.request("tasks/get", { taskId }, WITH)).answer.result.status).toBe("completed");
  });

  it("a protocol error fails the task; a thrown error is a completed task with isError", async () => {
    const { s } = server();
    const p = modernPeer(s);
    const broken = (await p.request("tools/call", { name: "broken" }, WITH)).answer.result.taskId;
    const failed = await until(p, broken, (r) => r.status === "failed");
    expect(failed.error).toEqual({ code: -32603, message: "Broke", data: { why: "test" } });
    expect(failed.result).toBeUndefined();
    const oops = (await p.request("tools/call", { name: "oops" }, WITH)).answer.result.taskId;
    const completed = await until(p, oops, (r) => r.status === "completed");
    expect(completed.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "Tool failed" }],
      isError: true,
    });
  });

  it("cancellation reaches the handler's signal, and the task stays cancelled", async () => {
    const { s, seen } = server();
    const p = modernPeer(s);
    const { taskId } = (await p.request("tools/call", { name: "wait" }, WITH)).answer.result;
    expect((await p.request("tasks/cancel", { taskId }, WITH)).answer.result).toEqual({
      resultType: "complete",
      _meta: SERVER_META,
    });
    await tick();
    expect(seen.aborted).toBe(true);
    const r = (await p.request("tasks/get", { taskId }, WITH)).answer.result;
    expect(r.status).toBe("cancelled");
    expect(r.result).toBeUndefined();
  });

  it("input in a task: input_required lists every open request; tasks/update answers some or all", async () => {
    const { s } = server();
    const p = modernPeer(s);
    const { taskId } = (await p.request("tools/call", { name: "ask" }, WITH)).answer.result;
    const waiting = await until(p, taskId, (r) => Object.keys(r.inputRequests ?? {}).length === 2);
    expect(waiting.status).toBe("input_required");
    expect(waiting.inputRequests.a).toEqual({
      method: "elicitation/create",
      params: { message: "A?", requestedSchema: { type: "object", properties: { n: { type: "string" } } } },
    });
    const ack = { resultType: "complete", _meta: SERVER_META };
    const answer = (n: string) => ({ action: "accept", content: { n } });
    // an unknown key and a malformed answer are ignored
    expect(
      (await p.request("tasks/update", { taskId, inputResponses: { zz: answer("z"), b: { no: 1 } } }, WITH))
        .answer.result,
    ).toEqual(ack);
    expect(
      (await p.request("tasks/update", { taskId, inputResponses: { a: answer("1") } }, WITH)).answer.result,
    ).toEqual(ack);
    const partial = (await p.request("tasks/get", { taskId }, WITH)).answer.result;
    expect(partial.status).toBe("input_required");
    expect(Object.keys(partial.inputRequests)).toEqual(["b"]);
    await p.request("tasks/update", { taskId, inputResponses: { b: answer("2") } }, WITH);
    const done = await until(p, taskId, (r) => r.status === "completed");
    expect(done.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "1+2" }] });
    expect(done.inputRequests).toBeUndefined();
    expect((await p.request("tasks/update", { taskId, inputResponses: [] }, WITH)).answer.error.code).toBe(
      -32602,
    );
  });

  it("an input round comes before the task: round 1 asks, round 2 creates the task with the answer", async () => {
    const { s } = server();
    const p = modernPeer(s);
    const round1 = (await p.request("tools/call", { name: "first_ask" }, WITH)).answer.result;
    expect(round1.resultType).toBe("input_required");
    expect(Object.keys(round1.inputRequests)).toEqual(["name"]);
    const round2 = (
      await p.request(
        "tools/call",
        {
          name: "first_ask",
          requestState: round1.requestState,
          inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
        },
        WITH,
      )
    ).answer.result;
    expect(round2.resultType).toBe("task");
    expect(round2.requestState).toBeUndefined();
    const done = await until(p, round2.taskId, (r) => r.status === "completed");
    expect(done.result.content[0].text).toBe("Hi Ada");
  });

  it("an unknown task, and another principal's, are -32602", async () => {
    const { s } = server();
    const alice = modernPeer(s, { subject: "alice" });
    const bob = modernPeer(s, { subject: "bob" });
    const { taskId } = (await alice.request("tools/call", { name: "wait" }, WITH)).answer.result;
    const unknown = (id: string) => ({ code: -32602, message: `Unknown task: ${id}`, data: { taskId: id } });
    expect((await bob.request("tasks/get", { taskId }, WITH)).answer.error).toEqual(unknown(taskId));
    expect((await bob.request("tasks/cancel", { taskId }, WITH)).answer.error).toEqual(unknown(taskId));
    expect((await alice.request("tasks/get", { taskId: "nope" }, WITH)).answer.error).toEqual(
      unknown("nope"),
    );
    expect((await alice.request("tasks/get", { taskId: 7 }, WITH)).answer.error).toEqual({
      code: -32602,
      message: "Invalid params: taskId must be a string",
    });
    await alice.request("tasks/cancel", { taskId }, WITH);
  });

  it("keeps state in the given store, with the given ttl and poll interval", async () => {
    const memory = new MemoryTaskStore();
    const writes: string[] = [];
    const store: TaskStore = {
      create: (t) => {
        writes.push(`create ${t.status}`);
        return memory.create(t);
      },
      get: (id) => memory.get(id),
      set: (t) => {
        writes.push(`set ${t.status}`);
        return memory.set(t);
      },
    };
    const { s, gate } = server({ tasks: { store, ttlMs: 5000, pollIntervalMs: 250 } });
    const p = modernPeer(s);
    const created = (await p.request("tools/call", { name: "job" }, WITH)).answer.result;
    expect([created.ttlMs, created.pollIntervalMs]).toEqual([5000, 250]);
    gate.resolve();
    await until(p, created.taskId, (r) => r.status === "completed");
    expect(writes).toEqual(["create working", "set working", "set completed"]);
  });

  it("before 2025-11-25 there are no tasks: ctx.task() is undefined and tasks/* do not exist", async () => {
    const { s, gate } = server();
    gate.resolve();
    const legacy = rawPeer(s);
    const init = await legacy.initialize("2025-06-18");
    expect(init.result.capabilities.tasks).toBeUndefined();
    const call = (id: number, method: string, params: object) =>
      legacy.send({ jsonrpc: "2.0", id, method, params });
    expect(await call(1, "tools/call", { name: "job", arguments: {}, task: {} })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "done at once" }] },
    });
    expect((await call(2, "tasks/get", { taskId: "x" })).error.code).toBe(-32601);
    const tools = (await call(3, "tools/list", {})).result.tools;
    expect(tools.find((t: { name: string }) => t.name === "job").execution).toBeUndefined();
  });

  it("rejects a bad task option at registration", () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    expect(() => s.tool("x", { task: "always" as never, run: () => "" })).toThrow(
      'Tool "x": task must be "optional" or "required"',
    );
    expect(() => new McpServer({ name: "t", version: "1", tasks: { ttlMs: 0 } })).toThrow(RangeError);
  });
});

describe("MemoryTaskStore", () => {
  const record = (taskId: string, ttlMs: number | null): TaskRecord => ({
    taskId,
    status: "working",
    createdAt: "2026-01-01T00:00:00.000Z",
    lastUpdatedAt: "2026-01-01T00:00:00.000Z",
    ttlMs,
  });

  it("forgets a task once its ttl has passed; full of live tasks it refuses one more and forgets none", async () => {
    let now = 1000;
    const store = new MemoryTaskStore({ now: () => now, maxTasks: 2 });
    await store.create(record("a", 100));
    await store.create(record("b", null));
    expect((await store.get("a"))?.taskId).toBe("a");
    now = 1100;
    expect(await store.get("a")).toBeUndefined();
    await store.create(record("c", 100));
    now = 1150;
    const refused = await store.create(record("d", 100)).then(
      () => undefined,
      (e: McpError) => ({ code: e.code, message: e.message, data: e.data }),
    );
    expect(refused).toEqual({
      code: -32000,
      message: "Service Unavailable: the server holds as many tasks as it may (2)",
      data: { limit: "tasks", scope: "server", max: 2, retryAfterMs: 50 },
    });
    expect((await store.get("b"))?.taskId).toBe("b");
    expect((await store.get("c"))?.taskId).toBe("c");
    expect(await store.get("d")).toBeUndefined();
    now = 1200;
    await store.create(record("d", 100));
    expect((await store.get("d"))?.taskId).toBe("d");
  });

  it("hands out copies: a caller's change is not the store's until set", async () => {
    const store = new MemoryTaskStore();
    await store.create(record("a", null));
    const got = await store.get("a");
    got!.status = "completed";
    expect((await store.get("a"))?.status).toBe("working");
    await store.set(got!);
    expect((await store.get("a"))?.status).toBe("completed");
    await store.set(record("unknown", null));
    expect(await store.get("unknown")).toBeUndefined();
  });
});

describe("notifications/tasks on subscriptions/listen", () => {
  function listen(
    s: McpServer,
    id: string,
    notifications: unknown,
    capabilities: object,
    auth?: { subject: string },
  ) {
    const stream: any[] = [];
    const abort = new AbortController();
    const conn = s.connect({ send: () => {}, ...(auth ? { auth } : {}) });
    const answer = s.handle(
      {
        jsonrpc: "2.0",
        id,
        method: "subscriptions/listen",
        params: { _meta: meta(capabilities), notifications },
      },
      conn,
      { send: (m) => void stream.push(JSON.parse(JSON.stringify(m))), signal: abort.signal },
    );
    return { stream, abort, answer };
  }

  it("tells a listen that names the task each change, as the detailed task, and nobody else", async () => {
    const { s, gate } = server();
    const p = modernPeer(s);
    const { taskId } = (await p.request("tools/call", { name: "job" }, WITH)).answer.result;
    const l = listen(s, "L1", { taskIds: [taskId] }, WITH);
    const other = listen(s, "L2", { taskIds: ["someone-else"] }, WITH);
    const bob = listen(s, "L3", { taskIds: [taskId] }, WITH, { subject: "bob" });
    await tick();
    expect(l.stream[0]).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: { [SUB]: "L1" }, notifications: { taskIds: [taskId] } },
    });
    gate.resolve();
    await until(p, taskId, (r) => r.status === "completed");
    await tick();
    const told = l.stream.slice(1).map((m) => [m.method, m.params.status, m.params.taskId, m.params._meta]);
    expect(told).toEqual([
      ["notifications/tasks", "working", taskId, { [SUB]: "L1" }],
      ["notifications/tasks", "completed", taskId, { [SUB]: "L1" }],
    ]);
    expect(l.stream[2].params.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: `done as ${taskId}` }],
    });
    expect(l.stream[2].params.owner).toBeUndefined();
    expect(other.stream).toHaveLength(1);
    expect(bob.stream).toHaveLength(1);
    for (const x of [l, other, bob]) x.abort.abort();
  });

  it("refuses taskIds from a client without the extension (-32021)", async () => {
    const { s } = server();
    const l = listen(s, "L1", { taskIds: ["x"] }, {});
    expect(await l.answer).toEqual({
      jsonrpc: "2.0",
      id: "L1",
      error: {
        code: -32021,
        message: "Missing required client capability: extensions",
        data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
      },
    });
    const bad = listen(s, "L2", { taskIds: [1] }, WITH);
    expect(((await bad.answer) as { error?: unknown })?.error).toEqual({
      code: -32602,
      message: "notifications.taskIds must be a list of task ids",
    });
  });
});

describe("a task whose ttl has passed", () => {
  it("stops waiting: its open question rejects and its signal aborts", async () => {
    vi.useFakeTimers();
    try {
      const seen: string[] = [];
      const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {}, tasks: { ttlMs: 1000 } });
      s.tool("ask", {
        task: "optional",
        run: async (_a, ctx) => {
          await ctx.task();
          ctx.signal.addEventListener("abort", () => seen.push("aborted"));
          try {
            await ctx.elicit({ message: "?", requestedSchema: { type: "object", properties: {} } });
          } catch (e) {
            seen.push((e as Error).message);
          }
          return "late";
        },
      });
      const p = modernPeer(s);
      const { taskId } = (await p.request("tools/call", { name: "ask" }, WITH)).answer.result;
      await vi.advanceTimersByTimeAsync(0);
      expect((await p.request("tasks/get", { taskId }, WITH)).answer.result.status).toBe("input_required");
      await vi.advanceTimersByTimeAsync(1000);
      expect(seen).toEqual(["aborted", "The task expired"]);
      expect((await p.request("tasks/get", { taskId }, WITH)).answer.error.code).toBe(-32602);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a task read in another revision than the one that started it", () => {
  it("keeps its error as thrown: -32002 for tasks/result at 2025-11-25, -32602 with the uri for 2026-07-28", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    const missing = { code: -32002, message: "Resource not found: x://1", data: { uri: "x://1" } };
    s.tool("lookup", {
      task: "optional",
      run: async (_a, ctx) => {
        await ctx.task();
        throw new McpError(missing.code, missing.message, missing.data);
      },
    });
    // one principal in both revisions: an anonymous 2025 session's task is its session's alone
    const alice = { subject: "alice" };
    const legacy = rawPeer(s, alice);
    await legacy.initialize("2025-11-25");
    const started = await legacy.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "lookup", arguments: {}, task: {} },
    });
    const taskId = started.result.task.taskId;
    expect(
      (await legacy.send({ jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } })).error,
    ).toEqual(missing);
    const modern = modernPeer(s, alice);
    const read = (await modern.request("tasks/get", { taskId }, WITH)).answer.result;
    expect(read.status).toBe("failed");
    expect(read.error).toEqual({ ...missing, code: -32602 });
  });

  it("a task whose outcome is still being saved: tasks/result waits for it, tasks/cancel finds it over", async () => {
    const memory = new MemoryTaskStore();
    const saving: (() => void)[] = [];
    // a store whose writes of terminal records land only when the test lets them
    const store: TaskStore = {
      create: (t) => memory.create(t),
      get: (id) => memory.get(id),
      set: (t) =>
        t.status === "working"
          ? memory.set(t)
          : new Promise<void>((resolve) => saving.push(() => void memory.set(t).then(() => resolve()))),
    };
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {}, tasks: { store } });
    s.tool("quick", {
      task: "optional",
      run: async (_a, ctx) => {
        await ctx.task();
        return "done";
      },
    });
    const legacy = rawPeer(s);
    await legacy.initialize("2025-11-25");
    const call = (id: number, method: string, params: object) =>
      legacy.send({ jsonrpc: "2.0", id, method, params });
    const taskId = (await call(1, "tools/call", { name: "quick", arguments: {}, task: {} })).result.task
      .taskId;
    await expect.poll(() => saving.length).toBe(1);
    const result = call(2, "tasks/result", { taskId });
    expect((await call(3, "tasks/cancel", { taskId })).error).toEqual({
      code: -32602,
      message: `Task ${taskId} is already completed`,
    });
    saving.shift()!();
    expect((await result).result).toEqual({
      content: [{ type: "text", text: "done" }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId } },
    });
    expect((await memory.get(taskId))?.status).toBe("completed");
  });
});
