/**
 * `RedisSessionStore`: 2025 sessions that every instance serves. A session is one Redis hash that
 * expires when idle (under `s:`, apart from the caps' sets; found once at its old key and moved, after
 * a rolling deploy); each caller's sessions and all of them are sorted sets, so the caps hold across
 * instances; instances tell each other of a session through the bus's relay channel. Every script
 * touches one key (session-scripts.ts): on a cluster, sessions, callers and the total spread over the
 * masters.
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
import type { RedisClient, RedisLog } from "./client.js";
import { Link, type RedisStats, slotOf, unref } from "./link.js";
import { END, PUSH, PUSHED, RELEASE, RESERVE, TOUCH, UPDATE, WRITE } from "./session-scripts.js";

/** Options of {@link RedisSessionStore}. */
export interface RedisSessionStoreOptions {
  /** The server's `RedisBus`: the store sends its messages on the bus's relay channel. Required. */
  bus: RedisBus;
  /** The prefix of the keys. Default: `"picomcp:session:"`. */
  prefix?: string;
  /**
   * The deadline of each call to Redis, in milliseconds: past it the call fails and the session's
   * request gets 503 with `Retry-After`. Default: 1000.
   */
  timeoutMs?: number;
  /** Where the one line per Redis outage and per recovery goes. Default: `console.warn`. */
  log?: RedisLog;
}

/**
 * How long past a session's expiry its places in the caps' sets hold: a quarter of its time to live,
 * at most a minute. An idle session that expired is still counted up to that much longer (one ended
 * by DELETE leaves at once); in return a busy session moves its places on once per slack, not on
 * every request.
 */
export function slackOf(ttlMs: number): number {
  return Math.min(Math.ceil(ttlMs / 4), 60_000);
}

/** Tries of a create whose places lapsed before its record was written (Redis slower than its time to live). */
const TRIES = 3;

/** Tries of a clean-up that fails (a place given back, a half-made session deleted), a deadline apart. */
const CLEANUPS = 3;

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
 * A {@link SessionStore} on Redis: give it a connected node-redis client (`createClient()`,
 * `createCluster()` or `createSentinel()`) and the server's `RedisBus`. Every call has a deadline
 * (`timeoutMs`); while Redis is down or past it, calls reject and the handler answers a session's
 * requests with 503 and `Retry-After`; one log line says so, another when calls answer again.
 *
 * A session request costs one command (its hash: read, expiry pushed), and three more on the rare one
 * whose places in the caps' sets must move on (once per {@link slackOf}: both sets in parallel, then
 * the hash notes it; a push that fails is tried again by the next request); a create three (the
 * caller's set and the total in parallel, then the hash), a DELETE three (the hash, then both sets in
 * parallel). A create that fails part way gives back its places (tried again a few times in the
 * background); what is left lapses by its score.
 *
 * On a cluster or Sentinel, replication is asynchronous: a write a master acknowledged and lost in a
 * failover before its replica had it is lost with it (a session created just before: its client gets
 * 404 and starts again).
 * @example
 * const redis = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
 * const bus = new RedisBus(redis);
 * const server = new McpServer({ name: "notes", version: "1.0.0", bus });
 * const sessions = new RedisSessionStore(redis, { bus });
 * await serve(server, { port: 3000, sessions, eventStore: new RedisEventStore(redis) });
 */
export class RedisSessionStore implements SessionStore {
  readonly #link: Link;
  readonly #bus: RedisBus;
  readonly #prefix: string;

  constructor(client: RedisClient, options: RedisSessionStoreOptions) {
    if (!options?.bus) throw new TypeError("RedisSessionStore needs the server's RedisBus: { bus }");
    this.#bus = options.bus;
    this.#prefix = options.prefix ?? "picomcp:session:";
    this.#link = new Link(client, {
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.log ? { log: options.log } : {}),
      down: "requests of shared sessions get 503",
      back: "shared sessions are served again",
    });
  }

  /** What this store's calls to Redis have done: whether they answer, how many failed or timed out. */
  get stats(): RedisStats {
    return this.#link.stats;
  }

  async create(id: string, record: SessionRecord, caps: SessionCaps): Promise<"ok" | "caller" | "total"> {
    const fixed: Fixed = { v: record.protocolVersion, c: record.capabilities, a: record.authenticated };
    if (record.clientInfo !== undefined) fixed.i = record.clientInfo;
    if (record.principal !== undefined) fixed.p = record.principal;
    const fields = ["r", JSON.stringify(fixed), "k", record.caller];
    if (record.logLevel !== undefined) fields.push("l", record.logLevel);
    for (const uri of record.subscriptions) fields.push(`s:${uri}`, "1");
    const ahead = String(caps.ttlMs + slackOf(caps.ttlMs));
    const sets = [this.#caller(record.caller), this.#all()] as const;
    for (let tries = 1; ; tries++) {
      // both places at once, each on its own key
      const [mine, all] = await Promise.allSettled([
        this.#link.run(RESERVE, [sets[0]], [String(caps.perCaller), ahead, id, "1"]),
        this.#link.run(RESERVE, [sets[1]], [String(caps.total), ahead, id, ""]),
      ]);
      // the score written, 0 at the cap, -1 unknown (the call failed: it may still have been written)
      const scores = [mine, all].map((r) => (r.status === "fulfilled" ? Number(r.value) : -1));
      const failed = [mine, all].find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) {
        // not waited for: Redis is failing, the answer goes now (a release that fails is tried again)
        void this.#release(id, sets, scores);
        // a refusal is the answer even when the other call failed: no session was to be made
        if (scores[0] === 0) return "caller";
        if (scores[1] === 0) return "total";
        throw failed.reason;
      }
      if (scores.includes(0)) {
        // given back before the answer: the caller's next create must not find it still held
        await this.#release(id, sets, scores);
        return scores[0] === 0 ? "caller" : "total";
      }
      const args = [String(caps.ttlMs), String(Math.min(...scores)), ...fields];
      let written: unknown;
      try {
        written = await this.#link.run(WRITE, [this.#record(id)], args);
      } catch (error) {
        // the client never learns the id: the hash goes (sent after the WRITE on its node's connection,
        // so it also removes a WRITE that runs late), then the places, before the answer
        await this.#cleanUp(() => this.#link.call((client) => client.del(this.#record(id))));
        await this.#release(id, sets, scores);
        throw error;
      }
      if (Number(written) === 1) return "ok";
      await this.#release(id, sets, scores);
      if (tries === TRIES) {
        throw new Error(
          `picomcp/redis: a session's places in the caps lapsed ${TRIES} times before its record was written`,
        );
      }
    }
  }

  async touch(id: string, ttlMs: number, home?: HomeChange): Promise<SessionRecord | undefined> {
    const args = [String(ttlMs), String(slackOf(ttlMs))];
    if (home) args.push(...("claim" in home ? ["claim", home.claim] : ["release", home.release]));
    const reply = await this.#link.run(TOUCH, this.#keys(id), args);
    if (!Array.isArray(reply)) return undefined;
    const record = fromHash(reply[1] as unknown[]);
    const score = Number(reply[0]);
    if (score > 0) {
      // the rare request: the sets' score would lapse before the session. It waits for both (at most the
      // deadline) and is served whatever they do. Only once both took the score does the hash note it:
      // until then every request pushes again, and a push puts back a place that lapsed meanwhile
      const push = (key: string, keep: string) => this.#link.run(PUSH, [key], [String(score), id, keep]);
      const pushed = await Promise.allSettled([
        push(this.#caller(record.caller), "1"),
        push(this.#all(), ""),
      ]);
      if (pushed.every((r) => r.status === "fulfilled")) {
        await this.#link.run(PUSHED, [this.#record(id)], [String(score)]).catch(() => {});
      }
    }
    if (!home) return record;
    if ("claim" in home) return { ...record, home: home.claim };
    return record.home === home.release ? { ...record, home: undefined } : record;
  }

  async update(id: string, change: SessionChange): Promise<void> {
    const args = [change.logLevel ?? ""];
    for (const uri of change.subscribe ?? []) args.push(`+${uri}`);
    for (const uri of change.unsubscribe ?? []) args.push(`-${uri}`);
    await this.#link.run(UPDATE, this.#keys(id), args);
  }

  async end(id: string): Promise<boolean> {
    const caller = await this.#link.run(END, this.#keys(id), []);
    if (typeof caller !== "string") return false;
    // ended: its places go at once (a failure leaves them to lapse by their score)
    await Promise.allSettled(
      [this.#caller(caller), this.#all()].map((k) => this.#link.run(RELEASE, [k], [id])),
    );
    return true;
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

  /**
   * Gives back the places that may have been reserved in `sets` (every score but a refusal's 0: a call
   * that failed may have been run all the same, and a release sent after it on the node's connection
   * runs after it). Settles after the first try of each.
   */
  async #release(id: string, sets: readonly string[], scores: readonly number[]): Promise<void> {
    await Promise.all(
      sets
        .filter((_, i) => scores[i] !== 0)
        .map((key) => this.#cleanUp(() => this.#link.run(RELEASE, [key], [id]))),
    );
  }

  /**
   * Sends a clean-up; settles after its first try. One that fails is sent again a deadline later, in
   * the background, up to {@link CLEANUPS} tries in all; then what it would have removed lapses.
   */
  async #cleanUp(send: () => Promise<unknown>, left = CLEANUPS): Promise<void> {
    try {
      await send();
    } catch {
      if (left <= 1) return;
      unref(setTimeout(() => void this.#cleanUp(send, left - 1), this.#link.timeoutMs));
    }
  }

  /**
   * A script's keys for a session: its hash, and where the layout before kept it (the prefix and the
   * id) when it may be there: an id of the handler's form (32 lower-case hex digits, which no other
   * key of the store has), and on a cluster only in the hash's slot (a prefix with a hash tag; no
   * release before worked on a cluster without one).
   */
  #keys(id: string): string[] {
    const record = this.#record(id);
    if (!OLD_ID.test(id)) return [record];
    const old = this.#prefix + id;
    return this.#link.cluster && slotOf(old) !== slotOf(record) ? [record] : [record, old];
  }

  /**
   * The key of a session's hash: under `s:`, where no set is (`caller:…`, `all`), so that an id,
   * whatever a client sends, never names one of them.
   */
  #record(id: string): string {
    return `${this.#prefix}s:${id}`;
  }

  #caller(caller: string): string {
    return `${this.#prefix}caller:${caller}`;
  }

  #all(): string {
    return `${this.#prefix}all`;
  }
}
