/** The Streamable HTTP handler: routing by method, era and session, the checks every request passes, and a drain; sessions are its backend's. */
import type { AuthInfo } from "../connection.js";
import { featuresOf, isSessionVersion, SUPPORTED_VERSIONS } from "../eras/versions.js";
import { ErrorCode } from "../errors.js";
import type { McpServer } from "../server.js";
import { type Awaitable, isObject, isPromiseLike, type RequestId } from "../types.js";
import { freezeAuth } from "./access.js";
import {
  httpError,
  messageOf,
  noBatch,
  SERVER_ERROR,
  sessionNotFound,
  unreadable,
  unsupportedVersion,
  versionFeatures,
  withErrorBody,
} from "./answers.js";
import { type BackendParts, NoSessions, notAllowed, type SessionBackend } from "./backend.js";
import { preflight, withCors } from "./cors.js";
import { closing, Drain, drainingReply } from "./drain.js";
import { type ExchangeParts, serveExchange } from "./exchange.js";
import { acceptsJsonAndSse, HostCheck, isJsonContentType, LOOPBACK_HOSTS, originAllowed } from "./guard.js";
import { contradictingHeaders } from "./headers.js";
import { type BodyCount, HttpGovernor } from "./limits.js";
import { LocalSessions } from "./local.js";
import { anonymousRates, count, type DrainOptions, type HttpHandlerOptions, positive } from "./options.js";
import { type Answer, Reply } from "./reply.js";
import { type BodyResult, header, readBody } from "./request.js";
import type { Session } from "./session.js";
import { sessionStore } from "./session-store.js";
import { SharedBackend } from "./shared-backend.js";
import { LiveStreams } from "./sse.js";
import { isStatelessBody, isStatelessHeader, StatelessHttp } from "./stateless.js";

/** 500, for a request whose handling failed. */
const internalError = () => httpError(500, ErrorCode.InternalError, "Internal error");

/** The backend the `sessions` option names: none, this instance's memory, or a store every instance serves from. */
function sessionBackend(parts: BackendParts): SessionBackend {
  const sessions = parts.o.sessions;
  if (sessions === false) return new NoSessions(parts);
  const store = sessionStore(sessions);
  return store ? new SharedBackend(parts, store) : new LocalSessions(parts);
}

/** @internal */
export class StreamableHttp {
  readonly #server: McpServer;
  readonly #o: HttpHandlerOptions;
  readonly #sessions: SessionBackend;
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
  readonly #drain = new Drain();
  #drained: Promise<void> | undefined;
  /** What every POST's exchange shares. */
  readonly #parts: ExchangeParts;

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
      beat: (now) => this.#sessions.beat(now),
      ended: () => this.#drain.changed(),
    });
    // the default is the backend's
    const maxBatch = o.maxBatchSize === undefined ? undefined : count(o.maxBatchSize, "maxBatchSize");
    this.#maxAnswer = positive(o.maxBatchAnswerBytes ?? 8 * 1024 * 1024, "maxBatchAnswerBytes");
    const anonymousPerMinute = anonymousRates(o.anonymousSessionsPerMinute);
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
    this.#sessions = sessionBackend({
      server,
      o,
      limits: this.#limits,
      idleMs: this.#idleMs,
      anonymousPerMinute,
      retryMs: this.#retryMs,
      streams: this.#streams,
      drain: this.#drain,
      exchange: (request, on, message, auth) => serveExchange(this.#parts, request, on, message, auth),
    });
    this.#parts = {
      server,
      maxBatchAnswerBytes: this.#maxAnswer,
      store: this.#sessions.events,
      retryMs: this.#retryMs,
      sink: (onGone, request, auth) =>
        this.#streams.open(onGone, this.#limits.queue(this.#limits.caller(request, auth))),
      errorStatus: o.errorStatus,
      drain: this.#drain,
    };
    this.#maxBatch = maxBatch ?? this.#sessions.maxBatch;
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** Answers a request: at once when nothing on its way waits (a refusal, a synchronous exchange), else later. */
  handle(request: Request): Awaitable<Answer> {
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
    this.#drain.enter();
    let response: Awaitable<Answer>;
    try {
      response = this.#route(request);
    } catch {
      response = internalError();
    }
    if (!isPromiseLike(response)) return this.#answered(response, origin);
    return response.then(
      (answer) => this.#answered(answer, origin),
      () => this.#answered(internalError(), origin),
    );
  }

  /** A request has its answer: the drain counts it out, and it is told to close during one. */
  #answered(response: Answer, origin: string | null): Answer {
    this.#drain.leave();
    if (this.#drain.draining) response = closing(response);
    return origin === null ? response : withCors(response, origin);
  }

  #busy(request: Request): boolean {
    const sid = request.method === "POST" ? header(request, "mcp-session-id") : null;
    return sid !== null && this.#sessions.busy(sid);
  }

  #route(request: Request): Awaitable<Answer> {
    if (request.method === "OPTIONS") return preflight(request, this.#sessions.methods);
    const authenticate = this.#o.authenticate;
    return authenticate ? this.#authenticated(request, authenticate) : this.#routed(request, undefined);
  }

  async #authenticated(request: Request, authenticate: NonNullable<HttpHandlerOptions["authenticate"]>) {
    const verdict = await authenticate(request);
    if (verdict instanceof Response) return withErrorBody(verdict);
    return await this.#routed(request, verdict ? freezeAuth(verdict) : undefined);
  }

  #routed(request: Request, auth: AuthInfo | undefined): Awaitable<Answer> {
    // routing between the eras: a live session of the caller stays a session; else the version header, initialize,
    // the body. Another's session is ignored, as an unknown one is: neither kept alive nor told to exist
    const sid = header(request, "mcp-session-id");
    const version = header(request, "mcp-protocol-version");
    const stateless = isStatelessHeader(version) && !(sid !== null && this.#sessions.owns(sid, auth));
    if (request.method === "POST") {
      // the body's bytes count for its caller from the first one until it has been read
      const body = this.#limits.count(request, auth);
      return stateless
        ? this.#statelessHttp.post(version!, body)
        : this.#post(request, auth, sid, version, body);
    }
    if (stateless && (request.method === "GET" || request.method === "DELETE"))
      return this.#statelessHttp.notAllowed();
    if (request.method === "GET") return this.#sessions.get(request, auth);
    if (request.method === "DELETE") return this.#sessions.delete(request, auth);
    return notAllowed(this.#sessions.methods);
  }

  #post(
    request: Request,
    auth: AuthInfo | undefined,
    sid: string | null,
    version: string | null,
    body: BodyCount,
  ): Awaitable<Answer> {
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
    // the session named, marked as used, or its refusal (404, 401, 503)
    const found = sid === null ? undefined : this.#sessions.find(request, sid, auth, version);
    if (found instanceof Reply) return found;
    if (isPromiseLike(found))
      return found.then((s) => (s instanceof Reply ? s : this.#read(body, version, s)));
    return this.#read(body, version, found);
  }

  /** Reads and parses the body of a POST whose session (if it names one) was found, then serves it. */
  #read(body: BodyCount, version: string | null, session: Session | undefined): Awaitable<Answer> {
    // the answer is returned, not awaited: the body's text must not live on while a request runs
    const result = readBody(body.request, this.#maxBody, body);
    if (!isPromiseLike(result)) return this.#parse(body, version, session, result);
    return result.then(
      (r) => this.#parse(body, version, session, r),
      () => this.#parse(body, version, session, undefined),
    );
  }

  /** A POST's body as read (undefined: it could not be): its bytes come back, and it is parsed and served, or refused. */
  #parse(
    body: BodyCount,
    version: string | null,
    session: Session | undefined,
    result: BodyResult | undefined,
  ): Awaitable<Answer> {
    body.end();
    const features = session ? featuresOf(session.connection.protocolVersion!) : versionFeatures(version);
    if (result === undefined) return unreadable(features);
    const read = messageOf(result, this.#maxBody, features);
    if (read instanceof Reply) return read;
    return this.#posted(body.request, body.auth, version, session, read.message);
  }

  /** A POST's parsed message: served on the session, on its own, or as the 2026-07-28 request it is. */
  #posted(
    request: Request,
    auth: AuthInfo | undefined,
    version: string | null,
    session: Session | undefined,
    message: unknown,
  ): Awaitable<Answer> {
    const features = session ? featuresOf(session.connection.protocolVersion!) : versionFeatures(version);
    const init = isObject(message) && message.method === "initialize";
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
    if (!session) return this.#sessions.begin(request, message, init, version, auth);
    if (session.connection.closed) return sessionNotFound(features);
    return this.#sessions.serve(request, session, message, auth);
  }
  closeSseStream(target: { sessionId: string; requestId: RequestId }): boolean {
    return this.#sessions.disconnect(target.sessionId, target.requestId);
  }

  closeStandaloneStream(sessionId: string): boolean {
    return this.#sessions.detachGet(sessionId);
  }

  get draining(): boolean {
    return this.#drain.draining;
  }

  drain(options: DrainOptions = {}): Promise<void> {
    this.#drained ??= this.#drain.run(count(options.graceMs ?? 30_000, "graceMs"), {
      // GET streams end with a retry hint (clients resume them elsewhere), listen streams with their final result
      begin: () => {
        this.#sessions.detach(false);
        this.#statelessHttp.close();
      },
      idle: () => this.#streams.size === 0,
      tasks: (signal) => this.#server.settleTasks(signal),
      // past the grace: the streams of requests still running too; then the requests are cancelled
      end: () => {
        this.#sessions.detach(true);
        this.close();
      },
    });
    return this.#drained;
  }

  close(): void {
    this.#sessions.close();
    this.#statelessHttp.close();
    this.#streams.close();
  }
}
