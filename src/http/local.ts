/** Sessions in this instance's memory as a {@link SessionBackend}: opened at `initialize`, found by id, their GET stream and DELETE, swept and drained. */
import type { AuthInfo, Connection } from "../connection.js";
import { SUPPORTED_VERSIONS } from "../eras/versions.js";
import { principalKey } from "../limits/key.js";
import type { JsonRpcMessage, RequestId } from "../types.js";
import { mayUse, namedSession, noRoom, randomId, refuseSession, SESSION_ID_BYTES } from "./access.js";
import {
  errorReply,
  json,
  NONE,
  SERVER_ERROR,
  sessionNotFound,
  tooManyRequests,
  versionFeatures,
} from "./answers.js";
import type { BackendParts, SessionBackend } from "./backend.js";
import { type EventStore, MemoryEventStore } from "./event-store.js";
import { EventStream } from "./event-stream.js";
import { carried, encode } from "./exchange.js";
import { type GetOptions, notSse, serveGet } from "./get.js";
import { type Answer, Reply } from "./reply.js";
import { Session, SessionTable } from "./session.js";

/** Sessions in this instance's memory (`sessions: true`, the default). */
export class LocalSessions implements SessionBackend {
  readonly methods = "GET, POST, DELETE";
  readonly maxBatch = 100;
  readonly events: EventStore | undefined;
  protected readonly parts: BackendParts;
  protected readonly table: SessionTable;
  protected readonly getOptions: GetOptions;

  constructor(parts: BackendParts) {
    this.parts = parts;
    const { o, limits, idleMs, anonymousPerMinute } = parts;
    this.table = new SessionTable({ idleMs, anonymousPerMinute }, limits.governor, (s) => this.end(s));
    this.events = o.eventStore === false ? undefined : (o.eventStore ?? new MemoryEventStore());
    this.getOptions = {
      store: this.events,
      retryMs: parts.retryMs,
      governor: limits.governor,
      open: (caller, onGone, onEnd) => parts.streams.open(onGone, limits.queue(caller), onEnd),
      draining: () => parts.drain.draining,
    };
  }

  get size(): number {
    return this.table.size;
  }

  owns(sid: string, auth: AuthInfo | undefined): boolean {
    const session = this.table.find(sid);
    return session !== undefined && mayUse(session, auth);
  }

  busy(sid: string): boolean {
    return (this.table.find(sid)?.exchanges.size ?? 0) > 0;
  }

  find(
    _request: Request,
    sid: string,
    auth: AuthInfo | undefined,
    version: string | null,
  ): Session | Reply | Promise<Session | Reply> {
    const session = this.table.find(sid);
    // the header's features, as for an unknown id: the answer must not tell that the session exists
    const features = versionFeatures(version);
    if (!session) return sessionNotFound(features);
    const refused = refuseSession(session, auth, features);
    if (refused) return refused;
    this.table.touch(session);
    return session;
  }

  serve(request: Request, session: Session, message: unknown, auth: AuthInfo | undefined) {
    return this.parts.exchange(request, session, message, auth);
  }

  begin(
    request: Request,
    message: unknown,
    init: boolean,
    version: string | null,
    auth: AuthInfo | undefined,
  ): Answer | Promise<Answer> {
    if (init) return this.#initialize(request, message, auth);
    const text = `Bad Request: Mcp-Session-Id header is required (initialize first, or send a 2026-07-28 request with _meta); supported versions: ${SUPPORTED_VERSIONS.join(", ")}`;
    const data = { supported: [...SUPPORTED_VERSIONS] };
    return errorReply(400, { code: SERVER_ERROR, message: text, data }, versionFeatures(version));
  }

  async #initialize(request: Request, message: unknown, auth: AuthInfo | undefined): Promise<Answer> {
    const { server, limits } = this.parts;
    const caller = limits.caller(request, auth);
    const wait = principalKey(auth) === undefined ? this.table.admitAnonymous(caller) : 0;
    if (wait > 0) return tooManyRequests("new sessions without credentials come too fast", wait);
    const full = this.admit(caller);
    if (full) return full;
    const id = randomId(SESSION_ID_BYTES);
    let session: Session | undefined;
    const connection = server.connect({
      id,
      ...(auth ? { auth } : {}),
      // messages of the handshake itself reach no stream: there is none yet
      send: (m) => session && this.deliver(session, m),
      onClose: () => session && this.end(session),
    });
    limits.bind(connection, request, auth);
    const answer = await server.handle(message, connection, carried(server, request));
    if (connection.protocolVersion === undefined || connection.closed || answer === undefined) {
      connection.close();
      return answer === undefined ? new Reply(202, NONE, null) : json(answer);
    }
    const made = await this.open(id, connection, caller);
    if (made instanceof Reply) return made;
    session = made;
    this.table.add(session);
    this.parts.streams.start();
    return json(answer, { "mcp-session-id": id });
  }

  /** Room for one more session of `caller` before its `initialize` runs, or the refusal (429, 503). */
  protected admit(caller: string): Reply | undefined {
    return noRoom(this.table, caller);
  }

  /** The session an `initialize` just opened on `connection`, or the refusal (its connection closed). */
  protected open(
    id: string,
    connection: Connection,
    caller: string,
  ): Session | Reply | Promise<Session | Reply> {
    const late = noRoom(this.table, caller); // others initialized meanwhile
    if (late) {
      connection.close();
      return late;
    }
    return new Session(id, connection, new EventStream(randomId(12), this.events, id), caller);
  }

  /** Where a message of `session` tied to no request goes: its GET stream. */
  protected deliver(session: Session, message: JsonRpcMessage): void {
    const data = encode(message);
    if (data !== undefined) session.standalone.write(data);
  }

  get(request: Request, auth: AuthInfo | undefined): Reply | Promise<Reply> {
    const refused = notSse(request);
    if (refused) return refused;
    const found = namedSession(request, this.table, auth);
    return found instanceof Session ? serveGet(request, found, this.getOptions) : found;
  }

  delete(request: Request, auth: AuthInfo | undefined): Reply | Promise<Reply> {
    const found = namedSession(request, this.table, auth);
    if (!(found instanceof Session)) return found;
    this.end(found);
    return new Reply(204, NONE, null);
  }

  beat(now: number): boolean {
    this.table.sweep(now);
    return this.table.size > 0;
  }

  disconnect(sid: string, requestId: RequestId): boolean {
    return this.table.disconnect(sid, requestId, this.parts.retryMs);
  }

  detachGet(sid: string): boolean {
    return this.table.detachGet(sid, this.parts.retryMs);
  }

  detach(all: boolean): void {
    // a drain began: each session ends gracefully now, while its requests' streams are open (a
    // long-lived request's final result reaches its client); it is closed when the drain is over
    if (!all) for (const session of this.table.values()) this.parts.server.endGracefully(session.connection);
    this.table.detach(this.parts.retryMs, all);
  }

  close(): void {
    for (const s of [...this.table.values()]) this.end(s);
  }

  /**
   * Ends `session` here: out of the table, ended gracefully (once: see `server.endGracefully`), its streams
   * closed, its connection closed.
   */
  protected end(session: Session): void {
    this.table.remove(session);
    this.parts.server.endGracefully(session.connection);
    session.closeStreams();
    // idempotent: its onClose comes back here and finds nothing left to do
    session.connection.close();
  }
}
