/**
 * `RedisSessionStore`: 2025 sessions that every instance serves. A session is one Redis hash that
 * expires when idle (under `s:`, apart from the indexes; found once at its old key and moved, after a
 * rolling deploy); each caller's sessions and all of them are sorted sets scored by expiry, so the
 * caps hold across instances; instances tell each other of a session through the bus's relay channel.
 */
import type {
  HomeChange,
  SessionCaps,
  SessionChange,
  SessionMessage,
  SessionRecord,
  SessionStore,
} from "../http/session-store.js";
import type { LoggingLevel } from "../types.js";
import type { RedisBus } from "./bus.js";
import { Health, type RedisClient, type RedisLog } from "./client.js";
import { Script } from "./script.js";

/** Options of {@link RedisSessionStore}. */
export interface RedisSessionStoreOptions {
  /** The server's `RedisBus`: the store sends its messages on the bus's relay channel. Required. */
  bus: RedisBus;
  /** The prefix of the keys. Default: `"picomcp:session:"`. */
  prefix?: string;
  /** Where the one line per Redis outage and per recovery goes. Default: `console.warn`. */
  log?: RedisLog;
}

/**
 * Redis's clock in milliseconds, so that instances whose clocks differ agree on expiry. Keys expire at
 * `now + ttl` too (PEXPIREAT), the deadline the caps' scores hold: a relative PEXPIRE counts from the
 * script's start, which on a starved Redis lags TIME, and the record outlived its count. Redis expires
 * a key once its deadline has passed (the millisecond after it), so a count lets go of a session only
 * then too: scores below `now`, never at it.
 */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * A session of the release before hashes moved under `s:` is found at the id's old key (the last of
 * KEYS; the session's own key when there is none): renamed once, where the session is missing, so a
 * rolling deploy loses no live session. Its TTL and its place in the caps' sets stay as they were.
 */
const MOVED = `local function moved()
  local old = KEYS[#KEYS]
  if old == KEYS[1] or redis.call('TYPE', old).ok ~= 'hash' then return false end
  redis.call('RENAME', old, KEYS[1])
  return true
end
`;

/**
 * KEYS: the session, its caller's set, the set of all. ARGV: ttl, the caller's cap, the total, the
 * id, then the hash's fields and values. 1: the caller is at its cap; 2: all are; 0: kept.
 */
const CREATE = new Script(`${NOW}
local ttl = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 1 end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[3]) then return 2 end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('PEXPIREAT', KEYS[1], now + ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[4])
redis.call('PEXPIREAT', KEYS[2], now + ttl)
redis.call('ZADD', KEYS[3], now + ttl, ARGV[4])
return 0`);

/**
 * KEYS: the session, the prefix of the callers' sets, the set of all, its old key. ARGV: ttl, the id,
 * then "claim"/"release" and an instance, or nothing. The hash as it was (false: no session), its
 * expiry pushed ahead in all three places.
 */
const TOUCH = new Script(`${NOW}
${MOVED}
local h = redis.call('HGETALL', KEYS[1])
if #h == 0 and moved() then h = redis.call('HGETALL', KEYS[1]) end
if #h == 0 then return false end
local ttl = tonumber(ARGV[1])
redis.call('PEXPIREAT', KEYS[1], now + ttl)
local caller = redis.call('HGET', KEYS[1], 'k')
redis.call('ZADD', KEYS[2] .. caller, 'XX', now + ttl, ARGV[2])
redis.call('PEXPIREAT', KEYS[2] .. caller, now + ttl)
redis.call('ZADD', KEYS[3], 'XX', now + ttl, ARGV[2])
if ARGV[3] == 'claim' then
  redis.call('HSET', KEYS[1], 'h', ARGV[4])
elseif ARGV[3] == 'release' and redis.call('HGET', KEYS[1], 'h') == ARGV[4] then
  redis.call('HDEL', KEYS[1], 'h')
end
return h`);

/** KEYS: the session, its old key. ARGV: the log level (empty: unchanged), then "+uri" and "-uri". Nothing for a session that ended. */
const UPDATE = new Script(`${MOVED}
if redis.call('EXISTS', KEYS[1]) == 0 and not moved() then return 0 end
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'l', ARGV[1]) end
for i = 2, #ARGV do
  local field = 's:' .. string.sub(ARGV[i], 2)
  if string.sub(ARGV[i], 1, 1) == '+' then redis.call('HSET', KEYS[1], field, '1')
  else redis.call('HDEL', KEYS[1], field) end
end
return 1`);

/** KEYS: the session, the prefix of the callers' sets, the set of all, its old key. ARGV: the id. 1 when it was live. */
const END = new Script(`${MOVED}
local caller = redis.call('HGET', KEYS[1], 'k')
if not caller and moved() then caller = redis.call('HGET', KEYS[1], 'k') end
if not caller then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2] .. caller, ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1`);

/** The form of the ids the release before kept at `prefix + id` (the handler's own, see `isSessionId`). */
const OLD_ID = /^[0-9a-f]{32}$/;

/** The static part of a record, as kept in the field `r`. */
interface Fixed {
  v: string;
  c: SessionRecord["capabilities"];
  i?: SessionRecord["clientInfo"];
  p?: string;
  a: boolean;
}

/** A record from the flat field/value list of `HGETALL`. */
function fromHash(flat: readonly unknown[]): SessionRecord {
  let fixed: Fixed | undefined;
  let caller = "";
  let logLevel: LoggingLevel | undefined;
  let home: string | undefined;
  const subscriptions: string[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field = String(flat[i]);
    const value = String(flat[i + 1]);
    if (field === "r") fixed = JSON.parse(value) as Fixed;
    else if (field === "k") caller = value;
    else if (field === "l") logLevel = value as LoggingLevel;
    else if (field === "h") home = value;
    else if (field.startsWith("s:")) subscriptions.push(field.slice(2));
  }
  if (!fixed) throw new Error("picomcp/redis: a session hash without its record");
  return {
    protocolVersion: fixed.v,
    capabilities: fixed.c,
    clientInfo: fixed.i,
    principal: fixed.p,
    authenticated: fixed.a,
    caller,
    logLevel,
    subscriptions,
    home,
  };
}

/** The `type` of every {@link SessionMessage}, to drop what another program sent on the channel. */
const TYPES = new Set(["client", "out", "state", "home", "event", "end"]);

/**
 * A {@link SessionStore} on Redis: give it a connected node-redis client and the server's `RedisBus`.
 * While Redis is down every call rejects at once (nothing waits in the client's queue), and the
 * handler answers a session's requests with 503; one log line says so.
 * @example
 * const redis = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
 * const bus = new RedisBus(redis);
 * const server = new McpServer({ name: "notes", version: "1.0.0", bus });
 * const sessions = new RedisSessionStore(redis, { bus });
 * await serve(server, { port: 3000, sessions, eventStore: new RedisEventStore(redis) });
 */
export class RedisSessionStore implements SessionStore {
  readonly #client: RedisClient;
  readonly #bus: RedisBus;
  readonly #prefix: string;
  readonly #health: Health;

  constructor(client: RedisClient, options: RedisSessionStoreOptions) {
    if (!options?.bus) throw new TypeError("RedisSessionStore needs the server's RedisBus: { bus }");
    this.#client = client;
    this.#bus = options.bus;
    this.#prefix = options.prefix ?? "picomcp:session:";
    this.#health = new Health(
      options.log,
      "requests of shared sessions get 503",
      "shared sessions are served again",
    );
    client.on("error", (error) => this.#health.failed(error));
    client.on("ready", () => this.#health.recovered());
  }

  async create(id: string, record: SessionRecord, caps: SessionCaps): Promise<"ok" | "caller" | "total"> {
    const fixed: Fixed = { v: record.protocolVersion, c: record.capabilities, a: record.authenticated };
    if (record.clientInfo !== undefined) fixed.i = record.clientInfo;
    if (record.principal !== undefined) fixed.p = record.principal;
    const fields = ["r", JSON.stringify(fixed), "k", record.caller];
    if (record.logLevel !== undefined) fields.push("l", record.logLevel);
    for (const uri of record.subscriptions) fields.push(`s:${uri}`, "1");
    const args = [String(caps.ttlMs), String(caps.perCaller), String(caps.total), id, ...fields];
    const keys = [this.#record(id), `${this.#prefix}caller:${record.caller}`, `${this.#prefix}all`];
    const reply = Number(await this.#run(CREATE, keys, args));
    return reply === 0 ? "ok" : reply === 1 ? "caller" : "total";
  }

  async touch(id: string, ttlMs: number, home?: HomeChange): Promise<SessionRecord | undefined> {
    const args = [String(ttlMs), id];
    if (home) args.push(...("claim" in home ? ["claim", home.claim] : ["release", home.release]));
    const reply = await this.#run(TOUCH, this.#keys(id), args);
    if (!Array.isArray(reply)) return undefined;
    const record = fromHash(reply);
    if (!home) return record;
    if ("claim" in home) return { ...record, home: home.claim };
    return record.home === home.release ? { ...record, home: undefined } : record;
  }

  async update(id: string, change: SessionChange): Promise<void> {
    const args = [change.logLevel ?? ""];
    for (const uri of change.subscribe ?? []) args.push(`+${uri}`);
    for (const uri of change.unsubscribe ?? []) args.push(`-${uri}`);
    await this.#run(UPDATE, [this.#record(id), this.#old(id)], args);
  }

  async end(id: string): Promise<boolean> {
    return Number(await this.#run(END, this.#keys(id), [id])) === 1;
  }

  publish(message: SessionMessage): void {
    this.#bus.relay(JSON.stringify(message));
  }

  subscribe(listener: (message: SessionMessage) => void): () => void {
    return this.#bus.onRelay((text) => {
      let m: unknown;
      try {
        m = JSON.parse(text);
      } catch {
        return;
      }
      const t = m as Partial<SessionMessage> | null;
      if (
        typeof t?.type === "string" &&
        TYPES.has(t.type) &&
        typeof t.sid === "string" &&
        typeof t.from === "string"
      )
        listener(t as SessionMessage);
    });
  }

  #keys(id: string): string[] {
    return [this.#record(id), `${this.#prefix}caller:`, `${this.#prefix}all`, this.#old(id)];
  }

  /**
   * Where the release before kept a session's hash (the prefix and the id): only for an id of the
   * handler's form (32 lower-case hex digits), which no index key has; else the session's own key.
   */
  #old(id: string): string {
    return OLD_ID.test(id) ? this.#prefix + id : this.#record(id);
  }

  /**
   * The key of a session's hash: under `s:`, where no index key is (`caller:…`, `all`), so that an
   * id, whatever a client sends, never names one of them.
   */
  #record(id: string): string {
    return `${this.#prefix}s:${id}`;
  }

  /** Runs a script now, or rejects at once while the client is not connected. */
  async #run(script: Script, keys: string[], args: string[]): Promise<unknown> {
    if (!this.#client.isReady) {
      const error = new Error("the client is not connected");
      this.#health.failed(error);
      throw error;
    }
    try {
      const reply = await script.send(this.#client, keys, args);
      // the last thing heard: a failure that was none of Redis's reachability does not silence the next outage
      this.#health.recovered();
      return reply;
    } catch (error) {
      this.#health.failed(error);
      throw error;
    }
  }
}
