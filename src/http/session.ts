/** Streamable HTTP sessions: each one's connection and streams, and the table that expires and caps them. */
import { type Connection, principalOf } from "../connection.js";
import type { McpError } from "../errors.js";
import type { Governor } from "../limits/governor.js";
import { ANONYMOUS } from "../limits/key.js";
import { type Bucket, MemoryRateStore } from "../limits/rate.js";
import type { RequestId } from "../types.js";
import type { EventStream, Orphaned } from "./event-stream.js";

/** What a POST in flight offers `closeSseStream`. */
export interface Exchange {
  /** Closes the POST's SSE connection (switching to SSE first if needed); false if it cannot be resumed. */
  disconnect(retryMs: number | undefined): boolean;
}

/** Finished streams a session keeps for a client that has yet to resume them. */
const MAX_FINISHED_STREAMS = 32;

/** One client session: its connection, its streams, and what keeps it alive. */
export class Session {
  readonly id: string;
  readonly connection: Connection;
  /** The GET stream: messages not tied to a request. */
  readonly standalone: EventStream;
  /** The principal that opened it (undefined: anonymous); every later request must be the same one. */
  readonly principal: string | undefined;
  /** Whether it was opened with credentials: later requests without them get 401. */
  readonly authenticated: boolean;
  /** Who it is counted for (see `callerKey`): its principal, or the anonymous caller that opened it. */
  readonly caller: string;
  /** Resumable streams by id (POST streams and the GET stream). */
  readonly streams = new Map<string, EventStream>();
  /** In-flight POSTs by request id. */
  readonly exchanges = new Map<RequestId, Exchange>();
  /** POSTs in flight. */
  inflight = 0;
  /** What its stream ids start with: a shared session's name it, so any instance can tell they are its own. */
  streamPrefix = "";
  /** Whether ending it here keeps its streams' events (a shared session lives on elsewhere; they expire by themselves). */
  keepEvents = false;
  /** A shared session's: where its streams' events go while their client is away (see {@link Orphaned}). */
  orphaned: Orphaned | undefined;
  lastActive = Date.now();
  readonly #finished: EventStream[] = [];

  constructor(id: string, connection: Connection, standalone: EventStream, caller: string) {
    this.id = id;
    this.caller = caller;
    this.connection = connection;
    this.standalone = standalone;
    this.streams.set(standalone.id, standalone);
    this.principal = principalOf(connection.auth);
    this.authenticated = connection.auth !== undefined;
  }

  /** Whether a POST is in flight or a connection is open. */
  get busy(): boolean {
    if (this.inflight > 0) return true;
    for (const s of this.streams.values()) if (s.sink?.open) return true;
    return false;
  }

  /** A POST stream finished: forget it at once if it was delivered live; else keep a few for resumption. */
  finished(stream: EventStream, delivered: boolean): void {
    if (delivered) {
      this.forget(stream);
      return;
    }
    this.#finished.push(stream);
    if (this.#finished.length > MAX_FINISHED_STREAMS) this.forget(this.#finished.shift()!);
  }

  /** Forgets a stream and its kept events. */
  forget(stream: EventStream): void {
    this.streams.delete(stream.id);
    const i = this.#finished.indexOf(stream);
    if (i >= 0) this.#finished.splice(i, 1);
    stream.drop();
  }

  /** Closes every connection and forgets every stream. */
  closeStreams(): void {
    for (const s of this.streams.values()) {
      s.sink?.close();
      s.sink = undefined;
      if (!this.keepEvents) s.drop();
    }
    this.streams.clear();
    this.#finished.length = 0;
  }
}

/** Limits of a {@link SessionTable} besides the governor's shares. */
export interface SessionLimits {
  idleMs: number;
  /** Sessions without a principal created per minute by one caller, and by all (token buckets that hold as many). */
  anonymousPerMinute: { readonly perCaller: number; readonly total: number };
}

/**
 * The live sessions, least recently used first, each counted for its caller by the governor. Idle
 * ones expire on lookup and on a sweep that the handler runs on its one timer. A caller at its share
 * or at the total only ever makes room by ending an idle session of its own: never a busy one, nor
 * another caller's.
 */
export class SessionTable {
  readonly #sessions = new Map<string, Session>();
  readonly #limits: SessionLimits;
  readonly #governor: Governor;
  readonly #end: (session: Session) => void;
  /** The buckets of anonymous session creations: each caller's, and all callers' (`all`). */
  readonly #rates = new MemoryRateStore();
  readonly #perCaller: { readonly capacity: number; readonly perMs: number };
  readonly #all: Bucket;

  constructor(limits: SessionLimits, governor: Governor, end: (session: Session) => void) {
    this.#limits = limits;
    this.#governor = governor;
    this.#end = end;
    const { perCaller, total } = limits.anonymousPerMinute;
    this.#perCaller = { capacity: perCaller, perMs: perCaller / 60_000 };
    this.#all = { key: "all", capacity: total, perMs: total / 60_000 };
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** A live session by id, marked as just used; an expired one is ended and not returned. */
  get(id: string): Session | undefined {
    const s = this.find(id);
    if (s) this.touch(s);
    return s;
  }

  /** A live session by id, not marked as used (its caller may yet be refused); an expired one is ended. */
  find(id: string): Session | undefined {
    const s = this.#sessions.get(id);
    if (!s) return undefined;
    if (this.#expired(s, Date.now())) {
      this.#end(s);
      return undefined;
    }
    return s;
  }

  /** Marks a session as just used: the most recently used, and not idle. */
  touch(s: Session): void {
    this.#sessions.delete(s.id);
    this.#sessions.set(s.id, s);
    s.lastActive = Date.now();
  }

  add(session: Session): void {
    this.#sessions.set(session.id, session);
    this.#governor.add("sessions", session.caller, 1);
  }

  remove(session: Session): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    this.#governor.give("sessions", session.caller);
  }

  /**
   * Takes one creation of a session by the anonymous `caller` from its bucket (the one shared
   * anonymous caller has none of its own) and from the bucket of all: 0 when both had one, else the
   * milliseconds until they will.
   */
  admitAnonymous(caller: string): number {
    return this.#rates.take(
      caller === ANONYMOUS ? [this.#all] : [{ key: `c ${caller}`, ...this.#perCaller }, this.#all],
    );
  }

  /** Makes room for one more session of `caller` (ending an idle one of its own if need be), or gives the refusal. */
  makeRoom(caller: string): McpError | undefined {
    let refused = this.#governor.check("sessions", caller);
    if (refused && (refused.data as { scope: string }).scope === "server") {
      this.sweep();
      refused = this.#governor.check("sessions", caller);
    }
    while (refused && this.#evict(caller)) refused = this.#governor.check("sessions", caller);
    return refused;
  }

  /** Ends the least recently used idle session of `caller`. */
  #evict(caller: string): boolean {
    for (const s of this.#sessions.values()) {
      if (!s.busy && s.caller === caller) {
        this.#end(s);
        return true;
      }
    }
    return false;
  }

  /** Ends every idle session. */
  sweep(now = Date.now()): void {
    for (const s of [...this.#sessions.values()]) if (this.#expired(s, now)) this.#end(s);
  }

  values(): IterableIterator<Session> {
    return this.#sessions.values();
  }

  /** Closes the SSE connection of a request in flight of session `id`, with a `retry:` hint; false when there is none to resume. */
  disconnect(id: string, requestId: RequestId, retryMs: number): boolean {
    return this.get(id)?.exchanges.get(requestId)?.disconnect(retryMs) ?? false;
  }

  /** Closes the connection of session `id`'s GET stream, with a `retry:` hint; false when none is open. */
  detachGet(id: string, retryMs: number): boolean {
    const stream = this.get(id)?.standalone;
    if (!stream?.sink) return false;
    stream.detach(retryMs);
    return true;
  }

  /** Closes the GET streams' connections with a `retry:` hint (the client resumes elsewhere), and with `all` every stream's. */
  detach(retryMs: number, all: boolean): void {
    for (const s of this.#sessions.values()) {
      if (!all) s.standalone.detach(retryMs);
      else for (const stream of s.streams.values()) stream.detach(retryMs);
    }
  }

  #expired(s: Session, now: number): boolean {
    return now - s.lastActive >= this.#limits.idleMs && !s.busy;
  }
}
