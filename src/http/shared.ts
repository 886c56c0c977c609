/**
 * 2025 sessions that every instance serves (`sessions: store`): each instance holds a copy of a
 * session it serves, refreshed from the store on every request (one call), and the instances tell
 * each other what concerns a copy elsewhere: the client's answers, messages for the GET stream,
 * state changes, the session's end, and the events of a stream that resumed on another instance.
 */
import type { AuthInfo, Connection } from "../connection.js";
import { type Features, isSessionVersion } from "../eras/versions.js";
import { limitError } from "../limits/shares.js";
import { restoreSubscriptions, subscribedUris } from "../resources/subscriptions.js";
import type { McpServer } from "../server.js";
import { type Awaitable, isObject, type JsonRpcMessage, type LoggingLevel } from "../types.js";
import { isSessionId, randomId, refuseSession } from "./access.js";
import {
  httpError,
  limitReply,
  NONE,
  SERVER_ERROR,
  sessionNotFound,
  unsupportedVersion,
  versionFeatures,
} from "./answers.js";
import type { EventStore } from "./event-store.js";
import { EventStream, type Orphaned } from "./event-stream.js";
import { encode } from "./exchange.js";
import type { HttpGovernor } from "./limits.js";
import { type Answer, Reply } from "./reply.js";
import { header } from "./request.js";
import { Session, type SessionTable } from "./session.js";
import type { HomeChange, SessionMessage, SessionRecord, SessionStore } from "./session-store.js";
import { AdoptedStreams } from "./shared-streams.js";
import type { SseWriter } from "./sse.js";

/** A session of the store, as this instance holds it. */
export class SharedSession extends Session {
  /** The instance holding its GET stream, as last heard (undefined: none). */
  home: string | undefined;
}

/** What {@link SharedSessions} needs from the handler besides its server, store, table and event store. */
export interface SharedOptions {
  readonly idleMs: number;
  /** The handler's governor: the session share and total, and who a copy's anonymous caller is. */
  readonly limits: HttpGovernor;
  /** Ends this instance's copy (nothing in the store). */
  drop(session: Session): void;
  /** Starts the beat that sweeps and refreshes sessions. */
  started(): void;
}

/** 503 while the store cannot be reached: a session's state is nowhere else to be trusted. */
export function storeDown(features?: Features): Reply {
  return httpError(503, SERVER_ERROR, "Service Unavailable: the session store is unreachable", features, {
    "retry-after": "1",
  });
}

/** The methods whose requests change what the store keeps. */
const STATEFUL = new Set(["logging/setLevel", "resources/subscribe", "resources/unsubscribe"]);

/** The messages of a POST that concern a request of the server's, or one running elsewhere: answers and cancellations. */
function forElsewhere(message: unknown): unknown[] {
  const out: unknown[] = [];
  for (const m of Array.isArray(message) ? message : [message]) {
    if (!isObject(m)) continue;
    if (m.method === undefined ? "result" in m || "error" in m : m.method === "notifications/cancelled")
      out.push(m);
  }
  return out;
}

/** Whether a message names a stateful method (so its state is compared after). */
function stateful(message: unknown): boolean {
  for (const m of Array.isArray(message) ? message : [message])
    if (isObject(m) && typeof m.method === "string" && STATEFUL.has(m.method)) return true;
  return false;
}

/** The shared sessions of one handler (one instance). */
export class SharedSessions {
  /** This instance's id in the store's messages and as a GET stream's holder. */
  readonly instance = randomId(9);
  readonly #o: SharedOptions;
  readonly #server: McpServer;
  readonly #store: SessionStore;
  readonly #table: SessionTable;
  readonly #events: EventStore | undefined;
  readonly #adopted: AdoptedStreams;
  readonly #stop: () => void;

  constructor(
    server: McpServer,
    store: SessionStore,
    table: SessionTable,
    events: EventStore | undefined,
    o: SharedOptions,
  ) {
    this.#o = o;
    this.#server = server;
    this.#store = store;
    this.#table = table;
    this.#events = events;
    this.#adopted = new AdoptedStreams(events);
    this.#stop = store.subscribe((m) => this.#heard(m));
  }

  /**
   * The session a request names, refreshed from the store (its one call: expiry pushed ahead, state
   * read), or the answer: 404 when it is unknown, ended or another principal's, 401 without the
   * credentials it was opened with, 503 when the store cannot be reached.
   */
  async resolve(
    request: Request,
    sid: string,
    auth: AuthInfo | undefined,
    features: Features,
    home?: HomeChange,
  ): Promise<SharedSession | Reply> {
    // an id of another form is no session of ours: the store is not asked (it could name one of its own keys)
    if (!isSessionId(sid)) return sessionNotFound(features);
    let record: SessionRecord | undefined;
    try {
      record = await this.#store.touch(sid, this.#o.idleMs, home);
    } catch {
      return storeDown(features);
    }
    const local = this.#table.find(sid) as SharedSession | undefined;
    if (!record) {
      if (local) this.#o.drop(local);
      return sessionNotFound(features);
    }
    const refused = refuseSession(record, auth, features);
    if (refused) return refused;
    const session = local ?? this.#copy(request, sid, record, auth);
    this.#apply(session, record.logLevel, record.subscriptions);
    session.home = record.home;
    this.#table.touch(session);
    return session;
  }

  /** A session that just initialized here, kept in the store; or the refusal (429, 503), its connection closed. */
  async open(id: string, connection: Connection, caller: string): Promise<SharedSession | Reply> {
    const session = this.session(id, connection, caller);
    const refused = await this.#create(session);
    if (refused) connection.close();
    else if (connection.closed) this.#store.end(id).catch(() => {}); // closed meanwhile: counted no more
    return refused ?? (connection.closed ? sessionNotFound() : session);
  }

  async #create(session: SharedSession): Promise<Reply | undefined> {
    const c = session.connection;
    const record: SessionRecord = {
      protocolVersion: c.protocolVersion!,
      capabilities: c.client.capabilities,
      clientInfo: c.client.info,
      principal: session.principal,
      authenticated: session.authenticated,
      caller: session.caller,
      subscriptions: [],
    };
    const { perPrincipal, total } = this.#o.limits.governor.limit("sessions");
    let kept: "ok" | "caller" | "total";
    try {
      kept = await this.#store.create(session.id, record, {
        ttlMs: this.#o.idleMs,
        perCaller: perPrincipal,
        total,
      });
    } catch {
      return storeDown();
    }
    if (kept === "ok") return undefined;
    const scope = kept === "caller" ? "principal" : "server";
    const max = kept === "caller" ? perPrincipal : total;
    return limitReply(limitError({ limit: "sessions", scope, max, retryAfterMs: 5000 }));
  }

  /** A session of this instance's own, made shared: its streams named after it, its messages routed. */
  session(id: string, connection: Connection, caller: string): SharedSession {
    const orphaned = this.#orphaned(id);
    const standalone = new EventStream(`${id}_g${randomId(12)}`, this.#events, id, orphaned);
    const session = new SharedSession(id, connection, standalone, caller);
    session.keepEvents = true;
    session.streamPrefix = `${id}_p`;
    session.orphaned = orphaned;
    return session;
  }

  /** Delivers a message of `session` tied to no request: on the GET stream here, or to the instance that holds it. */
  deliver(session: SharedSession, message: JsonRpcMessage): void {
    const data = encode(message);
    if (data === undefined) return;
    const home = session.home;
    if (session.standalone.sink?.open || home === undefined || home === this.instance) {
      session.standalone.write(data);
      return;
    }
    // the instance holding the GET stream hears the same change from the bus, and tells it itself
    if ("method" in message && message.method === "notifications/resources/updated") return;
    this.#store.publish({ type: "out", from: this.instance, sid: session.id, to: home, data });
  }

  /**
   * Serves a POST of `session` (`run`): first passes on the client's answers and cancellations (they
   * may concern another instance); a change of the session's state is in the store before its
   * answer is out, since the client's next request may go to any instance.
   */
  async serve(session: SharedSession, message: unknown, run: () => Awaitable<Answer>): Promise<Answer> {
    const changed = this.#before(session, message);
    const answer = await run();
    if (changed) await changed();
    return answer;
  }

  #before(session: SharedSession, message: unknown): (() => Promise<void>) | undefined {
    const elsewhere = forElsewhere(message);
    if (elsewhere.length > 0) {
      const m = Array.isArray(message) ? elsewhere : elsewhere[0];
      this.#store.publish({ type: "client", from: this.instance, sid: session.id, message: m });
    }
    if (!stateful(message)) return undefined;
    const level = session.connection.logLevel;
    const uris = new Set(subscribedUris(session.connection));
    return () => this.#changed(session, level, uris);
  }

  /** After a stateful request: its change in the store (before its answer goes out), and told to the other instances. */
  async #changed(
    session: SharedSession,
    level: LoggingLevel | undefined,
    before: Set<string>,
  ): Promise<void> {
    const c = session.connection;
    const now = subscribedUris(c);
    const subscribe = now.filter((u) => !before.has(u));
    const after = new Set(now);
    const unsubscribe = [...before].filter((u) => !after.has(u));
    const logLevel = c.logLevel !== level ? c.logLevel : undefined;
    if (logLevel === undefined && subscribe.length === 0 && unsubscribe.length === 0) return;
    try {
      await this.#store.update(session.id, { logLevel, subscribe, unsubscribe });
    } catch {
      // the store said it is down (one log line); this instance's copy has the change meanwhile
    }
    this.#store.publish({
      type: "state",
      from: this.instance,
      sid: session.id,
      logLevel: c.logLevel,
      subscriptions: now,
    });
  }

  /** A GET stream opened here (`open`) or ended: the other instances send its messages here, or no more. */
  homed(session: SharedSession, open: boolean): void {
    if (!open && session.standalone.sink?.open) return;
    if (open) {
      session.home = this.instance;
      this.#store.publish({ type: "home", from: this.instance, sid: session.id, home: this.instance });
      return;
    }
    if (session.home !== this.instance) return;
    session.home = undefined;
    this.#store.publish({ type: "home", from: this.instance, sid: session.id });
    this.#store.touch(session.id, this.#o.idleMs, { release: this.instance }).catch(() => {});
  }

  /** DELETE: ends the session everywhere (204), or the error answer (503 when the store cannot be reached). */
  async delete(request: Request, auth: AuthInfo | undefined): Promise<Reply> {
    const session = await this.named(request, auth, false);
    if (!(session instanceof SharedSession)) return session;
    try {
      await this.#store.end(session.id);
    } catch {
      return storeDown();
    }
    this.#store.publish({ type: "end", from: this.instance, sid: session.id });
    session.keepEvents = false;
    this.#o.drop(session);
    return new Reply(204, NONE, null);
  }

  /** Whether `streamId` names a stream of `session` (made by any instance). */
  owns(session: Session, streamId: string): boolean {
    return streamId.startsWith(`${session.id}_`);
  }

  /** Refreshes the expiry of the sessions busy here (a GET stream open, a POST running): a client that only listens is not idle. */
  beat(): void {
    this.#adopted.prune();
    for (const s of this.#table.values()) {
      if (!s.busy) continue;
      this.#store.touch(s.id, this.#o.idleMs).then(
        (record) => record === undefined && this.#o.drop(s),
        () => {},
      );
    }
  }

  /**
   * Resumes on `sink` a stream of `session` that another instance wrote: its kept events after `seq`,
   * then what that instance still writes. The session's GET stream then goes on as this instance's;
   * a POST's stream ends with its answer.
   */
  adopt(session: SharedSession, streamId: string, seq: number, sink: SseWriter): void {
    const standalone = streamId.startsWith(`${session.id}_g`);
    void this.#adopted.adopt(streamId, seq, sink, standalone).then((goOn) => {
      if (goOn) void session.standalone.resume(session.standalone.sent, sink);
    });
  }

  /** The session a GET or DELETE names, from the store (`claims`: its GET stream comes here), or the error answer. */
  async named(request: Request, auth: AuthInfo | undefined, claims: boolean): Promise<SharedSession | Reply> {
    const sid = header(request, "mcp-session-id");
    const version = header(request, "mcp-protocol-version");
    if (version !== null && !isSessionVersion(version)) return unsupportedVersion(version);
    if (sid === null) return httpError(400, SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required");
    const home = claims ? { claim: this.instance } : undefined;
    return await this.resolve(request, sid, auth, versionFeatures(version), home);
  }

  close(): void {
    this.#stop();
    this.#adopted.close();
  }

  /** A drain: the streams resumed here that another instance writes close with a `retry:` hint (resumed elsewhere). */
  detach(retryMs: number): void {
    this.#adopted.close(retryMs);
  }

  /** A copy of a session another instance opened. */
  #copy(request: Request, sid: string, record: SessionRecord, auth: AuthInfo | undefined): SharedSession {
    let session: SharedSession | undefined;
    const initialized = {
      protocolVersion: record.protocolVersion,
      capabilities: record.capabilities,
      ...(record.clientInfo ? { clientInfo: record.clientInfo } : {}),
    };
    const connection = this.#server.connect({
      id: sid,
      ...(auth ? { auth } : {}),
      send: (m) => session && this.deliver(session, m),
      onClose: () => session && this.#o.drop(session),
      initialized,
      resumed: true,
    });
    this.#o.limits.bind(connection, request, auth);
    session = this.session(sid, connection, record.caller);
    this.#table.add(session);
    this.#o.started();
    return session;
  }

  #apply(session: Session, level: LoggingLevel | undefined, uris: readonly string[]): void {
    session.connection.logLevel = level;
    restoreSubscriptions(session.connection, uris);
  }

  /** What a session's streams do with events written while their client is away: told, for an instance where one resumed. */
  #orphaned(sid: string): Orphaned {
    return (stream, seq, data, done) =>
      this.#store.publish({ type: "event", from: this.instance, sid, stream, seq, data, done });
  }

  #heard(m: SessionMessage): void {
    if (m.from === this.instance) return;
    if (m.type === "event") {
      this.#adopted.relayed(m.stream, m.seq, m.data, m.done === true);
      return;
    }
    const local = this.#table.find(m.sid) as SharedSession | undefined;
    if (!local) return;
    switch (m.type) {
      case "client": {
        const mine = forElsewhere(m.message);
        if (mine.length > 0)
          void this.#server.handle(Array.isArray(m.message) ? mine : mine[0], local.connection);
        return;
      }
      case "out":
        if (m.to === this.instance) local.standalone.write(m.data);
        return;
      case "state":
        this.#apply(local, m.logLevel, m.subscriptions);
        return;
      case "home":
        local.home = m.home;
        return;
      case "end":
        this.#o.drop(local);
        return;
    }
  }
}
