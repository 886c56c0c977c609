/**
 * `RedisAuthStore`: the authorization server's records in Redis, so that any replica serves any step of
 * a sign-in. One key per record, each written and read by one script on that key (auth-scripts.ts):
 * redeeming a code, taking a pending authorization, rotating a refresh token and rotating the signing
 * keys are each one atomic step, whichever replica takes it.
 */
import type {
  AuthStore,
  ClientRecord,
  CodeRecord,
  GrantRecord,
  PendingAuthorization,
  StoredKeys,
  TakenCode,
} from "../auth/store.js";
import {
  CAS_KEYS,
  DELETE_GRANT,
  GET,
  GET_GRANT,
  GET_KEPT,
  HIT,
  INDEX_ADD,
  INDEX_LIST,
  INDEX_PUSH,
  INDEX_REMOVE,
  PUT,
  PUT_CODE,
  PUT_GRANT,
  PUT_KEPT,
  REPLACE_GRANT,
  TAKE,
  TAKE_CODE,
} from "./auth-scripts.js";
import type { RedisClient, RedisLog } from "./client.js";
import { Link, positive, type RedisStats } from "./link.js";

/** Options of {@link RedisAuthStore}. */
export interface RedisAuthStoreOptions {
  /** The prefix of the keys. Default: `"picomcp:auth:"`. */
  prefix?: string;
  /** The deadline of each call to Redis, in milliseconds: past it the call rejects. Default: 1000. */
  timeoutMs?: number;
  /** Where the one line per Redis outage and per recovery goes. Default: `console.warn`. */
  log?: RedisLog;
  /**
   * How long a registered client (one saved without a time to live) and the signing keys are kept
   * unused: each read or write starts it again. Default: 90 days.
   */
  idleTtlMs?: number;
  /**
   * The most live grants one subject keeps: a sign-in past it revokes that subject's grants that expire
   * first. Default: 100.
   */
  maxGrantsPerSubject?: number;
  /** The largest record the store writes, in characters of JSON; a larger one is refused. Default: 65536. */
  maxRecordChars?: number;
}

/** The default {@link RedisAuthStoreOptions.idleTtlMs}: 90 days. */
const IDLE_TTL_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * An {@link AuthStore} on Redis, shared by every replica with the same prefix: give each its own store
 * on a connected node-redis client (`createClient()`, `createCluster()` or `createSentinel()`; the
 * client stays yours to close: the store has nothing else to stop). Every
 * call has a deadline (`timeoutMs`); while Redis is down or past it, calls reject with an error that
 * says so (the authorization server answers the step with a server error), one log line says Redis is
 * unreachable, another when calls answer again.
 *
 * Keys (each with an expiry): `<prefix>client:<id>`, `<prefix>pending:<id>`, `<prefix>code:<digest>`
 * (kept, marked taken, until the code's expiry: a replay is told from an unknown code),
 * `<prefix>grant:<id>` (until its `expiresAt`), `<prefix>subject:<subject>` (a sorted set of the
 * subject's grant ids by expiry), `<prefix>keys` and `<prefix>hit:<key>`. A grant and its subject's
 * index are two keys, in two slots on a cluster: the index is written first (an id added before its
 * grant, pushed on before its grant is replaced), so a live grant is always in its index; an index
 * may for a while name a grant already gone (a delete whose second call failed), which revoking by
 * subject skips.
 * @example
 * const redis = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
 * // every replica: the same issuer, a store of its own on the same prefix
 * const store = new RedisAuthStore(redis);
 * const authorizationServer = createAuthorizationServer({ issuer, resources, authenticate, store });
 */
export class RedisAuthStore implements AuthStore {
  readonly #link: Link;
  readonly #prefix: string;
  readonly #idleMs: number;
  readonly #maxGrants: number;
  readonly #maxChars: number;

  constructor(client: RedisClient, options: RedisAuthStoreOptions = {}) {
    this.#prefix = options.prefix ?? "picomcp:auth:";
    this.#idleMs = positive(options.idleTtlMs ?? IDLE_TTL_MS, "idleTtlMs");
    this.#maxGrants = positive(options.maxGrantsPerSubject ?? 100, "maxGrantsPerSubject");
    this.#maxChars = positive(options.maxRecordChars ?? 65_536, "maxRecordChars");
    this.#link = new Link(client, {
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.log ? { log: options.log } : {}),
      down: "sign-in steps fail",
      back: "sign-in steps are served again",
    });
  }

  /** What this store's calls to Redis have done: whether they answer, how many failed or timed out. */
  get stats(): RedisStats {
    return this.#link.stats;
  }

  async getClient(clientId: string): Promise<ClientRecord | undefined> {
    return read(await this.#link.run(GET_KEPT, [this.#key("client:", clientId)], []));
  }

  async putClient(client: ClientRecord, ttlMs?: number): Promise<void> {
    const kept = ttlMs === undefined;
    const ms = kept ? this.#idleMs : positive(ttlMs, "ttlMs");
    const json = this.#json(client, "client");
    await this.#link.run(
      PUT_KEPT,
      [this.#key("client:", client.client_id)],
      [json, String(ms), kept ? "1" : ""],
    );
  }

  async putPending(pending: PendingAuthorization, ttlMs: number): Promise<void> {
    const json = this.#json(pending, "pending authorization");
    await this.#link.run(PUT, [this.#key("pending:", pending.id)], [json, String(positive(ttlMs, "ttlMs"))]);
  }

  async getPending(id: string): Promise<PendingAuthorization | undefined> {
    return read(await this.#link.run(GET, [this.#key("pending:", id)], []));
  }

  async takePending(id: string): Promise<PendingAuthorization | undefined> {
    return read(await this.#link.run(TAKE, [this.#key("pending:", id)], []));
  }

  async putCode(hash: string, code: CodeRecord): Promise<void> {
    const ms = left(code.expiresAt);
    const json = this.#json(code, "code");
    if (ms === undefined) return; // expired already: kept for no time
    await this.#link.run(PUT_CODE, [this.#key("code:", hash)], [json, ms]);
  }

  async takeCode(hash: string): Promise<TakenCode | undefined> {
    const reply = await this.#link.run(TAKE_CODE, [this.#key("code:", hash)], []);
    if (!Array.isArray(reply)) return undefined;
    const code = JSON.parse(String(reply[1])) as CodeRecord;
    return Number(reply[0]) === 0 ? { code } : { replayed: code };
  }

  async putGrant(grant: GrantRecord): Promise<void> {
    const ms = left(grant.expiresAt);
    const json = this.#json(grant, "grant");
    if (ms === undefined) return;
    // the index first: a grant written is always in it, whatever fails after
    const dropped = await this.#link.run(
      INDEX_ADD,
      [this.#key("subject:", grant.subject)],
      [String(Date.now()), String(grant.expiresAt), grant.id, String(this.#maxGrants)],
    );
    // past the subject's cap, the grants that expire first are revoked beside it (each leaves the index
    // once deleted: one whose delete fails stays listed, and the next sign-in past the cap tries again)
    const [put] = await Promise.allSettled([
      this.#link.run(
        PUT_GRANT,
        [this.#grant(grant.id)],
        [json, grant.refreshHash, grant.subject, ms, String(grant.rev ?? 0)],
      ),
      ...(Array.isArray(dropped) ? dropped : []).map((id) => this.deleteGrant(String(id))),
    ]);
    if (put.status === "rejected") throw put.reason;
  }

  async getGrant(id: string): Promise<GrantRecord | undefined> {
    return read(await this.#link.run(GET_GRANT, [this.#grant(id)], []));
  }

  async replaceGrant(grant: GrantRecord, expectedRefreshHash: string): Promise<boolean> {
    const rev = grant.rev ?? 0;
    const json = this.#json({ ...grant, rev: rev + 1 }, "grant");
    const ms = left(grant.expiresAt) ?? "1";
    // pushed on first: a grant that outlives its place in the index would escape revocation by subject
    await this.#link.run(
      INDEX_PUSH,
      [this.#key("subject:", grant.subject)],
      [String(Date.now()), String(grant.expiresAt), grant.id],
    );
    const args = [expectedRefreshHash, json, grant.refreshHash, ms, String(rev), String(rev + 1)];
    return Number(await this.#link.run(REPLACE_GRANT, [this.#grant(grant.id)], args)) === 1;
  }

  async deleteGrant(id: string): Promise<void> {
    const subject = await this.#link.run(DELETE_GRANT, [this.#grant(id)], []);
    if (typeof subject === "string")
      await this.#link.run(INDEX_REMOVE, [this.#key("subject:", subject)], [id]);
  }

  async grantsOf(subject: string): Promise<string[]> {
    const ids = await this.#link.run(INDEX_LIST, [this.#key("subject:", subject)], [String(Date.now())]);
    return Array.isArray(ids) ? ids.map(String) : [];
  }

  async getKeys(): Promise<StoredKeys | undefined> {
    return read(await this.#link.run(GET_KEPT, [this.#prefix + "keys"], []));
  }

  async casKeys(keys: StoredKeys, expectedVersion: number | undefined): Promise<boolean> {
    const json = this.#json(keys, "signing keys");
    const args = [expectedVersion === undefined ? "" : String(expectedVersion), json, String(keys.version)];
    args.push(String(this.#idleMs));
    return Number(await this.#link.run(CAS_KEYS, [this.#prefix + "keys"], args)) === 1;
  }

  async hit(key: string, windowMs: number): Promise<number> {
    const n = await this.#link.run(HIT, [this.#key("hit:", key)], [String(positive(windowMs, "windowMs"))]);
    return Number(n);
  }

  /** The JSON of a record, refused past the cap. */
  #json(record: object, what: string): string {
    const json = JSON.stringify(record);
    if (json.length > this.#maxChars) {
      throw new RangeError(
        `picomcp/redis: a ${what} of ${json.length} characters is larger than the auth store keeps (maxRecordChars: ${this.#maxChars})`,
      );
    }
    return json;
  }

  #grant(id: string): string {
    return this.#key("grant:", id);
  }

  /** A record's key: its kind, so that no id of one kind ever names another's key. */
  #key(kind: string, id: string): string {
    return this.#prefix + kind + id;
  }
}

/** The record a script found, or undefined. */
function read<T>(reply: unknown): T | undefined {
  return typeof reply === "string" ? (JSON.parse(reply) as T) : undefined;
}

/** The milliseconds until `expiresAt` on this instance's clock, as a script's argument; undefined once it passed. */
function left(expiresAt: number): string | undefined {
  const ms = Math.ceil(expiresAt - Date.now());
  return Number.isFinite(ms) && ms > 0 ? String(ms) : undefined;
}
