/**
 * `RedisRateStore`: the token buckets of the rate limits in Redis, so that every replica takes from
 * one budget per caller. One script takes from all of a request's buckets at once (all or none),
 * on Redis's own clock, so replicas whose clocks differ still agree.
 */
import { type Bucket, MemoryRateStore, type RateStore } from "../limits/rate.js";
import { Health, type RedisClient, type RedisLog } from "./client.js";
import { Script } from "./script.js";

/** Options of {@link RedisRateStore}. */
export interface RedisRateStoreOptions {
  /** The prefix of the bucket keys. Default: `"picomcp:rate:"`. */
  prefix?: string;
  /** Where the one line per Redis outage and per recovery goes. Default: `console.warn`. */
  log?: RedisLog;
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
 * A {@link RateStore} on Redis (give it a connected node-redis client): every replica with the same
 * prefix shares each caller's buckets. While Redis is down each replica counts on its own, in memory
 * (a caller may then get up to one budget per replica), and one log line says so. Never rejects.
 * @example
 * const redis = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
 * const rates = { methods: { "tools/call": { perMinute: 60 } }, store: new RedisRateStore(redis) };
 * const server = new McpServer({ name: "search", version: "1.0.0", limits: { rates } });
 */
export class RedisRateStore implements RateStore {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #health: Health;
  readonly #local = new MemoryRateStore();

  constructor(client: RedisClient, options: RedisRateStoreOptions = {}) {
    this.#client = client;
    this.#prefix = options.prefix ?? "picomcp:rate:";
    this.#health = new Health(
      options.log,
      "each instance counts rate limits on its own",
      "rate limits are shared again",
    );
    client.on("error", (error) => this.#health.failed(error));
    client.on("ready", () => this.#health.recovered());
  }

  async take(buckets: readonly Bucket[]): Promise<number> {
    // a command queued while disconnected would wait until Redis is back: count here meanwhile
    if (!this.#client.isReady) {
      this.#health.failed(new Error("the client is not connected"));
      return this.#local.take(buckets);
    }
    const keys = buckets.map((b) => this.#prefix + b.key);
    const args = buckets.flatMap((b) => [String(b.capacity), String(b.perMs)]);
    try {
      const reply = await TAKE.send(this.#client, keys, args);
      const wait = Number(reply);
      if (!Number.isFinite(wait)) throw new Error(`the rate script answered ${String(reply)}`);
      return wait;
    } catch (error) {
      this.#health.failed(error);
      return this.#local.take(buckets);
    }
  }
}
