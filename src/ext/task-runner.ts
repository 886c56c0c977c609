/**
 * Running tasks, whatever the revision: creating a task in the store, running the handler on after the
 * request is answered, its input requests (answered by `tasks/update`), cancellation, and the outcome.
 * `tasks.ts` shapes what each revision sees.
 */
import type { ChangeEvent } from "../bus.js";
import { principalOf } from "../connection.js";
import type { Context, TaskHandle } from "../context.js";
import { AUTO_KEY, type InputRequest } from "../eras/input.js";
import { statelessError } from "../eras/stateless.js";
import { ErrorCode, McpError } from "../errors.js";
import type { JsonRpcErrorObject, Params } from "../types.js";
import type { CallerLimits } from "../views/host.js";
import { isTerminal, SERVER_GONE, type TaskRecord, type TaskSignal, type TaskStore } from "./task-store.js";

export { isTerminal };

type Waiter = {
  accept: (value: unknown) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
};

/** What the runner holds of the handler it runs: its signal, and what aborts it. */
export interface TaskHandler {
  readonly signal: AbortSignal;
  abort(reason: unknown): void;
}

/** What only this process holds of a running task: its handler and its pending input. */
export interface Live {
  readonly handler: TaskHandler;
  readonly record: TaskRecord;
  readonly handle: TaskHandle;
  readonly waiters: Map<string, Waiter>;
  readonly keys: Set<string>;
  /** Initialize era (2025-11-25): a tool result with `isError` fails the task. */
  readonly legacy: boolean;
  /** Resolves once the task is terminal. */
  readonly done: Promise<void>;
  settle: () => void;
  writes: Promise<void>;
  /** Ends the task when its ttl has passed: a handler still waiting then is cancelled. */
  expiry: ReturnType<typeof setTimeout> | undefined;
  /** Gives back the caller's running task (the stored one comes back when its ttl ends). */
  readonly release: () => void;
}

/**
 * A task as 2026-07-28 shows it (`tasks/get`, `notifications/tasks`): no owner; the error as that revision
 * spells it; the result as the call would have answered, `resultType: "complete"` included (the revision's
 * `CallToolResult` requires it).
 */
export function statelessTask(record: TaskRecord): { [key: string]: unknown; taskId: string } {
  const { owner: _, ...task } = record;
  // a task's error is stored as thrown, whichever revision started it
  if (task.error) task.error = statelessError(task.error);
  if (task.result) task.result = { resultType: "complete", ...task.result };
  return task;
}

/** The tasks of one server. */
export class TaskRunner {
  readonly #store: TaskStore;
  readonly #live = new Map<string, Live>();
  readonly #publish: (event: ChangeEvent) => void;
  readonly #report: (error: unknown) => void;
  readonly #governor: CallerLimits;
  /** The polling pace clients are told. */
  readonly pollIntervalMs: number;
  /** How long a task is kept, unless a 2025-11-25 client asked for less. */
  readonly ttlMs: number;

  /** Tasks kept in `options.store`, their changes published, their handlers' failures reported. */
  constructor(
    options: { readonly store: TaskStore; readonly ttlMs: number; readonly pollIntervalMs: number },
    publish: (event: ChangeEvent) => void,
    report: (error: unknown) => void,
    governor: CallerLimits,
  ) {
    const store = options.store;
    this.#store = store;
    this.#governor = governor;
    this.ttlMs = options.ttlMs;
    this.pollIntervalMs = options.pollIntervalMs;
    this.#publish = publish;
    this.#report = report;
    // a shared store brings other processes' signals for the tasks running here, and their changes
    store.attach?.({ deliver: (id, signal) => this.#deliver(id, signal), changed: (t) => this.#announce(t) });
  }

  /** Resolves once no task runs in this process any more, or once `signal` aborts. */
  async idle(signal: AbortSignal): Promise<void> {
    const aborted = new Promise<void>((resolve) =>
      signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    while (this.#live.size > 0 && !signal.aborted)
      await Promise.race([Promise.all([...this.#live.values()].map((l) => l.done)), aborted]);
  }

  /**
   * This process goes away: each task still running here is failed in the store now ("The server
   * running the task went away", as a lapsed lease would fail it), so every instance reads it failed at
   * once rather than after its lease; then its handler is aborted.
   */
  async abandon(): Promise<void> {
    const left = [...this.#live.values()].filter((l) => !isTerminal(l.record.status));
    await Promise.all(
      left.map(async (l) => {
        delete l.record.inputRequests;
        l.record.status = "failed";
        l.record.error = { code: ErrorCode.InternalError, message: SERVER_GONE };
        await this.#save(l);
        this.#stop(l, SERVER_GONE);
      }),
    );
  }

  /** The running task `taskId` of this process, if any. */
  live(taskId: string): Live | undefined {
    return this.#live.get(taskId);
  }

  #save(l: Live): Promise<void> {
    l.record.lastUpdatedAt = new Date().toISOString();
    const snapshot = structuredClone(l.record);
    // writes of one task go out in order, whatever the store's latency
    l.writes = l.writes
      .then(() => this.#store.set(snapshot))
      .then((stored) => {
        // another process ended it first (a cancel, or its lease ran out): that end is the task's
        if (stored && isTerminal(stored.status) && stored.status !== snapshot.status) {
          Object.assign(l.record, stored);
          this.#stop(l, `The task was ${stored.status}`);
          return;
        }
        this.#announce(snapshot);
      })
      .catch(this.#report);
    return l.writes;
  }

  /** Tells this process's listeners of a task's change (task events reach 2026-07-28 listen streams only). */
  #announce(record: TaskRecord): void {
    const { owner } = record;
    const task = statelessTask(record);
    this.#publish(owner === undefined ? { type: "task", task } : { type: "task", task, owner });
  }

  /** A signal from another process (through a shared store): false when the task does not run here. */
  async #deliver(taskId: string, signal: TaskSignal): Promise<boolean> {
    const l = this.#live.get(taskId);
    if (l === undefined) return false;
    if (signal.type === "update") await this.update(l.record, signal.responses as Params);
    else if (!isTerminal(l.record.status)) {
      // the sender has stored the cancellation already: this process only stops the handler
      l.record.status = "cancelled";
      delete l.record.inputRequests;
      this.#stop(l, "The task was cancelled");
    }
    return true;
  }

  /** Creates a task for the request of `ctx` (stored before this resolves); its calls to the client wait for `tasks/update`. */
  async start(
    ctx: Context & TaskHandler,
    statusMessage: string | undefined,
    ttlMs = this.ttlMs,
  ): Promise<Live> {
    const now = new Date().toISOString();
    const record: TaskRecord = {
      taskId: crypto.randomUUID(),
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs: this.pollIntervalMs,
    };
    if (statusMessage !== undefined) record.statusMessage = statusMessage;
    const owner = ownerOf(ctx);
    if (owner !== undefined) record.owner = owner;
    // the caller's own shares, running and kept: a full share refuses this caller, never evicts another's task
    const key = ctx.caller;
    const release = this.#governor.claim("runningTasks", key);
    const until = Date.now() + ttlMs;
    try {
      this.#governor.lease("tasks", key, until);
    } catch (error) {
      release();
      throw error;
    }
    try {
      await this.#store.create(structuredClone(record));
    } catch (error) {
      release();
      this.#governor.unlease("tasks", key, until);
      throw error;
    }
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const l: Live = {
      handler: ctx,
      record,
      handle: {
        taskId: record.taskId,
        status: (message) => {
          if (isTerminal(l.record.status)) return Promise.resolve();
          l.record.statusMessage = message;
          return this.#save(l);
        },
      },
      waiters: new Map(),
      keys: new Set(),
      legacy: !ctx.features.stateless,
      done,
      settle,
      writes: Promise.resolve(),
      expiry: undefined,
      release,
    };
    this.#live.set(record.taskId, l);
    // the store forgets the task then: a handler still waiting for an answer must not wait forever
    l.expiry = setTimeout(() => this.#stop(l, "The task expired"), ttlMs);
    (l.expiry as { unref?: () => void }).unref?.();
    return l;
  }

  /** Records the outcome of the handler's `run` once it settles (unless the task was cancelled first). */
  follow(l: Live, run: Promise<unknown>): void {
    void run.then(
      (result) => this.#finish(l, { result: result as Params }),
      (e: unknown) => {
        if (e instanceof McpError) {
          const error: JsonRpcErrorObject = { code: e.code, message: e.message };
          if (e.data !== undefined) error.data = e.data;
          // stored as thrown: each reader's revision spells it its own way (2026-07-28 has no -32002)
          return this.#finish(l, { error });
        }
        if (!l.handler.signal.aborted) this.#report(e);
        this.#finish(l, { error: { code: ErrorCode.InternalError, message: "Internal error" } });
      },
    );
  }

  #finish(l: Live, outcome: { result: Params } | { error: JsonRpcErrorObject }): void {
    clearTimeout(l.expiry);
    // cancelled first: #stop has forgotten it already
    if (isTerminal(l.record.status)) return;
    delete l.record.inputRequests;
    if ("result" in outcome) {
      l.record.status = l.legacy && outcome.result.isError === true ? "failed" : "completed";
      l.record.result = outcome.result;
    } else {
      l.record.status = "failed";
      l.record.error = outcome.error;
    }
    // forgotten once saved, not before: meanwhile a reader waits for the save, and a cancel finds it over
    void this.#save(l).then(() => {
      // stopped meanwhile (another process's end won): released already
      if (this.#live.get(l.record.taskId) !== l) return;
      this.#live.delete(l.record.taskId);
      l.release();
      l.settle();
    });
  }

  /** A call of the task's handler to the client: an input request of the task, answered by `tasks/update`. */
  ask(
    l: Live,
    method: InputRequest["method"],
    params: object,
    key: string | undefined,
    accept: (v: unknown) => unknown,
  ): Promise<unknown> {
    // a key is never reused within a task, even after its answer came
    const base = key ?? AUTO_KEY[method] ?? method;
    let k = base;
    for (let n = 2; l.keys.has(k); n++) k = `${base}-${n}`;
    l.keys.add(k);
    const asked = new Promise<unknown>((resolve, reject) => {
      if (l.handler.signal.aborted)
        return reject(new McpError(ErrorCode.InternalError, "The task was cancelled"));
      l.waiters.set(k, { accept, resolve, reject });
      l.record.inputRequests = {
        ...l.record.inputRequests,
        [k]: { method, params: params as InputRequest["params"] },
      };
      l.record.status = "input_required";
      void this.#save(l);
    });
    // a cancel rejects every open question: those the handler never reached must not count as unhandled
    asked.catch(() => {});
    return asked;
  }

  /** The caller's task, or -32602 (unknown, expired, or another principal's: the same answer). */
  async find(params: Params, ctx: Context): Promise<TaskRecord> {
    const id = params.taskId;
    if (typeof id !== "string")
      throw new McpError(ErrorCode.InvalidParams, "Invalid params: taskId must be a string");
    const record = await this.#store.get(id);
    if (record === undefined || record.owner !== ownerOf(ctx))
      throw new McpError(ErrorCode.InvalidParams, `Unknown task: ${id}`, { taskId: id });
    return record;
  }

  /** `tasks/update`: resolves the open requests the responses answer; others are ignored. */
  async update(record: TaskRecord, responses: Params): Promise<void> {
    const l = this.#live.get(record.taskId);
    if (l === undefined) {
      // running in another process, if anywhere: the answers go there
      if (!isTerminal(record.status))
        await this.#store.signal?.(record.taskId, { type: "update", responses });
      return;
    }
    if (isTerminal(l.record.status)) return;
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
    if (!answered) return;
    if (l.waiters.size === 0) {
      delete l.record.inputRequests;
      if (l.record.status === "input_required") l.record.status = "working";
    }
    await this.#save(l);
  }

  /** Cancels a task that is not terminal: marks it, aborts the handler's signal, rejects its open requests. */
  async cancel(record: TaskRecord): Promise<TaskRecord> {
    const l = this.#live.get(record.taskId);
    if (l !== undefined && isTerminal(l.record.status))
      throw new McpError(ErrorCode.InvalidParams, `Task ${record.taskId} is already ${l.record.status}`);
    if (l === undefined) {
      const { inputRequests: _, ...rest } = record;
      const cancelled: TaskRecord = { ...rest, status: "cancelled", lastUpdatedAt: new Date().toISOString() };
      // the store decides between this cancel and an end written meanwhile by the process running it
      const stored = (await this.#store.set(cancelled)) ?? cancelled;
      if (stored.status !== "cancelled")
        throw new McpError(ErrorCode.InvalidParams, `Task ${record.taskId} is already ${stored.status}`);
      this.#announce(stored);
      // the handler, if it runs in another process, stops before this answers
      await this.#store.signal?.(record.taskId, { type: "cancel" });
      return stored;
    }
    l.record.status = "cancelled";
    delete l.record.inputRequests;
    await this.#save(l);
    this.#stop(l, "The task was cancelled");
    // the store may hold another end, written first by another process (a lease that ran out)
    if (l.record.status !== "cancelled")
      throw new McpError(ErrorCode.InvalidParams, `Task ${record.taskId} is already ${l.record.status}`);
    return l.record;
  }

  /** Forgets a running task: aborts the handler's signal and rejects its open requests. */
  #stop(l: Live, why: string): void {
    if (this.#live.get(l.record.taskId) !== l) return;
    this.#live.delete(l.record.taskId);
    l.release();
    clearTimeout(l.expiry);
    l.settle();
    const reason = new McpError(ErrorCode.InternalError, why);
    l.handler.abort(reason);
    for (const w of l.waiters.values()) w.reject(reason);
    l.waiters.clear();
  }

  /** Waits until the task is terminal: in this process, or through a shared store wherever it runs. */
  async settled(record: TaskRecord, ctx: Context): Promise<TaskRecord> {
    const l = this.#live.get(record.taskId);
    if (l !== undefined) await l.done;
    else if (isTerminal(record.status) || this.#store.settled === undefined) return record;
    else await this.#store.settled(record.taskId, ctx.signal);
    return this.find({ taskId: record.taskId }, ctx);
  }
}

/**
 * Whose a task is: the caller's principal; an anonymous caller's 2025 session, when it has one. At
 * 2026-07-28, and on stateless HTTP, an anonymous task belongs to no one: its id alone is the key.
 */
function ownerOf(ctx: Context): string | undefined {
  const principal = principalOf(ctx.auth);
  if (principal !== undefined || !ctx.hasSession) return principal;
  return `session:${ctx.sessionId}`;
}
