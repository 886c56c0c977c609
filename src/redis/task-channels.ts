/**
 * The pub/sub side of `RedisTaskStore`: one channel every instance hears (each task change, so that
 * listen streams and waiting `tasks/result` requests anywhere learn of it; published by the scripts,
 * classic, which a cluster carries to every node), and one channel per instance (signals for the tasks
 * it runs, and the answers to the signals it sent; sharded on a cluster, so that a publish's count is
 * every subscriber and "nobody heard" is known at once).
 */
import { isTerminal, type TaskPeer, type TaskRecord, type TaskSignal } from "../ext/task-store.js";
import type { RedisClient } from "./client.js";
import type { Link } from "./link.js";
import { Subscriber } from "./subscriber.js";

/** What the channels need of their store. */
export interface TaskChannelsOptions {
  readonly id: string;
  readonly prefix: string;
  /** How long a signal waits for its answer. */
  readonly timeoutMs: number;
  /** The store's calls to Redis: the subscriber's probes feed its health. */
  readonly link: Link;
  /** Publishes on an instance's channel (an ack): how many heard it. */
  readonly publish: (channel: string, message: string) => Promise<number>;
  /** How often each channel is probed. */
  readonly probeMs?: number;
  /** Reads a task (a waited one is read again after a re-subscription, in case its end was missed). */
  readonly read: (taskId: string) => Promise<TaskRecord | undefined>;
}

/** Waited tasks read again at once, at most. */
const RECHECKS = 16;

type Waiter = (record: TaskRecord | undefined) => void;

const isObject = (v: unknown): v is { [key: string]: unknown } =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A signal as another instance sent it, or undefined when it is not one picomcp sends. */
function signalOf(v: unknown): TaskSignal | undefined {
  if (!isObject(v)) return undefined;
  if (v.type === "cancel") return { type: "cancel" };
  if (v.type === "update" && isObject(v.responses)) return { type: "update", responses: v.responses };
  return undefined;
}

/** The channels of one store. */
export class TaskChannels {
  /** The channel of every task change. */
  readonly changes: string;
  /** The prefix of the instances' own channels (the instance id follows). */
  readonly instances: string;
  readonly #o: TaskChannelsOptions;
  readonly #client: RedisClient;
  readonly #peers: TaskPeer[] = [];
  readonly #waiters = new Map<string, Set<Waiter>>();
  readonly #pending = new Map<number, (ran: boolean) => void>();
  #n = 0;
  /** Made at the first `attach`: a store no server uses subscribes to nothing. */
  #subscriber: Subscriber | undefined;
  #closed = false;

  constructor(client: RedisClient, options: TaskChannelsOptions) {
    this.#o = options;
    this.#client = client;
    this.changes = `${options.prefix}changes`;
    this.instances = `${options.prefix}instance:`;
  }

  /** Settles once both channels are subscribed (resolved at once before `attach`). */
  get ready(): Promise<void> {
    return this.#subscriber?.ready ?? Promise.resolve();
  }

  attach(peer: TaskPeer): void {
    this.#peers.push(peer);
    if (this.#subscriber !== undefined || this.#closed) return;
    const s = new Subscriber(this.#client, {
      link: this.#o.link,
      ...(this.#o.probeMs === undefined ? {} : { probeMs: this.#o.probeMs }),
    });
    s.add(this.changes, (m) => this.#change(m));
    s.add(this.instances + this.#o.id, (m) => void this.#own(m), true);
    // an end published while the channel was lost is found by reading the waited tasks again
    s.onResubscribed(() => void this.recheck());
    this.#subscriber = s;
  }

  #change(message: string): void {
    let m: unknown;
    try {
      m = JSON.parse(message);
    } catch {
      return;
    }
    if (!isObject(m) || typeof m.from !== "string" || !isObject(m.task)) return;
    const task = m.task as unknown as TaskRecord;
    if (typeof task.taskId !== "string" || typeof task.status !== "string") return;
    this.changed(task, m.from === this.#o.id);
  }

  /** A task changed: this instance's listeners hear it unless `own` (its writer told them), and its waiters. */
  changed(task: TaskRecord, own: boolean): void {
    if (!own) for (const peer of this.#peers) peer.changed(structuredClone(task));
    if (isTerminal(task.status)) this.ended(task);
  }

  /** A task ended: its waiters here get it. */
  ended(task: TaskRecord): void {
    const waiters = this.#waiters.get(task.taskId);
    if (waiters === undefined) return;
    this.#waiters.delete(task.taskId);
    for (const w of waiters) w(structuredClone(task));
  }

  async #own(message: string): Promise<void> {
    let m: unknown;
    try {
      m = JSON.parse(message);
    } catch {
      return;
    }
    if (!isObject(m) || typeof m.n !== "number") return;
    if (m.kind === "ack") {
      this.#pending.get(m.n)?.(m.ran === true);
      this.#pending.delete(m.n);
      return;
    }
    const signal = signalOf(m.signal);
    if (m.kind !== "signal" || typeof m.from !== "string" || typeof m.taskId !== "string" || !signal) return;
    const ran = await this.deliver(m.taskId, signal);
    const ack = JSON.stringify({ kind: "ack", n: m.n, ran });
    // an ack lost (Redis down meanwhile): the sender answers false at its timeout
    this.#o.publish(this.instances + m.from, ack).catch(() => {});
  }

  /** Hands a signal to the server running the task here, if one does: whether one did. */
  async deliver(taskId: string, signal: TaskSignal): Promise<boolean> {
    try {
      for (const peer of this.#peers) if (await peer.deliver(taskId, signal)) return true;
    } catch {
      // a server that failed to take it did not run it
    }
    return false;
  }

  /** A signal to send: its message, and its answer (false when none comes within the timeout). */
  outgoing(taskId: string, signal: TaskSignal): { n: number; message: string; answer: Promise<boolean> } {
    const n = ++this.#n;
    const answer = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(n);
        resolve(false);
      }, this.#o.timeoutMs);
      this.#pending.set(n, (ran) => {
        clearTimeout(timer);
        resolve(ran);
      });
    });
    const message = JSON.stringify({ kind: "signal", n, from: this.#o.id, taskId, signal });
    return { n, message, answer };
  }

  /** Forgets a signal that no instance heard. */
  drop(n: number): void {
    this.#pending.get(n)?.(false);
    this.#pending.delete(n);
  }

  /** Resolves once the task is terminal or gone; rejects when `abort` fires or it cannot be read. */
  wait(taskId: string, abort: AbortSignal): Promise<TaskRecord | undefined> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        done();
        reject(abort.reason);
      };
      const waiter: Waiter = (record) => {
        done();
        resolve(record);
      };
      const done = () => {
        abort.removeEventListener("abort", onAbort);
        const set = this.#waiters.get(taskId);
        set?.delete(waiter);
        if (set?.size === 0) this.#waiters.delete(taskId);
      };
      if (abort.aborted) return reject(abort.reason);
      abort.addEventListener("abort", onAbort, { once: true });
      const set = this.#waiters.get(taskId) ?? new Set<Waiter>();
      this.#waiters.set(taskId, set);
      set.add(waiter);
      // it may have ended before the waiter was in place
      this.#o.read(taskId).then(
        (record) => {
          if (record === undefined || isTerminal(record.status)) waiter(record);
        },
        (error: unknown) => {
          done();
          reject(error);
        },
      );
    });
  }

  /** Reads the waited tasks again: an end published while this instance was not subscribed is found. */
  async recheck(): Promise<void> {
    const waited = [...this.#waiters];
    // a few reads at a time: many waiters on a node that does not answer cost a deadline per batch
    for (let i = 0; i < waited.length; i += RECHECKS) {
      await Promise.all(
        waited.slice(i, i + RECHECKS).map(async ([taskId, set]) => {
          const record = await this.#o.read(taskId).catch(() => "unread" as const);
          if (record === "unread") return;
          if (record === undefined || isTerminal(record.status)) for (const w of [...set]) w(record);
        }),
      );
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const resolve of this.#pending.values()) resolve(false);
    this.#pending.clear();
    this.#subscriber?.close();
  }
}
