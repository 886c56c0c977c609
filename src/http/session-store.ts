/**
 * Where 2025 sessions live when several instances serve them (`sessions: store`): what a session is
 * (its record), the one call of a session's request (`touch`), and the messages instances send each
 * other about a session. `MemorySessionStore` keeps it all in this process (several handlers of one
 * process, and the contract every store passes); `RedisSessionStore` (picomcp/redis) in Redis.
 */
import type { ClientCapabilities, Implementation, LoggingLevel } from "../types.js";

/** What every instance knows of a shared session. */
export interface SessionRecord {
  /** The revision negotiated at `initialize`. */
  readonly protocolVersion: string;
  /** What the client declared it can do. */
  readonly capabilities: ClientCapabilities;
  /** The client's name and version, when it gave them. */
  readonly clientInfo?: Implementation | undefined;
  /** The principal that opened it (undefined: anonymous). */
  readonly principal?: string | undefined;
  /** Whether it was opened with credentials. */
  readonly authenticated: boolean;
  /** Who it is counted for (a principal's key, or the anonymous caller's). */
  readonly caller: string;
  /** The level of `logging/setLevel`, once set. */
  readonly logLevel?: LoggingLevel | undefined;
  /** The URIs of `resources/subscribe`. */
  readonly subscriptions: readonly string[];
  /** The instance that holds the session's GET stream, while one is open. */
  readonly home?: string | undefined;
}

/** A change of a session's state, made by a request on one instance. */
export interface SessionChange {
  readonly logLevel?: LoggingLevel | undefined;
  readonly subscribe?: readonly string[];
  readonly unsubscribe?: readonly string[];
}

/** The caps a new session must fit: its caller's share and the total, both across instances. */
export interface SessionCaps {
  readonly ttlMs: number;
  readonly perCaller: number;
  readonly total: number;
}

/** What one instance tells the others of a session (`from`: the instance that sends it). */
export type SessionMessage = { readonly from: string; readonly sid: string } & (
  | /** The client's answers and notifications, for the instance whose request they concern. */ {
      readonly type: "client";
      readonly message: unknown;
    }
  | /** A message for the session's GET stream, held by instance `to`. */ {
      readonly type: "out";
      readonly to: string;
      readonly data: string;
    }
  | /** The session's state after a change (every instance that holds the session applies it). */ {
      readonly type: "state";
      readonly logLevel?: LoggingLevel | undefined;
      readonly subscriptions: readonly string[];
    }
  | /** The instance holding the GET stream now (none: closed). */ {
      readonly type: "home";
      readonly home?: string | undefined;
    }
  | /** An event of a stream whose client is gone, for an instance where it resumed (`done`: the last). */ {
      readonly type: "event";
      readonly stream: string;
      readonly seq: number;
      readonly data: string;
      readonly done?: boolean;
    }
  | /** The session ended (DELETE): every instance drops it. */ { readonly type: "end" }
);

/** What `touch` does to the session's GET stream holder besides reading: take it, or let it go if it is `instance`. */
export type HomeChange = { readonly claim: string } | { readonly release: string };

/**
 * Keeps shared sessions. Every method may reject (the store is unreachable): the handler answers 503
 * then. `touch` is the one call on the way of every request of a session: keep it one round trip.
 */
export interface SessionStore {
  /** Keeps a new session for `caps.ttlMs`: "ok", or "caller"/"total" when its caller's share or the total is full (nothing kept). */
  create(id: string, record: SessionRecord, caps: SessionCaps): Promise<"ok" | "caller" | "total">;
  /** The session with its expiry pushed `ttlMs` ahead (and `home` changed), or undefined when there is none. */
  touch(id: string, ttlMs: number, home?: HomeChange): Promise<SessionRecord | undefined>;
  /** Applies a change to a live session (nothing to one that ended). */
  update(id: string, change: SessionChange): Promise<void>;
  /** Ends a session everywhere: true when it was live. */
  end(id: string): Promise<boolean>;
  /** Sends a message to every instance (its sender hears it too, and ignores it); lost while the store is down. */
  publish(message: SessionMessage): void;
  /** Hears every message published; returns what stops it. */
  subscribe(listener: (message: SessionMessage) => void): () => void;
}

interface Kept {
  record: SessionRecord;
  deadline: number;
}

/** The store of the `sessions` option, when it names one. */
export function sessionStore(sessions: boolean | SessionStore | undefined): SessionStore | undefined {
  return typeof sessions === "object" && sessions !== null ? sessions : undefined;
}

/**
 * Shared sessions in this process: for several handlers of one process (each one an instance), and
 * the reference for other stores. Expiry is checked when a session is read or counted.
 */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, Kept>();
  readonly #listeners = new Set<(message: SessionMessage) => void>();

  /** Live sessions (expired ones are dropped first). */
  get size(): number {
    this.#prune(Date.now());
    return this.#sessions.size;
  }

  async create(id: string, record: SessionRecord, caps: SessionCaps): Promise<"ok" | "caller" | "total"> {
    const now = Date.now();
    this.#prune(now);
    let own = 0;
    for (const k of this.#sessions.values()) if (k.record.caller === record.caller) own++;
    if (own >= caps.perCaller) return "caller";
    if (this.#sessions.size >= caps.total) return "total";
    this.#sessions.set(id, { record: { ...record, home: undefined }, deadline: now + caps.ttlMs });
    return "ok";
  }

  async touch(id: string, ttlMs: number, home?: HomeChange): Promise<SessionRecord | undefined> {
    const now = Date.now();
    const kept = this.#live(id, now);
    if (!kept) return undefined;
    kept.deadline = now + ttlMs;
    if (home && "claim" in home) kept.record = { ...kept.record, home: home.claim };
    else if (home && kept.record.home === home.release) kept.record = { ...kept.record, home: undefined };
    return kept.record;
  }

  async update(id: string, change: SessionChange): Promise<void> {
    const kept = this.#live(id, Date.now());
    if (!kept) return;
    const subscriptions = new Set(kept.record.subscriptions);
    for (const uri of change.subscribe ?? []) subscriptions.add(uri);
    for (const uri of change.unsubscribe ?? []) subscriptions.delete(uri);
    const logLevel = change.logLevel ?? kept.record.logLevel;
    kept.record = { ...kept.record, logLevel, subscriptions: [...subscriptions] };
  }

  async end(id: string): Promise<boolean> {
    const live = this.#live(id, Date.now()) !== undefined;
    this.#sessions.delete(id);
    return live;
  }

  publish(message: SessionMessage): void {
    // delivered later, as pub/sub would: never inside the sender's own call
    queueMicrotask(() => {
      for (const listener of [...this.#listeners]) listener(message);
    });
  }

  subscribe(listener: (message: SessionMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #live(id: string, now: number): Kept | undefined {
    const kept = this.#sessions.get(id);
    if (kept && kept.deadline <= now) {
      this.#sessions.delete(id);
      return undefined;
    }
    return kept;
  }

  #prune(now: number): void {
    for (const [id, kept] of this.#sessions) if (kept.deadline <= now) this.#sessions.delete(id);
  }
}
