/**
 * Where task state lives: a small interface (a Redis store can back it, so that any replica answers
 * `tasks/get`), and the in-memory default, which forgets a task once its `ttlMs` has passed.
 */
import type { InputRequest } from "../eras/input.js";
import { limitError } from "../limits/shares.js";
import type { JsonRpcErrorObject } from "../types.js";

/** A task's status: `working` first, `input_required` while it waits for the client, then one terminal status. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

const TERMINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

/** Whether `status` never changes again. */
export const isTerminal = (status: string): boolean => TERMINAL.has(status);

/** The message of a task's error when the process running it goes away (a drain past its grace, a lapsed lease). */
export const SERVER_GONE = "The server running the task went away";

/** What a store keeps of one task (plain JSON). */
export interface TaskRecord {
  /** A random UUID. */
  taskId: string;
  /** Where the task is: `working` first. */
  status: TaskStatus;
  /** What the handler last said about its progress (`ctx.task({ statusMessage })`, `task.status(...)`). */
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601. */
  lastUpdatedAt: string;
  /** How long after its creation the task is kept; null: until the store drops it. */
  ttlMs: number | null;
  /** How often the client should poll. */
  pollIntervalMs?: number;
  /** `input_required`: the requests still unanswered, by key. */
  inputRequests?: { [key: string]: InputRequest };
  /** `completed`: the tool's result. */
  result?: { [key: string]: unknown };
  /** `failed`: the JSON-RPC error. */
  error?: JsonRpcErrorObject;
  /** Whose it is: the principal's key (`principalOf`), or `session:<id>` for an anonymous 2025 session; others never see it. Absent: anyone with the id. */
  owner?: string;
}

/** What one process asks of the process that runs a task: answers to its open requests, or its end. */
export type TaskSignal = { type: "update"; responses: { [key: string]: unknown } } | { type: "cancel" };

/** What a server gives a shared store (`TaskStore.attach`): how the store reaches this process's tasks. */
export interface TaskPeer {
  /** Hands a signal from another process to the task if it runs here; resolves with whether it does, once handled. */
  deliver(taskId: string, signal: TaskSignal): Promise<boolean>;
  /** Another process changed a task (or the store failed it when its process went away): tell this process's listeners. */
  changed(task: TaskRecord): void;
}

/**
 * Keeps task records, as copies; every method may be asynchronous. A task is kept `ttlMs` after its
 * creation, however often it is set. A store shared by several processes also gives the three
 * optional methods, so that a task's control reaches the process that runs it.
 */
export interface TaskStore {
  /** Stores a new task; it must be readable by `get` once the promise resolves. */
  create(task: TaskRecord): Promise<void>;
  /** The task, or undefined when it is unknown or expired. */
  get(taskId: string): Promise<TaskRecord | undefined>;
  /**
   * Replaces a task's whole record, keeping its expiry; a task unknown or expired stays so, and a
   * terminal task stays as it is (so a cancel and a completion never both win). A store may resolve
   * with the record it holds afterwards: one with another terminal status means the write lost.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a store written before this resolved with nothing
  set(task: TaskRecord): Promise<TaskRecord | undefined | void>;
  /** Shared stores: called once by each server on the store, with what reaches its running tasks. */
  attach?(peer: TaskPeer): void;
  /** Shared stores: delivers `signal` to the process running the task; false when no process runs it. */
  signal?(taskId: string, signal: TaskSignal): Promise<boolean>;
  /** Shared stores: resolves once the task is terminal wherever it runs (undefined: gone), or rejects when `abort` fires. */
  settled?(taskId: string, abort: AbortSignal): Promise<TaskRecord | undefined>;
}

/** Options of {@link MemoryTaskStore}. */
export interface MemoryTaskStoreOptions {
  /** At most this many tasks are kept until their ttl ends; one more is refused (`-32000`, `data.limit: "tasks"`), and no task is forgotten for it. Default: 10000. */
  maxTasks?: number;
  /** The clock, for tests. Default: `Date.now`. */
  now?: () => number;
}

/** The default store: one process's memory, each task dropped when its `ttlMs` has passed. */
export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, { task: TaskRecord; expires: number }>();
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#max = options.maxTasks ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  async create(task: TaskRecord): Promise<void> {
    const now = this.#now();
    // insertion order is creation order: the oldest tasks, and most expired ones, are at the front
    for (const [id, entry] of this.#tasks) {
      if (entry.expires > now) break;
      this.#tasks.delete(id);
    }
    if (this.#tasks.size >= this.#max)
      // a task of a shorter ttl expires behind older live ones: it makes room too
      for (const [id, entry] of this.#tasks) if (entry.expires <= now) this.#tasks.delete(id);
    // full of live tasks: this one is refused, and no task of anyone else is forgotten for it
    if (this.#tasks.size >= this.#max) {
      let first = Number.POSITIVE_INFINITY;
      for (const entry of this.#tasks.values()) first = Math.min(first, entry.expires);
      const retryAfterMs = Number.isFinite(first) ? first - now : 5000;
      throw limitError({ limit: "tasks", scope: "server", max: this.#max, retryAfterMs });
    }
    const expires = task.ttlMs === null ? Number.POSITIVE_INFINITY : now + task.ttlMs;
    this.#tasks.set(task.taskId, { task: structuredClone(task), expires });
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const entry = this.#tasks.get(taskId);
    if (entry === undefined) return undefined;
    if (entry.expires <= this.#now()) {
      this.#tasks.delete(taskId);
      return undefined;
    }
    return structuredClone(entry.task);
  }

  async set(task: TaskRecord): Promise<TaskRecord | undefined> {
    const entry = this.#tasks.get(task.taskId);
    if (entry === undefined) return undefined;
    // a terminal status is final: the first end written wins
    if (!isTerminal(entry.task.status)) entry.task = structuredClone(task);
    return structuredClone(entry.task);
  }
}
