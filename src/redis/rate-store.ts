/**
 * `RedisRateStore`: the token buckets of the rate limits in Redis, so that every replica takes from
 * one budget per caller. One script takes from all of a request's buckets at once (all or none),
 * on Redis's own clock, so replicas whose clocks differ still agree.
 */
import { type Bucket, MemoryRateStore, type RateStore } from "../limits/rate.js";
import type { RedisClient, RedisLog } from "./client.js";
import { DEFAULT_TIMEOUT_MS, Link, type RedisStats } from "./link.js";
import { Script } from "./script.js";

/** Options of {@link RedisRateStore}. */
export interface RedisRateStoreOptions {
  /** The prefix of the bucket keys. Default: `"picomcp:rate:"`. */
  prefix?: string;
  /** Where the one line per Redis outage and per recovery goes. Default: `console.warn`. */
  log?: RedisLog;
  /** The deadline of each take, in milliseconds: past it the request is counted here. Default: 1000. */
  timeoutMs?: number;
}

/**
 * KEYS: the buckets; ARGV: capacity and tokens per millisecond of each. Returns 0 when it took a
 * token from every bucket, else the milliseconds until each has one (and takes none). A bucket is a
 * hash of its tokens and when they were counted; it expires once it would be full again.
 */
const TAKE = new Script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wait = 0
local levels = {}
for i, key in ipairs(KEYS) do
  local cap = tonumber(ARGV[2 * i - 1])
  local rate = tonumber(ARGV[2 * i])
  local v = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(v[1])
  if tokens == nil then
    tokens = cap
  else
    tokens = math.min(cap, tokens + math.max(0, now - tonumber(v[2])) * rate)
  end
  levels[i] = tokens
  if tokens < 1 then wait = math.max(wait, math.ceil((1 - tokens) / rate)) end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local cap = tonumber(ARGV[2 * i - 1])
  local rate = tonumber(ARGV[2 * i])
  redis.call('HSET', key, 'tokens', tostring(levels[i] - 1), 'at', tostring(now))
  redis.call('PEXPIRE', key, math.ceil(cap / rate))
end
return 0
`);

/**
 * A {@link RateStore} on Redis: give it a node-redis client as it is (`createClient()`,
 * `createCluster()` or `createSentinel()`, connected); every replica with the same prefix shares each
 * caller's buckets. A caller's buckets are keyed `<prefix>{<caller>}:<rule>`: they share a slot, so one
 * script takes from all of a request's at once even on a cluster, and callers spread over the slots.
 * Each take has a deadline (`timeoutMs`, default {@link DEFAULT_TIMEOUT_MS}); past it, or while Redis
 * is down, each replica counts on its own, in memory (a caller may then get up to one budget per
 * replica). Once a take has failed, the next ones are counted here at once, but for one a deadline
 * that goes to Redis to learn whether it is back. One log line says so, one more when the limits are shared again, and {@link stats}
 * counts it all. Never rejects.
 * @example
 * const redis = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
 * const rates = { methods: { "tools/call": { perMinute: 60 } }, store: new RedisRateStore(redis) };
 * const server = new McpServer({ name: "search", version: "1.0.0", limits: { rates } });
 */
export class RedisRateStore implements RateStore {
  readonly #link: Link;
  readonly #prefix: string;
  readonly #local = new MemoryRateStore();
  /** While the store is down: when (performance.now()) the next take may go to Redis to see if it is back. */
  #nextTry = 0;

  constructor(client: RedisClient, options: RedisRateStoreOptions = {}) {
    this.#prefix = options.prefix ?? "picomcp:rate:";
    this.#link = new Link(client, {
      ...options,
      down: "each instance counts rate limits on its own",
      back: "rate limits are shared again",
    });
  }

  /** What the store's calls to Redis have done: calls, failures, deadlines passed, outages. */
  get stats(): RedisStats {
    return this.#link.stats;
  }

  async take(buckets: readonly Bucket[]): Promise<number> {
    if (!this.#link.ready) {
      // down: no request waits for Redis but one a deadline, which finds out whether it is back
      const now = performance.now();
      if (now < this.#nextTry) return this.#local.take(buckets);
      this.#nextTry = now + this.#link.timeoutMs;
    }
    const keys = buckets.map((b) => this.#key(b));
    const args = buckets.flatMap((b) => [String(b.capacity), String(b.perMs)]);
    try {
      // a take not yet sent at the deadline is dropped (Link.call); one already written to a Redis that
      // stalls runs when it resumes (a token taken there too, while this one is counted here)
      const reply = await this.#link.call((client) => TAKE.send(client, keys, args));
      const wait = Number(reply);
      if (!Number.isFinite(wait)) throw new Error(`the rate script answered ${String(reply)}`);
      return wait;
    } catch {
      // past the deadline, refused, or failed (the Link has told it): counted here meanwhile
      return this.#local.take(buckets);
    }
  }

  /**
   * `<prefix>{<caller>}:<rule>`: the caller's hash tag puts all of a request's buckets in one slot.
   * (Keys of the earlier layout, `<prefix><rule> <caller>`, are no longer read: they expire once full,
   * and a bucket that starts over starts full, as those would have been soon anyway.)
   */
  #key(b: Bucket): string {
    const group = b.group;
    if (!group || !b.key.endsWith(` ${group}`)) return this.#prefix + b.key;
    return `${this.#prefix}{${group}}:${b.key.slice(0, -group.length - 1)}`;
  }
}
