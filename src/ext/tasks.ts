/**
 * Tasks, in both eras. 2026-07-28: the official extension `io.modelcontextprotocol/tasks` (the server
 * decides: a handler's `ctx.task()` answers the `tools/call` with `resultType: "task"`; `tasks/get`,
 * `tasks/update`, `tasks/cancel`). 2025-11-25: the experimental core tasks (the client asks with
 * `params.task`; `tasks/get`, `tasks/result`, `tasks/cancel`, and the `tasks` capability).
 */
import type { ChangeEvent } from "../bus.js";
import type { Context } from "../context.js";
import { missingCapability } from "../eras/stateless.js";
import { ErrorCode, McpError } from "../errors.js";
import { clientDeclares, type Extension } from "../extension.js";
import type { Registry } from "../registry.js";
import type { ToolEntry } from "../tools/tools.js";
import { isObject, type Params } from "../types.js";
import type { CallerLimits } from "../views/host.js";
import { RELATED_TASK, TaskContext } from "./task-context.js";
import { isTerminal, type Live, statelessTask, TaskRunner } from "./task-runner.js";
import { MemoryTaskStore, type TaskRecord, type TaskStore } from "./task-store.js";

/** The extension's identifier. */
export const TASKS = "io.modelcontextprotocol/tasks";

/** Options of tasks (`new McpServer({ tasks })`). */
export interface TaskOptions {
  /** Where task state lives. Default: a {@link MemoryTaskStore} of this process. */
  store?: TaskStore;
  /** How long a task is kept after its creation, in milliseconds (a 2025-11-25 client may ask for less). Default: 3600000 (an hour). */
  ttlMs?: number;
  /** How often a client should poll `tasks/get`, in milliseconds. Default: 1000. */
  pollIntervalMs?: number;
}

/** 2026-07-28: the task as `tasks/get` shows it. */
const detailed = statelessTask;

/** 2025-11-25: the `Task` object (`ttl`, `pollInterval`; the outcome comes from `tasks/result`). */
function sessionTask(r: TaskRecord): Params {
  const task: Params = { taskId: r.taskId, status: r.status };
  if (r.statusMessage !== undefined) task.statusMessage = r.statusMessage;
  task.createdAt = r.createdAt;
  task.lastUpdatedAt = r.lastUpdatedAt;
  task.ttl = r.ttlMs;
  if (r.pollIntervalMs !== undefined) task.pollInterval = r.pollIntervalMs;
  return task;
}

const notFound = (name: string, why: string) =>
  new McpError(ErrorCode.MethodNotFound, `Method not found: tools/call of ${name} ${why}`);

/** The tasks of a server's `tools`, served while some tool has a `task` option; and what runs them in this process. */
export function tasksExtension(
  tools: Registry<ToolEntry>,
  options: TaskOptions,
  publish: (event: ChangeEvent) => void,
  report: (error: unknown) => void,
  governor: CallerLimits,
): { extension: Extension; runner: TaskRunner } {
  const ttlMs = options.ttlMs ?? 3_600_000;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1)
    throw new RangeError("tasks.ttlMs must be a positive integer");
  if (!Number.isSafeInteger(pollIntervalMs) || pollIntervalMs < 1)
    throw new RangeError("tasks.pollIntervalMs must be a positive integer");
  const store = options.store ?? new MemoryTaskStore();
  const runner = new TaskRunner({ store, ttlMs, pollIntervalMs }, publish, report, governor);
  // the registry's list is a new array after each change: the answer is computed once per change
  let seen: readonly ToolEntry[] | undefined;
  let any = false;
  const anyTaskTool = () => {
    const all = tools.values();
    if (all !== seen) {
      seen = all;
      any = all.some((t) => t.task !== undefined);
    }
    return any;
  };

  /** 2026-07-28: the handler decides, with `ctx.task()`, whether the call becomes a task. */
  const statelessCall = async (tool: ToolEntry, ctx: Context, next: (ctx?: Context) => Promise<unknown>) => {
    if (!clientDeclares(ctx, TASKS)) {
      if (tool.task === "required") throw missingCapability({ extensions: { [TASKS]: {} } });
      return next();
    }
    let task: Live | undefined;
    let created!: () => void;
    const creation = new Promise<void>((resolve) => (created = resolve));
    const own = new TaskContext(ctx, runner);
    own.starter = async (o) => {
      if (task) return task.handle;
      task = await runner.start(own, o?.statusMessage);
      own.bind(task);
      created();
      return task.handle;
    };
    const run = next(own);
    const settled = run.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    await Promise.race([settled, creation]);
    if (task === undefined) {
      // a ctx.task() not awaited makes its task after this answer: it still gets the outcome, and ends
      void creation.then(() => runner.follow(task!, run));
      const outcome = await settled;
      if ("error" in outcome) throw outcome.error;
      return outcome.result;
    }
    runner.follow(task, run);
    return { ...detailed(task.record), resultType: "task" };
  };

  /** 2025-11-25: the client asks for a task with `params.task`; it exists before the handler runs. */
  const sessionCall = async (
    tool: ToolEntry,
    params: Params,
    ctx: Context,
    next: (ctx?: Context) => Promise<unknown>,
  ) => {
    const wanted = params.task;
    if (wanted === undefined) {
      if (tool.task === "required") throw notFound(tool.name, "needs a task (params.task)");
      return next();
    }
    if (!isObject(wanted))
      throw new McpError(ErrorCode.InvalidParams, "Invalid params: task must be an object");
    const ttl =
      typeof wanted.ttl === "number" && wanted.ttl >= 1 ? Math.min(Math.floor(wanted.ttl), ttlMs) : ttlMs;
    const own = new TaskContext(ctx, runner);
    const task = await runner.start(own, undefined, ttl);
    own.bind(task);
    own.starter = async () => task.handle;
    runner.follow(task, next(own));
    return { task: sessionTask(task.record) };
  };

  const extension: Extension = {
    id: TASKS,
    requires: ["picomcp/tools"],
    settings: (f) => (f.stateless && anyTaskTool() ? {} : undefined),
    capabilities: (f) =>
      f.sessionTasks && anyTaskTool()
        ? { tasks: { cancel: {}, requests: { tools: { call: {} } } } }
        : undefined,
    wrap: {
      "tools/call": async (params, ctx, next) => {
        const tool = typeof params.name === "string" ? tools.get(params.name) : undefined;
        if (ctx.features.stateless) return tool?.task ? statelessCall(tool, ctx, next) : next();
        if (!ctx.features.sessionTasks) return next();
        if (tool?.task) return sessionCall(tool, params, ctx, next);
        if (tool && params.task !== undefined) throw notFound(tool.name, "does not run as a task");
        return next();
      },
    },
    methods: {
      "tasks/get": {
        era: "both",
        run: async (params, ctx) => {
          const record = await runner.find(params, ctx);
          return ctx.features.stateless ? detailed(record) : sessionTask(record);
        },
      },
      "tasks/update": {
        era: "stateless",
        run: async (params, ctx) => {
          const record = await runner.find(params, ctx);
          if (!isObject(params.inputResponses))
            throw new McpError(ErrorCode.InvalidParams, "Invalid params: inputResponses must be an object");
          await runner.update(record, params.inputResponses);
          return {};
        },
      },
      "tasks/cancel": {
        era: "both",
        run: async (params, ctx) => {
          const record = await runner.find(params, ctx);
          if (ctx.features.stateless) {
            // cancelling a finished task is the same empty acknowledgement: it changes nothing
            if (!isTerminal(record.status)) await runner.cancel(record);
            return {};
          }
          if (isTerminal(record.status))
            throw new McpError(ErrorCode.InvalidParams, `Task ${record.taskId} is already ${record.status}`);
          return sessionTask(await runner.cancel(record));
        },
      },
      "tasks/result": {
        era: "session",
        run: async (params, ctx) => {
          const record = await runner.settled(await runner.find(params, ctx), ctx);
          const related = { [RELATED_TASK]: { taskId: record.taskId } };
          if (record.result) {
            const own = isObject(record.result._meta) ? record.result._meta : {};
            return { ...record.result, _meta: { ...own, ...related } };
          }
          const e = record.error ?? { code: ErrorCode.InternalError, message: "The task was cancelled" };
          throw new McpError(e.code, e.message, e.data);
        },
      },
    },
  };
  return { extension, runner };
}
