/** Regressions found in the review of the core, the 2026-07-28 era and the extensions. */
import { describe, expect, it } from "vitest";
import { McpError, McpServer, MemoryTaskStore, type TaskRecord } from "../src/index.js";
import { rawPeer, tick } from "./helpers.js";
import { meta, modernPeer, SERVER_META } from "./modern-helpers.js";

const TASKS = "io.modelcontextprotocol/tasks";
const CLOSED = { code: -32600, message: "Invalid Request: the connection is closed" };

/** The rejections left unhandled while `run` runs (and two ticks after). */
async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    await run();
    await tick();
    await tick();
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  return unhandled;
}

/** A tool that asks twice and awaits the answers one by one: a failure of the first leaves the second. */
function twoQuestions(s: McpServer, task: boolean) {
  const schema = { type: "object" as const, properties: {} };
  s.tool("two", {
    ...(task ? { task: "optional" as const } : {}),
    run: async (_a, ctx) => {
      if (task) await ctx.task();
      const a = ctx.elicit({ message: "A?", requestedSchema: schema }, { key: "a" });
      const b = ctx.elicit({ message: "B?", requestedSchema: schema }, { key: "b" });
      await a;
      await b;
      return "both";
    },
  });
}

function server() {
  const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
  const ran: string[] = [];
  s.tool("side_effect", {
    run: () => {
      ran.push("side_effect");
      return "done";
    },
  });
  s.resource("test://a", { read: () => "a" });
  return { s, ran };
}

describe("a request on a closed connection", () => {
  it("2026-07-28: subscriptions/listen is answered at once instead of staying open forever", async () => {
    const { s } = server();
    const p = modernPeer(s);
    p.connection.close();
    const listen = p.request("subscriptions/listen", { notifications: { toolsListChanged: true } });
    const settled = await Promise.race([listen, tick().then(() => "pending")]);
    expect(settled).toEqual({ answer: { jsonrpc: "2.0", id: 1, error: CLOSED }, stream: [] });
    expect(p.connection.listens.size).toBe(0);
  });

  it("2026-07-28: a tool is not run for a peer that is gone", async () => {
    const { s, ran } = server();
    const p = modernPeer(s);
    p.connection.close();
    expect((await p.request("tools/call", { name: "side_effect" })).answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: CLOSED,
    });
    expect(ran).toEqual([]);
  });

  it("initialize era: the answer says the connection is closed, not that it was never initialized", async () => {
    const { s, ran } = server();
    const p = rawPeer(s);
    await p.initialize();
    p.connection.close();
    expect(
      await p.send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "side_effect" } }),
    ).toEqual({ jsonrpc: "2.0", id: 5, error: CLOSED });
    expect(ran).toEqual([]);
  });
});

describe("server.skill(...).remove()", () => {
  it("a stale handle does not remove the skill registered again under the same name", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    const first = s.skill("notes", { description: "First", instructions: "one" });
    first.remove();
    s.skill("notes", { description: "Second", instructions: "two" });
    first.remove();
    const p = modernPeer(s);
    const list = (await p.request("skills/list")).answer.result;
    expect(
      list.skills.map((e: { frontmatter: { description: string } }) => e.frontmatter.description),
    ).toEqual(["Second"]);
  });
});

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

describe("2026-07-28: the same id twice at once", () => {
  it("the second is refused while the first is in flight, even when both may ask for input", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    s.tool("slow", {
      run: async () => {
        runs++;
        await gate;
        return "slow";
      },
    });
    const p = modernPeer(s);
    const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "slow", _meta: meta() } };
    const first = p.raw(call);
    const second = p.raw(call);
    await tick();
    release();
    expect((await second).answer).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32600, message: "Invalid Request: a request with this id is still in flight" },
    });
    expect((await first).answer.result.content).toEqual([{ type: "text", text: "slow" }]);
    expect(runs).toBe(1);
  });
});

describe("2026-07-28: a connection closed while a request's round opens", () => {
  it("runs no handler for it", async () => {
    const { s, ran } = server();
    const p = modernPeer(s);
    const call = p.request("tools/call", { name: "side_effect" });
    p.connection.close();
    expect((await call).answer).toEqual({ jsonrpc: "2.0", id: 1, error: CLOSED });
    expect(ran).toEqual([]);
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

describe("initialize era: a connection closed while a handler has two questions open", () => {
  it("leaves no unhandled rejection behind (the handler awaited only the first)", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    twoQuestions(s, false);
    const p = rawPeer(s);
    await p.initialize("2025-11-25", { elicitation: {} });
    const unhandled = await unhandledDuring(async () => {
      const call = p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "two" } });
      await tick();
      expect(p.sent.filter((m) => m.method === "elicitation/create")).toHaveLength(2);
      p.connection.close();
      expect(await call).toBeUndefined();
    });
    expect(unhandled).toEqual([]);
  });
});

describe("initialize era: a question asked after the request was cancelled", () => {
  it("is refused without telling the client to cancel a request it never received", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    let outcome: unknown;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    s.tool("late", {
      run: async (_a, ctx) => {
        await new Promise((r) => ctx.signal.addEventListener("abort", r));
        outcome = await ctx
          .elicit({ message: "Still there?", requestedSchema: { type: "object", properties: {} } })
          .catch((e: Error) => e.message);
        done();
        return "late";
      },
    });
    const p = rawPeer(s);
    await p.initialize("2025-11-25", { elicitation: {} });
    const call = p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "late" } });
    await tick();
    await p.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
    await finished;
    expect(await call).toBeUndefined();
    expect(outcome).toBe("Cancelled by the client");
    expect(p.sent).toEqual([]);
  });
});

describe("2026-07-28: the caching hint of resources/list", () => {
  it("is the shortest of statics and templates, and follows a template's removal", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", cache: { ttlMs: 60_000, scope: "public" } });
    s.resource("test://a", { read: () => "a" });
    const t = s.resource("test://t/{id}", { cache: { ttlMs: 5000 }, read: ({ id }) => id });
    const p = modernPeer(s);
    const hint = async () => {
      const { ttlMs, cacheScope } = (await p.request("resources/list")).answer.result;
      return { ttlMs, cacheScope };
    };
    expect(await hint()).toEqual({ ttlMs: 5000, cacheScope: "public" });
    t.remove();
    expect(await hint()).toEqual({ ttlMs: 60_000, cacheScope: "public" });
    s.resource("test://p/{id}", { cache: { scope: "private" }, read: ({ id }) => id });
    expect(await hint()).toEqual({ ttlMs: 60_000, cacheScope: "private" });
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
