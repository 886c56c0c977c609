/** The Streamable HTTP handler: routing by method, sessions, stateless exchanges, GET streams, DELETE. */
import type { AuthInfo, Connection } from "../connection.js";
import { featuresOf, HEADERLESS_VERSION, isSessionVersion, SUPPORTED_VERSIONS } from "../eras/versions.js";
import { ErrorCode } from "../errors.js";
import { principalKey } from "../limits/key.js";
import type { McpServer } from "../server.js";
import { type Awaitable, isObject, type RequestId } from "../types.js";
import { freezeAuth, mayUse, noRoom, randomId, refuseSession, SESSION_ID_BYTES } from "./access.js";
import {
  errorReply,
  httpError,
  json,
  NONE,
  noBatch,
  readMessage,
  SERVER_ERROR,
  sessionNotFound,
  tooManyRequests,
  unsupportedVersion,
  versionFeatures,
  withErrorBody,
} from "./answers.js";
import { preflight, withCors } from "./cors.js";
import { closing, Drain, drainingReply } from "./drain.js";
import { type EventStore, MemoryEventStore } from "./event-store.js";
import { EventStream } from "./event-stream.js";
import { carried, connectStateless, encode, serveExchange } from "./exchange.js";
import { type GetOptions, sessionDelete, sessionGet } from "./get.js";
import { acceptsJsonAndSse, HostCheck, isJsonContentType, LOOPBACK_HOSTS, originAllowed } from "./guard.js";
import { contradictingHeaders } from "./headers.js";
import { type BodyCount, HttpGovernor } from "./limits.js";
import { anonymousRates, count, type DrainOptions, type HttpHandlerOptions, positive } from "./options.js";
import { type Answer, Reply } from "./reply.js";
import { header } from "./request.js";
import { Session, SessionTable } from "./session.js";
import { sessionStore } from "./session-store.js";
import { SharedSession, SharedSessions } from "./shared.js";
import { LiveStreams } from "./sse.js";
import { isStatelessBody, isStatelessHeader, StatelessHttp } from "./stateless.js";

const noop = () => {};

/** @internal */
export class StreamableHttp {
  readonly #server: McpServer;
  readonly #o: HttpHandlerOptions;
  readonly #table: SessionTable | undefined;
  readonly #store: EventStore | undefined;
  readonly #hosts: readonly string[] | "*";
  readonly #host: HostCheck;
  readonly #maxBody: number;
  readonly #maxBatch: number;
  readonly #maxAnswer: number;
  readonly #retryMs: number;
  readonly #keepAliveMs: number;
  readonly #idleMs: number;
  readonly #streams: LiveStreams;
  readonly #statelessHttp: StatelessHttp;
  readonly #limits: HttpGovernor;
  readonly #shared: SharedSessions | undefined;
  readonly #getOptions: GetOptions;
  readonly #drain = new Drain();
  #drained: Promise<void> | undefined;

  constructor(server: McpServer, o: HttpHandlerOptions) {
    this.#server = server;
    this.#o = o;
    this.#hosts = o.allowedHosts ?? LOOPBACK_HOSTS;
    this.#host = new HostCheck(this.#hosts);
    this.#maxBody = positive(o.maxBodyBytes ?? 4 * 1024 * 1024, "maxBodyBytes");
    this.#retryMs = positive(o.retryMs ?? 1000, "retryMs");
    this.#keepAliveMs = positive(o.keepAliveMs ?? 15_000, "keepAliveMs");
    this.#idleMs = positive(o.sessionIdleMs ?? 30 * 60_000, "sessionIdleMs");
    this.#streams = new LiveStreams({
      keepAliveMs: this.#keepAliveMs,
      everyMs: Math.max(10, Math.min(this.#keepAliveMs, this.#idleMs / 2, 60_000)),
      maxBufferedBytes: o.maxBufferedBytes ?? 8 * 1024 * 1024,
      // idle sessions expire on the same beat; it goes on while any session is left
      beat: (now) => {
        this.#table?.sweep(now);
        this.#shared?.beat();
        return (this.#table?.size ?? 0) > 0;
      },
      ended: () => this.#drain.changed(),
    });
    this.#maxBatch = count(o.maxBatchSize ?? (o.sessions === false ? 0 : 100), "maxBatchSize");
    this.#maxAnswer = positive(o.maxBatchAnswerBytes ?? 8 * 1024 * 1024, "maxBatchAnswerBytes");
    const limits = { idleMs: this.#idleMs, anonymousPerMinute: anonymousRates(o.anonymousSessionsPerMinute) };
    this.#limits = new HttpGovernor(o);
    this.#statelessHttp = new StatelessHttp({
      server,
      maxBodyBytes: this.#maxBody,
      maxListens: positive(o.maxListenStreams ?? 10_000, "maxListenStreams"),
      errorStatus: o.errorStatus,
      sink: (onGone: () => void, caller: string) => this.#streams.open(onGone, this.#limits.queue(caller)),
      limits: this.#limits,
      drain: this.#drain,
    });
    if (o.sessions !== false) {
      this.#table = new SessionTable(limits, this.#limits.governor, (s) => this.#end(s));
      this.#store = o.eventStore === false ? undefined : (o.eventStore ?? new MemoryEventStore());
    }
    this.#getOptions = {
      store: this.#store,
      retryMs: this.#retryMs,
      governor: this.#limits.governor,
      open: (caller, onGone, onEnd) => this.#streams.open(onGone, this.#limits.queue(caller), onEnd),
      draining: () => this.#drain.draining,
    };
    const store = sessionStore(o.sessions);
    if (store)
      this.#shared = new SharedSessions(server, store, this.#table!, this.#store, {
        idleMs: this.#idleMs,
        limits: this.#limits,
        drop: (session) => this.#end(session),
        started: () => this.#streams.start(),
      });
  }

  get sessionCount(): number {
    return this.#table?.size ?? 0;
  }

  async handle(request: Request): Promise<Answer> {
    // a drain refuses new requests; a POST of a session with requests in flight here is still served
    // (its client's answers to their questions come here)
    const origin = header(request, "origin");
    if (this.#drain.draining && !this.#busy(request)) {
      // a browser reads it (and retries) when its origin is one allowed
      const allowed = origin !== null && originAllowed(origin, this.#o.allowedOrigins, this.#hosts);
      return allowed ? withCors(drainingReply(), origin) : drainingReply();
    }
    const host = header(request, "host") ?? new URL(request.url).host;
    const refused = this.#host.refusal(host);
    if (refused === 400) return httpError(400, SERVER_ERROR, "Bad Request: the Host header is malformed");
    if (refused === 403) {
      const line = this.#host.toldOnce(host);
      if (line) (this.#o.log ?? console.warn)(line);
      return httpError(403, SERVER_ERROR, `Forbidden: the Host "${host}" is not in allowedHosts`);
    }
    if (this.#o.trustProxy !== undefined) this.#limits.address(request); // the client, for telemetry too
    if (!originAllowed(origin, this.#o.allowedOrigins, this.#hosts)) {
      return httpError(403, SERVER_ERROR, "Forbidden: this Origin is not allowed");
    }
    let response: Answer;
    this.#drain.enter();
    try {
      response = await this.#route(request);
    } catch {
      response = httpError(500, ErrorCode.InternalError, "Internal error");
    } finally {
      this.#drain.leave();
    }
    if (this.#drain.draining) response = closing(response);
    return origin === null ? response : withCors(response, origin);
  }

  #busy(request: Request): boolean {
    const sid = request.method === "POST" ? header(request, "mcp-session-id") : null;
    return sid !== null && (this.#table?.find(sid)?.exchanges.size ?? 0) > 0;
  }

  #route(request: Request): Answer | Promise<Answer> {
    if (request.method === "OPTIONS") return preflight(request, this.#table ? "GET, POST, DELETE" : "POST");
    const authenticate = this.#o.authenticate;
    return authenticate ? this.#authenticated(request, authenticate) : this.#routed(request, undefined);
  }

  async #authenticated(request: Request, authenticate: NonNullable<HttpHandlerOptions["authenticate"]>) {
    const verdict = await authenticate(request);
    if (verdict instanceof Response) return withErrorBody(verdict);
    return await this.#routed(request, verdict ? freezeAuth(verdict) : undefined);
  }

  #routed(request: Request, auth: AuthInfo | undefined): Answer | Promise<Answer> {
    // routing between the eras: a live session of the caller stays a session; else the version header, initialize,
    // the body. Another's session is ignored, as an unknown one is: neither kept alive nor told to exist
    const sid = header(request, "mcp-session-id");
    const version = header(request, "mcp-protocol-version");
    const stateless = isStatelessHeader(version) && !(sid !== null && this.#ownSession(sid, auth));
    if (request.method === "POST") {
      // the body's bytes count for its caller from the first one until it is parsed (or its answer is out)
      const body = this.#limits.count(request, auth);
      const answer = stateless
        ? this.#statelessHttp.post(request, auth, version!, body)
        : this.#post(request, auth, sid, version, body);
      return answer.finally(() => body.end());
    }
    if (stateless && (request.method === "GET" || request.method === "DELETE"))
      return this.#statelessHttp.notAllowed();
    if (this.#table && request.method === "GET")
      return sessionGet(request, this.#table, this.#shared, auth, this.#getOptions);
    if (this.#table && request.method === "DELETE")
      return sessionDelete(request, this.#table, this.#shared, auth, (s) => this.#end(s));
    const methods = this.#table ? "GET, POST, DELETE" : "POST";
    return httpError(405, SERVER_ERROR, `Method not allowed: use ${methods}`, undefined, { allow: methods });
  }

  #ownSession(sid: string, auth: AuthInfo | undefined): boolean {
    const session = this.#table?.find(sid);
    return session !== undefined && mayUse(session, auth);
  }

  async #post(
    request: Request,
    auth: AuthInfo | undefined,
    sid: string | null,
    version: string | null,
    body: BodyCount,
  ): Promise<Answer> {
    const accept = header(request, "accept");
    if (!acceptsJsonAndSse(accept)) {
      return httpError(
        406,
        SERVER_ERROR,
        "Not Acceptable: Accept must list application/json and text/event-stream",
      );
    }
    if (!isJsonContentType(header(request, "content-type"))) {
      return httpError(415, SERVER_ERROR, "Unsupported Media Type: Content-Type must be application/json");
    }
    const shared =
      this.#shared && sid !== null
        ? await this.#shared.resolve(request, sid, auth, versionFeatures(version))
        : undefined;
    if (shared instanceof Reply) return shared;
    const session = shared ?? (this.#table && sid !== null ? this.#table.find(sid) : undefined);
    const features = session ? featuresOf(session.connection.protocolVersion!) : versionFeatures(version);
    if (this.#table && sid !== null && !session) return sessionNotFound(features);
    // the header's features, as for an unknown id: the answer must not tell that the session exists
    const refused = session && refuseSession(session, auth, versionFeatures(version));
    if (refused) return refused;
    if (session) this.#table!.touch(session);
    const read = await readMessage(request, this.#maxBody, features, body);
    if (read instanceof Reply) return read;
    // parsed: the text is gone, and the running request counts in `requests` (a long exchange holds no bytes)
    body.end();
    const { message } = read;
    const init = isObject(message) && message.method === "initialize";
    // answers are returned, not awaited: the body's text must not live on in this frame while a request runs
    if (!session && !init && isStatelessBody(message))
      return this.#statelessHttp.serve(request, message, auth, version);
    if (!init && version !== null && !isSessionVersion(version))
      return unsupportedVersion(version, session ? undefined : SUPPORTED_VERSIONS);
    const wrongRevision = Array.isArray(message) && noBatch(version);
    if (wrongRevision) return wrongRevision;
    if (Array.isArray(message) && message.length > this.#maxBatch) {
      const why = this.#maxBatch ? `a batch may hold at most ${this.#maxBatch} messages` : "batches are off";
      return httpError(400, ErrorCode.InvalidRequest, `Invalid Request: ${why}`, features);
    }
    const contradicted = contradictingHeaders(request, message, this.#server, features);
    if (contradicted) return contradicted;
    if (!this.#table) return this.#sessionless(request, message, init, version, auth);
    if (session?.connection.closed) return sessionNotFound(features);
    if (session instanceof SharedSession)
      return this.#shared!.serve(session, message, () =>
        this.#exchange(request, session.connection, session, message, auth),
      );
    if (session) return this.#exchange(request, session.connection, session, message, auth);
    if (!init) {
      const text = `Bad Request: Mcp-Session-Id header is required (initialize first, or send a 2026-07-28 request with _meta); supported versions: ${SUPPORTED_VERSIONS.join(", ")}`;
      const data = { supported: [...SUPPORTED_VERSIONS] };
      return errorReply(400, { code: SERVER_ERROR, message: text, data }, features);
    }
    return await this.#initialize(this.#table, message, auth, request);
  }

  async #initialize(table: SessionTable, message: unknown, auth: AuthInfo | undefined, request: Request) {
    const caller = this.#limits.caller(request, auth);
    const wait = principalKey(auth) === undefined ? table.admitAnonymous(caller) : 0;
    if (wait > 0) return tooManyRequests("new sessions without credentials come too fast", wait);
    const full = this.#shared ? undefined : noRoom(table, caller);
    if (full) return full;
    const id = randomId(SESSION_ID_BYTES);
    let session: Session | undefined;
    const connection = this.#server.connect({
      id,
      ...(auth ? { auth } : {}),
      send: (m) => {
        if (session instanceof SharedSession) return this.#shared!.deliver(session, m);
        const data = encode(m);
        if (data !== undefined) session?.standalone.write(data);
      },
      onClose: () => session && this.#end(session),
    });
    this.#limits.bind(connection, request, auth);
    const answer = await this.#server.handle(message, connection, carried(this.#server, request));
    if (connection.protocolVersion === undefined || connection.closed || answer === undefined) {
      connection.close();
      return answer === undefined ? new Reply(202, NONE, null) : json(answer);
    }
    if (this.#shared) {
      const made = await this.#shared.open(id, connection, caller);
      if (made instanceof Reply) return made;
      session = made;
    } else {
      const late = noRoom(table, caller); // others initialized meanwhile
      if (late) {
        connection.close();
        return late;
      }
      session = new Session(id, connection, new EventStream(randomId(12), this.#store, id), caller);
    }
    table.add(session);
    this.#streams.start();
    return json(answer, { "mcp-session-id": id });
  }

  #sessionless(
    request: Request,
    message: unknown,
    init: boolean,
    version: string | null,
    auth: AuthInfo | undefined,
  ): Awaitable<Answer> {
    const connection = connectStateless(
      this.#server,
      init ? undefined : (version ?? HEADERLESS_VERSION),
      auth,
    );
    this.#limits.bind(connection, request, auth);
    return this.#exchange(request, connection, undefined, message, auth);
  }

  /** One POST's messages on `connection`: a session's, or (without `session`) one the drain tracks until its answer is out. */
  #exchange(
    request: Request,
    connection: Connection,
    session: Session | undefined,
    message: unknown,
    auth: AuthInfo | undefined,
  ): Awaitable<Answer> {
    const done = session ? noop : this.#drain.track(connection);
    return serveExchange({
      server: this.#server,
      connection,
      session,
      message,
      auth,
      request,
      errorStatus: this.#o.errorStatus,
      maxBatchAnswerBytes: this.#maxAnswer,
      done,
      store: session ? this.#store : undefined,
      retryMs: this.#retryMs,
      sink: (onGone) => this.#streams.open(onGone, this.#limits.queue(this.#limits.caller(request, auth))),
      shut: this.#drain.isCut,
      cuts: this.#drain.cuts,
    });
  }

  #end(session: Session): void {
    this.#table?.remove(session);
    session.closeStreams();
    // idempotent: its onClose comes back here and finds nothing left to do
    session.connection.close();
  }

  closeSseStream(target: { sessionId: string; requestId: RequestId }): boolean {
    return this.#table?.disconnect(target.sessionId, target.requestId, this.#retryMs) ?? false;
  }

  closeStandaloneStream(sessionId: string): boolean {
    return this.#table?.detachGet(sessionId, this.#retryMs) ?? false;
  }

  get draining(): boolean {
    return this.#drain.draining;
  }

  drain(options: DrainOptions = {}): Promise<void> {
    this.#drained ??= this.#drain.run(count(options.graceMs ?? 30_000, "graceMs"), {
      // GET streams end with a retry hint (clients resume them elsewhere), listen streams with their final result
      begin: () => {
        this.#table?.detach(this.#retryMs, false);
        this.#shared?.detach(this.#retryMs);
        this.#statelessHttp.close();
      },
      idle: () => this.#streams.size === 0,
      tasks: (signal) => this.#server.settleTasks(signal),
      // past the grace: the streams of requests still running too; then the requests are cancelled
      end: () => {
        this.#table?.detach(this.#retryMs, true);
        this.close();
      },
    });
    return this.#drained;
  }

  close(): void {
    this.#shared?.close();
    this.#statelessHttp.close();
    if (this.#table) for (const s of [...this.#table.values()]) this.#end(s);
    this.#streams.close();
  }
}
