/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28): a `tools/call` whose handler
 * calls `ctx.task()` is answered at once with a task (`resultType: "task"`); the client polls
 * `tasks/get`, answers the task's input requests with `tasks/update`, and may `tasks/cancel` it.
 */
import type { ChangeEvent } from "../bus.js";
import { principalOf } from "../connection.js";
import type { RequestContext, TaskHandle } from "../context.js";
import type { InputRequest } from "../eras/input.js";
import { missingCapability } from "../eras/modern.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Registry } from "../registry.js";
import type { ToolEntry } from "../tools/tools.js";
import type { JsonRpcErrorObject } from "../types.js";
import { clientDeclares, type Extension } from "./extension.js";
import { MemoryTaskStore, type TaskRecord, type TaskStore } from "./task-store.js";

/** The extension's identifier. */
export const TASKS = "io.modelcontextprotocol/tasks";

/** Options of tasks (`new McpServer({ tasks })`). */
export interface TaskOptions {
  /** Where task state lives. Default: a {@link MemoryTaskStore} of this process. */
  store?: TaskStore;
  /** How long a task is kept after its creation, in milliseconds. Default: 3600000 (an hour). */
  ttlMs?: number;
  /** How often a client should poll `tasks/get`, in milliseconds. Default: 1000. */
  pollIntervalMs?: number;
}

type Params = { [key: string]: unknown };
type Waiter = {
  accept: (value: unknown) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
};

/** What only this process holds of a running task: its handler's context and its pending input. */
interface Live {
  readonly ctx: RequestContext;
  readonly record: TaskRecord;
  readonly waiters: Map<string, Waiter>;
  readonly keys: Set<string>;
  writes: Promise<void>;
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);
const AUTO_KEY: { readonly [method: string]: string } = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

/** The tasks extension over `tools`; declared while some tool has a `task` option. */
export function tasksExtension(
  tools: Registry<ToolEntry>,
  options: TaskOptions,
  publish: (event: ChangeEvent) => void,
  report: (error: unknown) => void,
): Extension {
  const store = options.store ?? new MemoryTaskStore();
  const ttlMs = options.ttlMs ?? 3_600_000;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1)
    throw new RangeError("tasks.ttlMs must be a positive integer");
  if (!Number.isSafeInteger(pollIntervalMs) || pollIntervalMs < 1)
    throw new RangeError("tasks.pollIntervalMs must be a positive integer");
  const live = new Map<string, Live>();

  const save = (l: Live) => {
    l.record.lastUpdatedAt = new Date().toISOString();
    const snapshot = structuredClone(l.record);
    // writes of one task go out in order, whatever the store's latency
    l.writes = l.writes
      .then(() => store.set(snapshot))
      .then(() => {
        const { owner, ...task } = snapshot;
        publish(owner === undefined ? { type: "task", task } : { type: "task", task, owner });
      })
      .catch(report);
    return l.writes;
  };

  const finish = (l: Live, outcome: { result: Params } | { error: JsonRpcErrorObject }) => {
    live.delete(l.record.taskId);
    if (TERMINAL.has(l.record.status)) return;
    delete l.record.inputRequests;
    if ("result" in outcome) {
      l.record.status = "completed";
      l.record.result = outcome.result;
    } else {
      l.record.status = "failed";
      l.record.error = outcome.error;
    }
    void save(l);
  };

  const ask = (
    l: Live,
    method: InputRequest["method"],
    params: object,
    key: string | undefined,
    accept: (v: unknown) => unknown,
  ) => {
    // a key is never reused within a task, even after its answer came
    const base = key ?? AUTO_KEY[method] ?? method;
    let k = base;
    for (let n = 2; l.keys.has(k); n++) k = `${base}-${n}`;
    l.keys.add(k);
    return new Promise<unknown>((resolve, reject) => {
      if (l.ctx.aborted) return reject(new McpError(ErrorCode.InternalError, "The task was cancelled"));
      l.waiters.set(k, { accept, resolve, reject });
      l.record.inputRequests = {
        ...l.record.inputRequests,
        [k]: { method, params: params as InputRequest["params"] },
      };
      l.record.status = "input_required";
      void save(l);
    });
  };

  const start = async (ctx: RequestContext, statusMessage: string | undefined): Promise<Live> => {
    const now = new Date().toISOString();
    const record: TaskRecord = {
      taskId: crypto.randomUUID(),
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs,
    };
    if (statusMessage !== undefined) record.statusMessage = statusMessage;
    const owner = principalOf(ctx.auth);
    if (owner !== undefined) record.owner = owner;
    // durably created before the client hears of it: tasks/get resolves at once
    await store.create(structuredClone(record));
    const l: Live = { ctx, record, waiters: new Map(), keys: new Set(), writes: Promise.resolve() };
    live.set(record.taskId, l);
    ctx.asker = (method, params, key, accept) => ask(l, method, params, key, accept);
    return l;
  };

  const callTool = async (params: Params, ctx: RequestContext, next: () => Promise<unknown>) => {
    const tool = typeof params.name === "string" ? tools.get(params.name) : undefined;
    if (!ctx.features.modern || tool?.task === undefined) return next();
    if (!clientDeclares(ctx, TASKS)) {
      if (tool.task === "required") throw missingCapability({ extensions: { [TASKS]: {} } });
      return next();
    }
    let task: Live | undefined;
    let handle: TaskHandle | undefined;
    let created!: () => void;
    const creation = new Promise<void>((resolve) => (created = resolve));
    ctx.taskStarter = async (options) => {
      if (handle) return handle;
      const l = await start(ctx, options?.statusMessage);
      task = l;
      handle = {
        taskId: l.record.taskId,
        status: (message) => {
          if (TERMINAL.has(l.record.status)) return Promise.resolve();
          l.record.statusMessage = message;
          return save(l);
        },
      };
      created();
      return handle;
    };
    const run = next();
    const settled = run.then(
      (result) => ({ result: result as Params }),
      (error: unknown) => ({ error }),
    );
    await Promise.race([settled, creation]);
    if (task === undefined) {
      const outcome = await settled;
      if ("error" in outcome) throw outcome.error;
      return outcome.result;
    }
    const l = task;
    void settled.then((outcome) => {
      if (!("error" in outcome)) return finish(l, outcome);
      const e = outcome.error;
      if (e instanceof McpError) {
        const error: JsonRpcErrorObject = { code: e.code, message: e.message };
        if (e.data !== undefined) error.data = e.data;
        return finish(l, { error });
      }
      if (!l.ctx.aborted) report(e);
      finish(l, { error: { code: ErrorCode.InternalError, message: "Internal error" } });
    });
    const { owner: _, ...wire } = l.record;
    return { ...wire, resultType: "task" };
  };

  /** The caller's task, or -32602 (unknown, expired, or another principal's: the same answer). */
  const find = async (params: Params, ctx: RequestContext): Promise<TaskRecord> => {
    const id = params.taskId;
    if (typeof id !== "string")
      throw new McpError(ErrorCode.InvalidParams, "Invalid params: taskId must be a string");
    const record = await store.get(id);
    if (record === undefined || record.owner !== principalOf(ctx.auth))
      throw new McpError(ErrorCode.InvalidParams, `Unknown task: ${id}`, { taskId: id });
    return record;
  };

  return {
    id: TASKS,
    settings: (f) => (f.modern && tools.values().some((t) => t.task !== undefined) ? {} : undefined),
    wrap: { "tools/call": callTool },
    methods: {
      "tasks/get": {
        run: async (params, ctx) => {
          const { owner: _, ...task } = await find(params, ctx);
          return task;
        },
      },
      "tasks/update": {
        run: async (params, ctx) => {
          const record = await find(params, ctx);
          const responses = params.inputResponses;
          if (typeof responses !== "object" || responses === null || Array.isArray(responses))
            throw new McpError(ErrorCode.InvalidParams, "Invalid params: inputResponses must be an object");
          const l = live.get(record.taskId);
          if (l === undefined) return {};
          let answered = false;
          for (const [key, value] of Object.entries(responses)) {
            const waiter = l.waiters.get(key);
            const accepted = waiter?.accept(value);
            // keys not outstanding, and malformed answers, are ignored: the request stays open
            if (waiter === undefined || accepted === undefined) continue;
            l.waiters.delete(key);
            const { [key]: _, ...rest } = l.record.inputRequests ?? {};
            l.record.inputRequests = rest;
            answered = true;
            waiter.resolve(accepted);
          }
          if (answered) {
            if (l.waiters.size === 0) {
              delete l.record.inputRequests;
              if (l.record.status === "input_required") l.record.status = "working";
            }
            await save(l);
          }
          return {};
        },
      },
      "tasks/cancel": {
        run: async (params, ctx) => {
          const record = await find(params, ctx);
          if (TERMINAL.has(record.status)) return {};
          const l = live.get(record.taskId);
          const reason = new McpError(ErrorCode.InternalError, "The task was cancelled");
          if (l === undefined) {
            await store.set({ ...record, status: "cancelled", lastUpdatedAt: new Date().toISOString() });
            return {};
          }
          live.delete(record.taskId);
          l.record.status = "cancelled";
          delete l.record.inputRequests;
          await save(l);
          l.ctx.abort(reason);
          for (const w of l.waiters.values()) w.reject(reason);
          l.waiters.clear();
          return {};
        },
      },
    },
  };
}
