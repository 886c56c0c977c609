/**
 * `RedisEventStore`: the events of resumable SSE streams in Redis, one list per stream, bounded in
 * length and expiring, so a stream's buffer lives outside the process and every instance reads it.
 */
import type { EventStore, StoredEvent } from "../http/event-store.js";
import type { RedisClient, RedisLog } from "./client.js";
import { DEFAULT_TIMEOUT_MS, Link, positive, type RedisStats, RedisTimeoutError, within } from "./link.js";

/** Options of {@link RedisEventStore}. */
export interface RedisEventStoreOptions {
  /** The prefix of the stream keys. Default: `"picomcp:events:"`. */
  prefix?: string;
  /** Events kept per stream; the oldest go first. Default: 1000. */
  maxEventsPerStream?: number;
  /** Characters of the largest event kept; a larger one is delivered live but not kept. Default: 4 Mi. */
  maxEventChars?: number;
  /** Milliseconds a stream is kept after its last event (match `sessionIdleMs`). Default: 1800000. */
  ttlMs?: number;
  /** Where the one line per Redis outage and per recovery goes. Default: `console.warn`. */
  log?: RedisLog;
  /**
   * The deadline of each call, in milliseconds: past it the event is not kept (unless it was already
   * written to a Redis that stalls: it is kept when Redis resumes), or none is found. Default: 1000.
   */
  timeoutMs?: number;
}

/**
 * An {@link EventStore} on Redis lists: give it a node-redis client as it is (`createClient()`,
 * `createCluster()` or `createSentinel()`, connected). Each stream is one key (on a cluster, the
 * streams spread over the slots). Every call has a deadline (`timeoutMs`, default
 * {@link DEFAULT_TIMEOUT_MS}); while Redis is down or slow nothing is kept and nothing is found: live
 * events still flow, and a client resuming then misses them, as with a full memory store. A stream's
 * calls go in order, each sent only within its deadline of being asked for (one behind a slow call is
 * dropped when its turn comes too late), and a stream holds at most `maxEventsPerStream` appends, or
 * four times `maxEventChars`, waiting their turn (more are not kept): a stalled Redis delays a resume
 * by one deadline and holds a bounded memory. One log line says so, one more when events are kept
 * again, and {@link stats} counts it all. Never rejects.
 */
export class RedisEventStore implements EventStore {
  readonly #link: Link;
  readonly #prefix: string;
  readonly #max: number;
  readonly #maxChars: number;
  readonly #ttlMs: number;
  /** Each stream's calls not yet settled: its last (the next waits for it), and the appends' count and characters. */
  readonly #queues = new Map<string, { tail: Promise<unknown>; appends: number; chars: number }>();

  constructor(client: RedisClient, options: RedisEventStoreOptions = {}) {
    this.#prefix = options.prefix ?? "picomcp:events:";
    this.#max = positive(options.maxEventsPerStream ?? 1000, "maxEventsPerStream");
    this.#maxChars = positive(options.maxEventChars ?? 4 * 1024 * 1024, "maxEventChars");
    this.#ttlMs = positive(options.ttlMs ?? 30 * 60_000, "ttlMs");
    this.#link = new Link(client, {
      ...options,
      down: "SSE events are delivered live but not kept",
      back: "SSE events are kept again",
    });
  }

  /** What the store's calls to Redis have done: calls, failures, deadlines passed, outages. */
  get stats(): RedisStats {
    return this.#link.stats;
  }

  async append(streamId: string, seq: number, data: string): Promise<void> {
    if (data.length > this.#maxChars) return;
    const queue = this.#queues.get(streamId);
    // too much waiting behind a slow Redis already: not kept, as while it is down
    if (queue && (queue.appends >= this.#max || queue.chars + data.length > 4 * this.#maxChars)) return;
    const key = this.#prefix + streamId;
    await this.#inOrder(
      streamId,
      (client) =>
        Promise.all([
          client.rPush(key, `${seq} ${data}`),
          client.lTrim(key, -this.#max, -1),
          client.pExpire(key, this.#ttlMs),
        ]),
      data.length,
    ).catch(() => {});
  }

  async after(streamId: string, seq: number): Promise<readonly StoredEvent[]> {
    let entries: string[];
    try {
      // within one deadline of the ask, however many calls of the stream wait before it
      const read = this.#inOrder(streamId, (client) => client.lRange(this.#prefix + streamId, 0, -1));
      entries = await within(read, this.#link.timeoutMs, "a resume's read");
    } catch {
      return [];
    }
    const out: StoredEvent[] = [];
    for (const entry of entries) {
      const space = entry.indexOf(" ");
      const n = Number(entry.slice(0, space));
      if (space > 0 && Number.isInteger(n) && n > seq) out.push({ seq: n, data: entry.slice(space + 1) });
    }
    return out;
  }

  async drop(streamId: string): Promise<void> {
    await this.#inOrder(streamId, (client) => client.del(this.#prefix + streamId)).catch(() => {});
  }

  /**
   * Sends a stream's call once its previous one has settled (at once when none is pending), unless its
   * own deadline has passed by then: it is dropped, unsent. The transport does not wait for appends,
   * and a client need not keep the order of what it was given: a cluster client routes a DEL by a
   * longer path than an RPUSH, and a read could pass a write. `chars`: an append's, counted while it waits.
   */
  #inOrder<T>(streamId: string, send: (client: RedisClient) => Promise<T>, chars?: number): Promise<T> {
    const asked = performance.now();
    const queue = this.#queues.get(streamId) ?? { tail: Promise.resolve(), appends: 0, chars: 0 };
    const before = this.#queues.has(streamId) ? queue.tail : undefined;
    const call = () =>
      performance.now() - asked >= this.#link.timeoutMs
        ? Promise.reject(new RedisTimeoutError(this.#link.timeoutMs))
        : this.#link.call(send);
    const result = before ? before.then(call) : call();
    if (chars !== undefined) {
      queue.appends++;
      queue.chars += chars;
    }
    const tail = result.then(
      () => {},
      () => {},
    );
    queue.tail = tail;
    this.#queues.set(streamId, queue);
    void tail.then(() => {
      if (chars !== undefined) {
        queue.appends--;
        queue.chars -= chars;
      }
      if (queue.tail === tail) this.#queues.delete(streamId);
    });
    return result;
  }
}
