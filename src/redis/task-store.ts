/**
 * `RedisTaskStore`: task records in Redis, and task control across instances. Any instance answers
 * `tasks/get`; `tasks/update` and `tasks/cancel` received anywhere reach the instance running the
 * handler (a message on that instance's pub/sub channel, answered once handled); a waiting
 * `tasks/result` hears the end wherever it happens. Each running task holds a lease the instance
 * renews; a task whose instance went away is failed by any other within `leaseMs + renewMs`, and one
 * whose instance drains (picomcp/http's `drain`) is failed by that instance at once, its lease given back.
 */
import { ErrorCode } from "../errors.js";
import {
  isTerminal,
  SERVER_GONE,
  type TaskPeer,
  type TaskRecord,
  type TaskSignal,
  type TaskStore,
} from "../ext/task-store.js";
import { Health, type RedisClient, type RedisLog } from "./client.js";
import { Script } from "./script.js";
import { TaskChannels } from "./task-channels.js";
import { CREATE, FAIL, GET, SET, SIGNAL, TICK } from "./task-scripts.js";

/** Options of {@link RedisTaskStore}. */
export interface RedisTaskStoreOptions {
  /** The prefix of the keys and channels. Default: `"picomcp:tasks:"`. */
  prefix?: string;
  /** How long a running task's lease lasts unless renewed; its task is failed then. Default: 30000. */
  leaseMs?: number;
  /** How often an instance renews the leases of its running tasks and looks for lapsed ones. Default: 10000. */
  renewMs?: number;
  /** How long a signal waits for the running instance to say it was handled. Default: `leaseMs`. */
  signalTimeoutMs?: number;
  /** Where the one line per Redis outage and per recovery goes. Default: `console.warn`. */
  log?: RedisLog;
}

/** The error a task gets when the instance running it went away. */
const LOST = { code: ErrorCode.InternalError, message: SERVER_GONE };
/** Lapsed leases failed per tick, at most (the next tick takes the rest). */
const SWEEP = 100;

function positive(n: number, name: string): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer`);
  return n;
}

function parse(json: unknown): TaskRecord {
  const record = JSON.parse(String(json)) as TaskRecord;
  if (typeof record !== "object" || record === null || typeof record.taskId !== "string")
    throw new Error("picomcp/redis: a task record in Redis is not one picomcp wrote");
  return record;
}

/**
 * A {@link TaskStore} on Redis, shared by every instance with the same prefix: give each instance its
 * own store on a node-redis client (`createClient()`; the store subscribes on a duplicate of its own).
 * While Redis is down task methods reject (the client gets `-32603`) and a task's end is written once
 * it is back; no lease is judged until a lease has passed since the last failure.
 * @example
 * const redis = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
 * const tasks = { store: new RedisTaskStore(redis), ttlMs: 86_400_000 };
 * const server = new McpServer({ name: "reports", version: "1.0.0", tasks });
 */
export class RedisTaskStore implements TaskStore {
  /** This instance's id: the runner of the tasks it creates, and the name of its channel. */
  readonly id: string;
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #leaseMs: number;
  readonly #renewMs: number;
  readonly #health: Health;
  readonly #channels: TaskChannels;
  readonly #scripts: { [K in "create" | "get" | "set" | "fail" | "tick" | "signal"]: Script };
  /** The tasks this instance runs: their leases are renewed each tick. */
  readonly #mine = new Set<string>();
  /** Judging leases waits until then (a lease after the last failure): an outage lapses every lease. */
  #quietUntil = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(client: RedisClient, options: RedisTaskStoreOptions = {}) {
    this.#client = client;
    this.#prefix = options.prefix ?? "picomcp:tasks:";
    this.#leaseMs = positive(options.leaseMs ?? 30_000, "leaseMs");
    this.#renewMs = positive(options.renewMs ?? 10_000, "renewMs");
    if (this.#renewMs >= this.#leaseMs) throw new RangeError("renewMs must be less than leaseMs");
    const bytes = crypto.getRandomValues(new Uint8Array(12));
    this.id = btoa(String.fromCharCode(...bytes))
      .replaceAll("/", "_")
      .replaceAll("+", "-");
    this.#health = new Health(options.log, "task methods fail", "tasks are served again");
    const failed = (error: unknown) => this.#failed(error);
    client.on("error", failed);
    client.on("ready", () => this.#recovered());
    const s = (source: string) => new Script(source);
    this.#scripts = {
      create: s(CREATE),
      get: s(GET),
      set: s(SET),
      fail: s(FAIL),
      tick: s(TICK),
      signal: s(SIGNAL),
    };
    this.#channels = new TaskChannels(client, {
      id: this.id,
      prefix: this.#prefix,
      timeoutMs: positive(options.signalTimeoutMs ?? this.#leaseMs, "signalTimeoutMs"),
      failed,
      recovered: () => this.#recovered(),
      read: (taskId) => this.get(taskId),
    });
  }

  /** Settles once this store hears other instances (after `attach`); while Redis is unreachable it waits. */
  get ready(): Promise<void> {
    return this.#channels.ready;
  }

  #key(taskId: string): string {
    return `${this.#prefix}task:${taskId}`;
  }

  #keys(taskId: string): string[] {
    return [this.#key(taskId), `${this.#prefix}leases`];
  }

  /** The head of a change message; the script appends the record and the closing brace. */
  get #head(): string {
    return `{"from":${JSON.stringify(this.id)},"task":`;
  }

  #failed(error: unknown): void {
    if (this.#closed) return;
    this.#quietUntil = Date.now() + this.#leaseMs;
    this.#health.failed(error);
  }

  /** Back only when both connections are: commands served, changes and signals heard. */
  #recovered(): void {
    if (this.#client.isReady && this.#channels.listening) this.#health.recovered();
  }

  /** A command queued while disconnected would wait until Redis is back: refuse it now instead. */
  async #run(script: Script, keys: string[], args: string[]): Promise<unknown> {
    if (!this.#client.isReady) {
      const error = new Error("picomcp/redis: the task store's Redis is unreachable");
      this.#failed(error);
      throw error;
    }
    try {
      return await script.send(this.#client, keys, args);
    } catch (error) {
      this.#failed(error);
      throw error;
    }
  }

  async create(task: TaskRecord): Promise<void> {
    const ttl = task.ttlMs === null ? "" : String(task.ttlMs);
    const args = [JSON.stringify(task), task.status, this.id, ttl, String(this.#leaseMs), task.taskId];
    await this.#run(this.#scripts.create, this.#keys(task.taskId), args);
    if (!isTerminal(task.status)) this.#mine.add(task.taskId);
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const reply = (await this.#run(this.#scripts.get, this.#keys(taskId), [taskId])) as
      | [string, number]
      | null;
    if (reply === null) return undefined;
    const record = parse(reply[0]);
    // its instance went away (no renewal for a lease): the task fails now, not at the next sweep
    if (Number(reply[1]) === 1 && Date.now() >= this.#quietUntil) return this.#fail(record);
    return record;
  }

  async set(task: TaskRecord): Promise<TaskRecord | undefined> {
    const json = JSON.stringify(task);
    const args = [json, task.status, task.taskId, this.#channels.changes, this.#head];
    for (;;) {
      try {
        const reply = await this.#run(this.#scripts.set, this.#keys(task.taskId), args);
        if (reply === null) {
          this.#mine.delete(task.taskId);
          return undefined;
        }
        if (reply !== 1) {
          this.#mine.delete(task.taskId);
          return parse(reply);
        }
        if (isTerminal(task.status)) {
          this.#mine.delete(task.taskId);
          this.#channels.ended(JSON.parse(json) as TaskRecord);
        }
        return JSON.parse(json) as TaskRecord;
      } catch (error) {
        // a task's end is kept until Redis takes it (its lease is renewed meanwhile); a step before is not:
        // the next write carries the whole record
        if (!isTerminal(task.status) || this.#closed || !this.#mine.has(task.taskId)) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.#renewMs));
      }
    }
  }

  /** Fails a task whose lease ran out, unless it ended or was renewed meanwhile; answers what is stored. */
  async #fail(record: TaskRecord): Promise<TaskRecord | undefined> {
    const { inputRequests: _, ...rest } = record;
    const failed: TaskRecord = {
      ...rest,
      status: "failed",
      lastUpdatedAt: new Date().toISOString(),
      error: LOST,
    };
    const args = [JSON.stringify(failed), record.taskId, this.#channels.changes, this.#head];
    const reply = await this.#run(this.#scripts.fail, this.#keys(record.taskId), args);
    if (reply === null) return undefined;
    const stored = parse(reply);
    // this instance failed it, and no server wrote it: its own listeners hear it here, once (the
    // message it published comes back as its own, and is skipped)
    if (stored.status === "failed" && stored.lastUpdatedAt === failed.lastUpdatedAt)
      this.#channels.changed(stored, false);
    return stored;
  }

  /** One tick: renews this instance's leases, fails the tasks whose lease ran out, checks waited tasks. */
  async #tick(): Promise<void> {
    const started = Date.now();
    const args = [String(this.#leaseMs), `${this.#prefix}task:`, String(SWEEP), ...this.#mine];
    let reply: [string[], string[]];
    try {
      reply = (await this.#run(this.#scripts.tick, [`${this.#prefix}leases`], args)) as [string[], string[]];
    } catch {
      return;
    }
    // a tick that waited (a stalled process, a slow Redis) judges no lease: renewals may be late too
    if (Date.now() - started > this.#renewMs) this.#quietUntil = Date.now() + this.#leaseMs;
    for (const id of reply[0]) {
      this.#mine.delete(id);
      // ended elsewhere (a cancel whose signal was lost while this instance was reconnecting): stop it here
      const record = await this.get(id).catch(() => undefined);
      if (record && isTerminal(record.status)) await this.#channels.deliver(id, { type: "cancel" });
    }
    if (Date.now() >= this.#quietUntil)
      for (const json of reply[1]) await this.#fail(parse(json)).catch(() => {});
    await this.#channels.recheck();
  }

  attach(peer: TaskPeer): void {
    if (this.#closed) return;
    this.#channels.attach(peer);
    if (this.#timer !== undefined) return;
    let ticking = false;
    this.#timer = setInterval(() => {
      if (ticking || this.#closed) return;
      ticking = true;
      void this.#tick().finally(() => (ticking = false));
    }, this.#renewMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  async signal(taskId: string, signal: TaskSignal): Promise<boolean> {
    const { n, message, answer } = this.#channels.outgoing(taskId, signal);
    const heard = await this.#run(
      this.#scripts.signal,
      [this.#key(taskId)],
      [this.#channels.instances, message],
    ).catch((error: unknown) => {
      this.#channels.drop(n);
      throw error;
    });
    if (Number(heard) === 0) {
      this.#channels.drop(n);
      return false;
    }
    return answer;
  }

  settled(taskId: string, abort: AbortSignal): Promise<TaskRecord | undefined> {
    return this.#channels.wait(taskId, abort);
  }

  /** Stops renewing leases and listening (this instance's running tasks are failed once their lease runs out, unless a drain failed them first); the client given stays open. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#channels.close();
  }
}
