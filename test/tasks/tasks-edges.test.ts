/** Tasks at 2026-07-28 at their edges: an error spelled per reader, a cancel with questions open, a task made after the answer. */
import { describe, expect, it } from "vitest";
import { McpError, McpServer, MemoryTaskStore, type TaskRecord } from "../../src/index.js";
import { tick, twoQuestions, unhandledDuring } from "../helpers.js";
import { modernPeer, SERVER_META } from "../modern-helpers.js";

const TASKS = "io.modelcontextprotocol/tasks";

describe("tasks at 2026-07-28", () => {
  it("a task that failed with -32002 shows -32602 to tasks/get, as the revision spells a missing resource", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    let fail!: () => void;
    const gate = new Promise<void>((r) => (fail = r));
    s.tool("lookup", {
      task: "optional",
      run: async (_a, ctx) => {
        await ctx.task();
        await gate;
        throw new McpError(-32002, "Resource not found: test://x", { uri: "test://x" });
      },
    });
    const p = modernPeer(s);
    const caps = { extensions: { [TASKS]: {} } };
    const created = (await p.request("tools/call", { name: "lookup" }, caps)).answer.result;
    fail();
    await tick();
    const got = (await p.request("tasks/get", { taskId: created.taskId }, caps)).answer;
    expect(got.result.status).toBe("failed");
    expect(got.result.error).toEqual({
      code: -32602,
      message: "Resource not found: test://x",
      data: { uri: "test://x" },
    });
    expect(got.result._meta).toEqual(SERVER_META);
  });
});

describe("tasks at 2026-07-28: cancelling a task with two open questions", () => {
  it("leaves no unhandled rejection behind (the handler awaited only the first)", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    twoQuestions(s, true);
    const p = modernPeer(s);
    const caps = { extensions: { [TASKS]: {} }, elicitation: {} };
    const unhandled = await unhandledDuring(async () => {
      const { taskId } = (await p.request("tools/call", { name: "two" }, caps)).answer.result;
      await tick();
      expect((await p.request("tasks/cancel", { taskId }, caps)).answer.result).toEqual({
        resultType: "complete",
        _meta: SERVER_META,
      });
    });
    expect(unhandled).toEqual([]);
  });
});

describe("tasks at 2026-07-28: ctx.task() not awaited before the handler returns", () => {
  it("the task made after the answer still ends with the handler's outcome (it is not left working)", async () => {
    const saved: TaskRecord[] = [];
    // a store slower than the handler: the call is answered before its task exists
    class Watched extends MemoryTaskStore {
      override async create(task: TaskRecord) {
        await tick();
        return super.create(task);
      }
      override async set(task: TaskRecord) {
        saved.push(task);
        return super.set(task);
      }
    }
    const s = new McpServer({ name: "t", version: "1.0.0", tasks: { store: new Watched() } });
    s.tool("quick", {
      task: "optional",
      run: (_a, ctx) => {
        void ctx.task();
        return "quick";
      },
    });
    const p = modernPeer(s);
    const answer = (await p.request("tools/call", { name: "quick" }, { extensions: { [TASKS]: {} } })).answer;
    expect(answer.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "quick" }],
      _meta: SERVER_META,
    });
    await tick();
    await tick();
    expect(saved.map((t) => t.status)).toEqual(["completed"]);
    expect(saved[0]!.result).toEqual({ content: [{ type: "text", text: "quick" }] });
  });
});
