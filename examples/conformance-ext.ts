// The fixtures of the suite's extension scenarios: tasks-* (SEP-2663) and sep-2640-skills-*.
import { McpError, type McpServer } from "picomcp";

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

const CONFIRM = {
  type: "object" as const,
  properties: { confirm: { type: "boolean" } },
  required: ["confirm"],
};

/** Registers the tasks and skills fixtures on `server`. */
export function registerExtensionFixtures(server: McpServer): void {
  // ------------------------------------------------ tasks

  server.tool("greet", {
    description: "Greets by name (never a task)",
    input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    run: ({ name }: { name: string }) => `Hello, ${name}!`,
  });

  server.tool("slow_compute", {
    description: "Sleeps for `seconds`, then answers; a task when the client supports tasks",
    input: {
      type: "object",
      properties: { seconds: { type: "number" }, label: { type: "string" } },
      required: ["seconds"],
    },
    task: "optional",
    run: async ({ seconds, label }: { seconds: number; label?: string }, ctx) => {
      if (seconds <= 0) return `Computed ${label ?? ""} at once`;
      const task = await ctx.task({ statusMessage: "computing" });
      await sleep(seconds * 1000, ctx.signal);
      await task?.status("done");
      return `Computed ${label ?? ""} in ${seconds}s`;
    },
  });

  server.tool("failing_job", {
    description: "Always a task; fails with a tool error after a second",
    task: "required",
    run: async (_args, ctx) => {
      await ctx.task();
      await sleep(1000, ctx.signal);
      throw new Error("The job failed");
    },
  });

  server.tool("protocol_error_job", {
    description: "A task that ends in a protocol error",
    task: "optional",
    run: async (_args, ctx) => {
      await ctx.task();
      await sleep(200, ctx.signal);
      throw new McpError(-32603, "The job hit a protocol error");
    },
  });

  server.tool("confirm_delete", {
    description: "A task that asks the user to confirm first",
    input: { type: "object", properties: { filename: { type: "string" } }, required: ["filename"] },
    task: "optional",
    run: async ({ filename }: { filename: string }, ctx) => {
      await ctx.task();
      const r = await ctx.elicit(
        { message: `Delete ${filename}?`, requestedSchema: CONFIRM },
        { key: "confirm" },
      );
      return r.action === "accept" && r.content?.confirm ? `Deleted ${filename}` : `Kept ${filename}`;
    },
  });

  server.tool("multi_input", {
    description: "A task that asks two questions at once",
    task: "optional",
    run: async (_args, ctx) => {
      await ctx.task();
      const schema = { type: "object" as const, properties: { name: { type: "string" } } };
      const [a, b] = await Promise.all([
        ctx.elicit({ message: "First name?", requestedSchema: schema }, { key: "first" }),
        ctx.elicit({ message: "Second name?", requestedSchema: schema }, { key: "second" }),
      ]);
      return `Got ${a.content?.name} and ${b.content?.name}`;
    },
  });

  server.tool("test_tool_with_task", {
    description: "Asks for a name in an input round, then runs as a task",
    task: "required",
    run: async (_args, ctx) => {
      // the input round comes first: the task is created with the answer in hand
      const r = await ctx.elicit(
        {
          message: "What is your name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        },
        { key: "user_name" },
      );
      await ctx.task();
      await sleep(100, ctx.signal);
      return `Hello, ${r.content?.name}! (from a task)`;
    },
  });

  // ------------------------------------------------ skills

  server.skill("code-review", {
    description: "Reviews a change for correctness, tests and style",
    instructions:
      "# Code review\n\n1. Read the diff.\n2. Check it against references/checklist.md.\n3. Report what to change.\n",
    files: { "references/checklist.md": "# Checklist\n\n- Tests fail without the change\n- No dead code\n" },
  });
}
