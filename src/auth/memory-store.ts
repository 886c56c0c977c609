/**
 * The authorization server's state in memory: one process's `AuthStore`, bounded. Every kind of
 * record has a cap and an expiry; expired records are swept as new ones come, so a crowd of callers
 * cannot grow memory without limit. Records are copied in and out, as a shared store would.
 */
import type {
  AuthStore,
  ClientRecord,
  CodeRecord,
  GrantRecord,
  PendingAuthorization,
  StoredKeys,
  TakenCode,
} from "./store.js";

/** Options of {@link MemoryAuthStore}: the caps on each kind of record. */
export interface MemoryAuthStoreOptions {
  /** Clients kept: registered ones (until unused for `idleTtlMs`, or until the time to live they were saved with) and cached metadata documents. At the cap the oldest cached document goes first; a registration with only registered clients left is refused, and a fetched document is then used without being cached. Default: 10000. */
  maxClients?: number;
  /** Authorizations in progress kept; at the cap a new one is refused (a live one is never dropped to make room: no caller evicts another's sign-in). Default: 10000. */
  maxPending?: number;
  /** Codes kept (redeemed ones too, until they would have expired, to catch a replay); at the cap the oldest redeemed code makes room, and with none a new code is refused (a code not yet redeemed is never dropped: no caller evicts another's sign-in). Default: 10000. */
  maxCodes?: number;
  /** Grants kept; at the cap a new one is refused (a live grant is never dropped to make room). Default: 100000. */
  maxGrants?: number;
  /** The most live grants one subject keeps: a sign-in past it revokes that subject's grants that expire first (never the new one), as `RedisAuthStore` does. Default: 100. */
  maxGrantsPerSubject?: number;
  /** Counters of `hit` kept (one per address and window); at the cap a new counter is refused (its hit answers `Number.MAX_SAFE_INTEGER`: not counted; the authorization server then lets a per-address or per-network hit through to the total, and refuses a total it cannot count) and a live one never dropped. Default: 10000. */
  maxCounters?: number;
  /** How long a registered client (one saved without a time to live) is kept unused: each read starts it again. Default: 90 days, as `RedisAuthStore`'s `idleTtlMs`. */
  idleTtlMs?: number;
  /** Least milliseconds between two sweeps of expired records. Default: 10000. */
  sweepMs?: number;
}

/** Thrown by {@link MemoryAuthStore} when a record that must not be dropped finds no room; the caller answers 503. */
export class AuthStoreFullError extends Error {
  constructor(what: string) {
    super(`The authorization server's store holds as many ${what} as it may`);
    this.name = "AuthStoreFullError";
  }
}

interface Entry<T> {
  value: T;
  /** ms since the epoch. */
  expiresAt: number;
  /** For a record kept while used (a registered client): the time to live each read starts again. */
  idleMs?: number;
}

interface CodeEntry {
  code: CodeRecord;
  taken: boolean;
}

function cap(n: number | undefined, fallback: number, name: string): number {
  const v = n ?? fallback;
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer`);
  return v;
}

/**
 * The default `AuthStore`: everything in this process's memory, so a restart forgets every client,
 * grant and key (every token then stops), and replicas share nothing — use `RedisAuthStore` from
 * `picomcp/redis` for those. Each method is one synchronous step, so it is atomic.
 * @example
 * const store = new MemoryAuthStore({ maxGrants: 10_000 });
 * const authorizationServer = createAuthorizationServer({ issuer, resources, authenticate, store });
 */
export class MemoryAuthStore implements AuthStore {
  readonly #clients = new Map<string, Entry<ClientRecord>>();
  readonly #pending = new Map<string, Entry<PendingAuthorization>>();
  readonly #codes = new Map<string, Entry<CodeEntry>>();
  readonly #grants = new Map<string, Entry<GrantRecord>>();
  readonly #subjects = new Map<string, Set<string>>();
  readonly #hits = new Map<string, Entry<number>>();
  #keys: StoredKeys | undefined;
  readonly #max: {
    clients: number;
    pending: number;
    codes: number;
    grants: number;
    perSubject: number;
    counters: number;
  };
  readonly #sweepMs: number;
  readonly #idleMs: number;
  #sweptAt = 0;

  constructor(options: MemoryAuthStoreOptions = {}) {
    this.#max = {
      clients: cap(options.maxClients, 10_000, "maxClients"),
      pending: cap(options.maxPending, 10_000, "maxPending"),
      codes: cap(options.maxCodes, 10_000, "maxCodes"),
      grants: cap(options.maxGrants, 100_000, "maxGrants"),
      perSubject: cap(options.maxGrantsPerSubject, 100, "maxGrantsPerSubject"),
      counters: cap(options.maxCounters, 10_000, "maxCounters"),
    };
    const sweep = options.sweepMs ?? 10_000;
    if (!(sweep >= 0)) throw new RangeError("sweepMs must be 0 or more");
    this.#sweepMs = sweep;
    const idle = options.idleTtlMs ?? 90 * 24 * 60 * 60 * 1000;
    if (!(idle > 0)) throw new RangeError("idleTtlMs must be more than 0");
    this.#idleMs = idle;
  }

  /** Drops every expired record, at most once per `sweepMs`. */
  #sweep(now: number): void {
    if (now - this.#sweptAt < this.#sweepMs) return;
    this.#sweptAt = now;
    const maps = [this.#clients, this.#pending, this.#codes, this.#hits] as Map<string, Entry<unknown>>[];
    for (const map of maps) for (const [k, e] of map) if (e.expiresAt <= now) map.delete(k);
    for (const [id, e] of this.#grants) if (e.expiresAt <= now) this.#dropGrant(id, e.value);
  }

  /** Whether `map` has room for one more, once its expired entries are dropped (swept now whatever `sweepMs` says). */
  #room<T>(map: Map<string, Entry<T>>, max: number, now: number): boolean {
    if (map.size < max) return true;
    for (const [k, e] of map) if (e.expiresAt <= now) map.delete(k);
    return map.size < max;
  }

  #live<T>(map: Map<string, Entry<T>>, key: string): T | undefined {
    const e = map.get(key);
    if (e === undefined) return undefined;
    if (e.expiresAt > Date.now()) return e.value;
    map.delete(key);
    return undefined;
  }

  #dropGrant(id: string, grant: GrantRecord): void {
    this.#grants.delete(id);
    const ids = this.#subjects.get(grant.subject);
    ids?.delete(id);
    if (ids?.size === 0) this.#subjects.delete(grant.subject);
  }

  async getClient(clientId: string): Promise<ClientRecord | undefined> {
    const c = this.#live(this.#clients, clientId);
    if (c === undefined) return undefined;
    const e = this.#clients.get(clientId)!;
    if (e.idleMs !== undefined) e.expiresAt = Date.now() + e.idleMs;
    return structuredClone(c);
  }

  async putClient(client: ClientRecord, ttlMs?: number): Promise<void> {
    const now = Date.now();
    this.#sweep(now);
    const clients = this.#clients;
    clients.delete(client.client_id);
    if (!this.#room(clients, this.#max.clients, now)) {
      // cached documents make room (they can be fetched again); registered clients never do
      for (const [id, e] of clients) {
        if (clients.size < this.#max.clients) break;
        if (e.value.kind !== "registered") clients.delete(id);
      }
      if (clients.size >= this.#max.clients) throw new AuthStoreFullError("clients");
    }
    const entry: Entry<ClientRecord> =
      ttlMs === undefined
        ? { value: structuredClone(client), expiresAt: now + this.#idleMs, idleMs: this.#idleMs }
        : { value: structuredClone(client), expiresAt: now + ttlMs };
    clients.set(client.client_id, entry);
  }

  async putPending(pending: PendingAuthorization, ttlMs: number): Promise<void> {
    const now = Date.now();
    this.#sweep(now);
    const known = this.#pending.has(pending.id);
    if (!known && !this.#room(this.#pending, this.#max.pending, now))
      throw new AuthStoreFullError("authorizations in progress");
    this.#pending.set(pending.id, { value: structuredClone(pending), expiresAt: now + ttlMs });
  }

  async getPending(id: string): Promise<PendingAuthorization | undefined> {
    const p = this.#live(this.#pending, id);
    return p && structuredClone(p);
  }

  async takePending(id: string): Promise<PendingAuthorization | undefined> {
    const p = this.#live(this.#pending, id);
    this.#pending.delete(id);
    return p;
  }

  async putCode(hash: string, code: CodeRecord): Promise<void> {
    const now = Date.now();
    this.#sweep(now);
    const codes = this.#codes;
    codes.delete(hash);
    if (!this.#room(codes, this.#max.codes, now)) {
      // redeemed codes make room, oldest first (kept only to tell a replay); one not yet redeemed never does
      for (const [h, e] of codes) {
        if (codes.size < this.#max.codes) break;
        if (e.value.taken) codes.delete(h);
      }
      if (codes.size >= this.#max.codes) throw new AuthStoreFullError("codes");
    }
    codes.set(hash, {
      value: { code: structuredClone(code), taken: false },
      expiresAt: code.expiresAt,
    });
  }

  async takeCode(hash: string): Promise<TakenCode | undefined> {
    const e = this.#live(this.#codes, hash);
    if (e === undefined) return undefined;
    if (e.taken) return { replayed: structuredClone(e.code) };
    e.taken = true;
    return { code: structuredClone(e.code) };
  }

  async putGrant(grant: GrantRecord): Promise<void> {
    this.#sweep(Date.now());
    const old = this.#grants.get(grant.id);
    if (old) this.#dropGrant(grant.id, old.value);
    if (this.#grants.size >= this.#max.grants) throw new AuthStoreFullError("grants");
    this.#grants.set(grant.id, { value: structuredClone(grant), expiresAt: grant.expiresAt });
    this.#index(grant);
    this.#capSubject(grant);
  }

  /** Past the subject's cap, revokes its grants that expire first, never `added`. */
  #capSubject(added: GrantRecord): void {
    const ids = this.#subjects.get(added.subject)!;
    if (ids.size <= this.#max.perSubject) return;
    const now = Date.now();
    const others: [string, Entry<GrantRecord>][] = [];
    for (const id of ids) {
      const e = this.#grants.get(id);
      if (e === undefined || e.expiresAt <= now) {
        if (e) this.#dropGrant(id, e.value);
        else ids.delete(id);
      } else if (id !== added.id) others.push([id, e]);
    }
    others.sort((a, b) => a[1].expiresAt - b[1].expiresAt);
    for (const [id, e] of others) {
      if (ids.size <= this.#max.perSubject) break;
      this.#dropGrant(id, e.value);
    }
  }

  #index(grant: GrantRecord): void {
    const ids = this.#subjects.get(grant.subject);
    if (ids) ids.add(grant.id);
    else this.#subjects.set(grant.subject, new Set([grant.id]));
  }

  async getGrant(id: string): Promise<GrantRecord | undefined> {
    const e = this.#grants.get(id);
    if (e === undefined) return undefined;
    if (e.expiresAt <= Date.now()) {
      this.#dropGrant(id, e.value);
      return undefined;
    }
    return structuredClone(e.value);
  }

  async replaceGrant(grant: GrantRecord, expectedRefreshHash: string): Promise<boolean> {
    const e = this.#grants.get(grant.id);
    const rev = grant.rev ?? 0;
    if (
      e === undefined ||
      e.expiresAt <= Date.now() ||
      e.value.refreshHash !== expectedRefreshHash ||
      (e.value.rev ?? 0) !== rev
    )
      return false;
    if (grant.subject !== e.value.subject) {
      this.#dropGrant(grant.id, e.value);
      this.#index(grant);
    }
    this.#grants.set(grant.id, {
      value: { ...structuredClone(grant), rev: rev + 1 },
      expiresAt: grant.expiresAt,
    });
    return true;
  }

  async deleteGrant(id: string): Promise<void> {
    const e = this.#grants.get(id);
    if (e) this.#dropGrant(id, e.value);
  }

  async grantsOf(subject: string): Promise<string[]> {
    const now = Date.now();
    const out: string[] = [];
    for (const id of this.#subjects.get(subject) ?? []) {
      const e = this.#grants.get(id);
      if (e && e.expiresAt > now) out.push(id);
    }
    return out;
  }

  async getKeys(): Promise<StoredKeys | undefined> {
    return this.#keys && structuredClone(this.#keys);
  }

  async casKeys(keys: StoredKeys, expectedVersion: number | undefined): Promise<boolean> {
    if (this.#keys?.version !== expectedVersion) return false;
    this.#keys = structuredClone(keys);
    return true;
  }

  async hit(key: string, windowMs: number): Promise<number> {
    const now = Date.now();
    this.#sweep(now);
    const e = this.#live(this.#hits, key);
    if (e !== undefined) {
      const entry = this.#hits.get(key)!;
      entry.value = e + 1;
      return entry.value;
    }
    // a live counter is never dropped (the global one would be first): at the cap the hit counts as over any limit
    if (!this.#room(this.#hits, this.#max.counters, now)) return Number.MAX_SAFE_INTEGER;
    this.#hits.set(key, { value: 1, expiresAt: now + windowMs });
    return 1;
  }

  /** Nothing to stop: sweeps run as records come, never on a timer. */
  close(): void {}

  /** How many records of each kind are held (expired ones not yet swept included): for tests and metrics. */
  get size(): { clients: number; pending: number; codes: number; grants: number; counters: number } {
    return {
      clients: this.#clients.size,
      pending: this.#pending.size,
      codes: this.#codes.size,
      grants: this.#grants.size,
      counters: this.#hits.size,
    };
  }
}
