/**
 * `RedisTaskStore`: task records in Redis, and task control across instances. Any instance answers
 * `tasks/get`; `tasks/update` and `tasks/cancel` received anywhere reach the instance running the
 * handler (a message on that instance's pub/sub channel, answered once handled); a waiting
 * `tasks/result` hears the end wherever it happens. Each running task holds a lease the instance
 * renews; a task whose instance went away is failed by any other within `leaseMs + renewMs`, and one
 * whose instance drains (picomcp/http's `drain`) is failed by that instance at once. During a rolling
 * deploy the release before runs beside it on one Redis: where its set of leases can be named (see
 * task-scripts.ts) each reads the other's leases, and a task whose runner of either release died is
 * failed by the other's tick.
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
import type { RedisClient, RedisLog } from "./client.js";
import { instanceId, Link, positive, type RedisStats, unref } from "./link.js";
import { TaskChannels } from "./task-channels.js";
import { parse, TaskCalls } from "./task-scripts.js";
import { Sweeper } from "./task-sweep.js";

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
  /** The deadline of each call to Redis, in milliseconds; past it the task method fails. Default: 1000. */
  timeoutMs?: number;
  /** How often each channel is probed (a probe not heard: subscribed again). Default: 5000. */
  probeMs?: number;
  /** Where the one line per Redis outage and per recovery goes. Default: `console.warn`. */
  log?: RedisLog;
}

/** The error a task gets when the instance running it went away. */
const LOST = { code: ErrorCode.InternalError, message: SERVER_GONE };
/** Failed creates remembered to clean up, at most (more would be an outage's worth: their records expire). */
const ORPHANS = 10_000;
/** Runners of tasks remembered from reads, at most (a task's runner never changes). */
const RUNNERS_KEPT = 1024;

/**
 * A {@link TaskStore} on Redis, shared by every instance with the same prefix: give each instance its
 * own store on a node-redis client (`createClient()`, `createCluster()` or `createSentinel()`; the store
 * subscribes on a duplicate of its own). Every call has a deadline (`timeoutMs`): while Redis is
 * unreachable task methods reject at once (the client gets `-32603`) and a task's end is written once
 * it is back; no lease is judged until a lease has passed since the last failure.
 * @example
 * const redis = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
 * const tasks = { store: new RedisTaskStore(redis), ttlMs: 86_400_000 };
 * const server = new McpServer({ name: "reports", version: "1.0.0", tasks });
 */
export class RedisTaskStore implements TaskStore {
  /** This instance's id: the runner of the tasks it creates, and the name of its channel. */
  readonly id: string;
  readonly #link: Link;
  readonly #calls: TaskCalls;
  readonly #prefix: string;
  readonly #leaseMs: number;
  readonly #renewMs: number;
  readonly #channels: TaskChannels;
  readonly #sweeper: Sweeper;
  /** The tasks this instance runs: their leases are renewed each tick. */
  readonly #mine = new Set<string>();
  /** The runners of tasks read lately: a `tasks/cancel` or `tasks/update` reads, then signals. */
  readonly #runnerOf = new Map<string, string>();
  /** Tasks of this instance that ended since the last tick: taken out of its index then. */
  #ended: string[] = [];
  /** Tasks whose create failed here though a half of it may have been written: deleted by the next ticks. */
  readonly #orphans = new Set<string>();
  /** Tasks found ended elsewhere by a renewal: stopped here by the next upkeep. */
  #gone: string[] = [];
  /** Judging leases waits until then (a lease after the last failure): an outage lapses every lease. */
  #quietUntil = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(client: RedisClient, options: RedisTaskStoreOptions = {}) {
    this.#prefix = options.prefix ?? "picomcp:tasks:";
    this.#leaseMs = positive(options.leaseMs ?? 30_000, "leaseMs");
    this.#renewMs = positive(options.renewMs ?? 10_000, "renewMs");
    if (this.#renewMs >= this.#leaseMs) throw new RangeError("renewMs must be less than leaseMs");
    this.id = instanceId();
    const log = options.log ?? ((line: string) => console.warn(line));
    this.#link = new Link(client, {
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      log,
      down: "task methods fail",
      back: "tasks are served again",
    });
    // an outage lapses every lease: none is judged until a lease has passed since
    this.#calls = new TaskCalls(this.#link, this.#prefix, log, () => {
      this.#quietUntil = Date.now() + this.#leaseMs;
    });
    this.#channels = new TaskChannels(client, {
      id: this.id,
      prefix: this.#prefix,
      timeoutMs: positive(options.signalTimeoutMs ?? this.#leaseMs, "signalTimeoutMs"),
      link: this.#link,
      publish: (channel, message) => this.#calls.publish(channel, message),
      ...(options.probeMs === undefined ? {} : { probeMs: options.probeMs }),
      read: (taskId) => this.get(taskId),
    });
    this.#sweeper = new Sweeper({
      calls: this.#calls,
      judging: () => Date.now() >= this.#quietUntil,
      fail: (record) => this.#fail(record),
    });
  }

  /** Settles once this store hears other instances (after `attach`); while Redis is unreachable it waits. */
  get ready(): Promise<void> {
    return this.#channels.ready;
  }

  /** What this store's calls to Redis have done: calls, failures, timeouts, outages, and whether it is ready. */
  get stats(): RedisStats {
    return this.#link.stats;
  }

  /** The head of a change message; the script appends the record and the closing brace. */
  get #head(): string {
    return `{"from":${JSON.stringify(this.id)},"task":`;
  }

  async create(task: TaskRecord): Promise<void> {
    const ttl = task.ttlMs === null ? "" : String(task.ttlMs);
    const args = [JSON.stringify(task), task.status, this.id, ttl, String(this.#leaseMs), task.taskId];
    const running = !isTerminal(task.status);
    // the record, and this runner's index of its tasks (how a sweeper finds them if this instance dies)
    try {
      await Promise.all([
        this.#calls.run("create", this.#calls.keys(task.taskId), args),
        running ? this.#calls.run("index", [this.#calls.index(this.id)], ["0", task.taskId]) : undefined,
      ]);
    } catch (error) {
      // the client hears of no task; the half that was written (or that runs late) is deleted by the ticks
      if (this.#orphans.size < ORPHANS) this.#orphans.add(task.taskId);
      throw error;
    }
    if (running) this.#mine.add(task.taskId);
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const reply = (await this.#calls.run("get", this.#calls.keys(taskId), [taskId])) as
      | [string, number, string]
      | null;
    if (reply === null) return undefined;
    const record = parse(reply[0]);
    if (reply[2] && !this.#runnerOf.has(taskId)) {
      if (this.#runnerOf.size >= RUNNERS_KEPT) this.#runnerOf.delete(this.#runnerOf.keys().next().value!);
      this.#runnerOf.set(taskId, reply[2]);
    }
    // its instance went away (no renewal for a lease): the task fails now, not at the next sweep
    if (Number(reply[1]) === 1 && Date.now() >= this.#quietUntil) return (await this.#fail(record))[0];
    return record;
  }

  async set(task: TaskRecord): Promise<TaskRecord | undefined> {
    const json = JSON.stringify(task);
    const args = [json, task.status, this.#channels.changes, this.#head, task.taskId];
    for (;;) {
      try {
        const reply = await this.#calls.run("set", this.#calls.keys(task.taskId), args);
        if (reply === null) {
          this.#forget(task.taskId);
          return undefined;
        }
        if (reply !== 1) {
          this.#forget(task.taskId);
          return parse(reply);
        }
        if (isTerminal(task.status)) {
          this.#forget(task.taskId);
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

  /** A task of this instance ended: no more renewals, and out of its index at the next tick. */
  #forget(taskId: string): void {
    if (this.#mine.delete(taskId)) this.#ended.push(taskId);
  }

  /**
   * Fails a task whose lease ran out, unless it ended or was renewed meanwhile: the record stored
   * afterwards, and whether its lease is held.
   */
  async #fail(record: TaskRecord): Promise<[TaskRecord | undefined, boolean]> {
    const { inputRequests: _, ...rest } = record;
    const failed: TaskRecord = {
      ...rest,
      status: "failed",
      lastUpdatedAt: new Date().toISOString(),
      error: LOST,
    };
    const args = [JSON.stringify(failed), this.#channels.changes, this.#head, record.taskId];
    const reply = (await this.#calls.run("fail", this.#calls.keys(record.taskId), args)) as
      | [string, number]
      | null;
    if (reply === null) return [undefined, false];
    const stored = parse(reply[0]);
    // this instance failed it, and no server wrote it: its own listeners hear it here, once (the
    // message it published comes back as its own, and is skipped)
    if (Number(reply[1]) === 1) this.#channels.changed(stored, false);
    return [stored, Number(reply[1]) === 2];
  }

  /**
   * The renewal of one tick: the lease of each task this instance runs (one small script per task, sent
   * together), then its own lease as a runner (after its tasks', so that a runner found dead has only
   * lapsed tasks). Nothing else waits before it: a slow upkeep (reads of waited tasks, a sweep, each
   * call up to its deadline) never holds a live runner's leases back.
   */
  async #renew(): Promise<void> {
    const started = Date.now();
    const ids = [...this.#mine];
    const lease = String(this.#leaseMs);
    let renewed: unknown[];
    try {
      renewed = await Promise.all(
        ids.map((id) => this.#calls.run("renew", this.#calls.keys(id), [lease, id])),
      );
      await this.#calls.run("register", [this.#calls.runners], [this.id, lease]);
    } catch {
      return;
    }
    // a tick that waited (a stalled process, a slow Redis), or an outage the subscriber saw, judges no
    // lease: renewals may be late too
    if (Date.now() - started > this.#renewMs || !this.#link.ready)
      this.#quietUntil = Date.now() + this.#leaseMs;
    for (const [i, id] of ids.entries())
      if (Number(renewed[i]) === 0) {
        this.#forget(id);
        this.#gone.push(id);
      }
  }

  /**
   * The upkeep of one tick, beside the renewal: stops the tasks that ended elsewhere, takes ended tasks
   * out of this runner's index, deletes what failed creates left, fails the tasks of dead runners, and
   * reads the waited tasks again.
   */
  async #upkeep(): Promise<void> {
    const gone = this.#gone;
    this.#gone = [];
    for (const id of gone) {
      // ended elsewhere (a cancel whose signal was lost while this instance was reconnecting): stop it here
      const record = await this.get(id).catch(() => undefined);
      if (record && isTerminal(record.status)) await this.#channels.deliver(id, { type: "cancel" });
    }
    if (this.#ended.length > 0) {
      const ended = this.#ended;
      this.#ended = [];
      await this.#calls
        .run("index", [this.#calls.index(this.id)], [String(ended.length), ...ended])
        .catch(() => {
          this.#ended.push(...ended);
        });
    }
    for (const id of [...this.#orphans]) {
      const dropped = await Promise.all([
        this.#calls.run("drop", this.#calls.keys(id), [this.id, id]),
        this.#calls.run("index", [this.#calls.index(this.id)], ["1", id]),
      ]).then(
        () => true,
        () => false,
      );
      if (!dropped) break;
      this.#orphans.delete(id);
    }
    if (Date.now() >= this.#quietUntil) await this.#sweeper.sweep().catch(() => {});
    if (Date.now() >= this.#quietUntil) await this.#sweeper.sweepLegacy().catch(() => {});
    await this.#channels.recheck();
  }

  attach(peer: TaskPeer): void {
    if (this.#closed) return;
    this.#channels.attach(peer);
    if (this.#timer !== undefined) return;
    // the renewal and the upkeep each skip a tick while their last one runs, apart from each other
    let renewing = false;
    let tending = false;
    const tick = () => {
      if (this.#closed) return;
      if (!renewing) {
        renewing = true;
        void this.#renew().finally(() => (renewing = false));
      }
      if (!tending) {
        tending = true;
        void this.#upkeep().finally(() => (tending = false));
      }
    };
    this.#timer = unref(setInterval(tick, this.#renewMs));
    // registered as a runner from now on, not a tick later
    void this.#calls.run("register", [this.#calls.runners], [this.id, String(this.#leaseMs)]).catch(() => {});
  }

  async signal(taskId: string, signal: TaskSignal): Promise<boolean> {
    const runner =
      this.#runnerOf.get(taskId) ?? (await this.#calls.run("runner", [this.#calls.task(taskId)], []));
    if (runner === null || runner === undefined) return false;
    const { n, message, answer } = this.#channels.outgoing(taskId, signal);
    let heard: number;
    try {
      heard = await this.#calls.publish(this.#channels.instances + String(runner), message);
    } catch (error) {
      this.#channels.drop(n);
      throw error;
    }
    if (heard === 0) {
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
