/**
 * `RedisEventStore`: the events of resumable SSE streams in Redis, one list per stream, bounded in
 * length and expiring, so a stream's buffer lives outside the process and every instance reads it.
 */
import type { EventStore, StoredEvent } from "../http/event-store.js";
import { Health, type RedisClient, type RedisLog } from "./client.js";

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
}

function positive(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer`);
  return n;
}

/**
 * An {@link EventStore} on Redis lists (give it a connected node-redis client). While Redis is down
 * nothing is kept and nothing is found: live events still flow, and a client resuming then misses
 * them, as with a full memory store; one log line says so. Never rejects.
 */
export class RedisEventStore implements EventStore {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #max: number;
  readonly #maxChars: number;
  readonly #ttlMs: number;
  readonly #health: Health;

  constructor(client: RedisClient, options: RedisEventStoreOptions = {}) {
    this.#client = client;
    this.#prefix = options.prefix ?? "picomcp:events:";
    this.#max = positive(options.maxEventsPerStream ?? 1000, "maxEventsPerStream");
    this.#maxChars = positive(options.maxEventChars ?? 4 * 1024 * 1024, "maxEventChars");
    this.#ttlMs = positive(options.ttlMs ?? 30 * 60_000, "ttlMs");
    this.#health = new Health(
      options.log,
      "SSE events are delivered live but not kept",
      "SSE events are kept again",
    );
    client.on("error", (error) => this.#health.failed(error));
    client.on("ready", () => this.#health.recovered());
  }

  async append(streamId: string, seq: number, data: string): Promise<void> {
    if (data.length > this.#maxChars || !this.#ready()) return;
    const key = this.#prefix + streamId;
    try {
      // one connection keeps the order, and the client pipelines the three
      await Promise.all([
        this.#client.rPush(key, `${seq} ${data}`),
        this.#client.lTrim(key, -this.#max, -1),
        this.#client.pExpire(key, this.#ttlMs),
      ]);
    } catch (error) {
      this.#health.failed(error);
    }
  }

  async after(streamId: string, seq: number): Promise<readonly StoredEvent[]> {
    if (!this.#ready()) return [];
    let entries: string[];
    try {
      entries = await this.#client.lRange(this.#prefix + streamId, 0, -1);
    } catch (error) {
      this.#health.failed(error);
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
    if (!this.#ready()) return;
    try {
      await this.#client.del(this.#prefix + streamId);
    } catch (error) {
      this.#health.failed(error);
    }
  }

  /** Whether commands can go out now; one queued while disconnected would wait until Redis is back. */
  #ready(): boolean {
    if (this.#client.isReady) return true;
    this.#health.failed(new Error("the client is not connected"));
    return false;
  }
}
