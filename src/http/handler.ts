/** The Streamable HTTP handler: routing by method, sessions, stateless exchanges, GET streams, DELETE. */
import type { AuthInfo, Connection } from "../connection.js";
import { SUPPORTED_VERSIONS } from "../eras/modern.js";
import { featuresOf, isLegacyVersion } from "../eras/versions.js";
import { ErrorCode } from "../errors.js";
import { parseErrorResponse } from "../jsonrpc.js";
import type { McpServer } from "../server.js";
import type { RequestId } from "../types.js";
import { type EventStore, MemoryEventStore } from "./event-store.js";
import { encode, serveExchange } from "./exchange.js";
import {
  accepts,
  hostAllowed,
  httpError,
  isJsonContentType,
  json,
  LOOPBACK_HOSTS,
  originAllowed,
  preflight,
  randomId,
  readBody,
  SERVER_ERROR,
  sessionNotFound,
  tooManySessions,
  unsupportedVersion,
  versionFeatures,
  withCors,
} from "./guard.js";
import { isModernBody, isModernHeader, ModernHttp } from "./modern.js";
import type { HttpHandlerOptions } from "./options.js";
import { EventStream, Session, SessionTable } from "./session.js";
import { SSE_HEADERS, SseWriter } from "./sse.js";

const BATCH_VERSION = "2025-03-26";

function isObject(v: unknown): v is { [key: string]: unknown } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function positive(n: number, name: string): number {
  if (!(n > 0) || !Number.isFinite(n)) throw new RangeError(`${name} must be a positive number`);
  return n;
}

/** @internal */
export class StreamableHttp {
  readonly #server: McpServer;
  readonly #o: HttpHandlerOptions;
  readonly #table: SessionTable | undefined;
  readonly #store: EventStore | undefined;
  readonly #hosts: readonly string[] | "*";
  readonly #maxBody: number;
  readonly #retryMs: number;
  readonly #keepAliveMs: number;
  readonly #idleMs: number;
  readonly #live = new Set<SseWriter>();
  readonly #modern: ModernHttp;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(server: McpServer, o: HttpHandlerOptions) {
    this.#server = server;
    this.#o = o;
    this.#hosts = o.allowedHosts ?? LOOPBACK_HOSTS;
    this.#maxBody = positive(o.maxBodyBytes ?? 4 * 1024 * 1024, "maxBodyBytes");
    this.#retryMs = positive(o.retryMs ?? 1000, "retryMs");
    this.#keepAliveMs = positive(o.keepAliveMs ?? 15_000, "keepAliveMs");
    this.#idleMs = positive(o.sessionIdleMs ?? 30 * 60_000, "sessionIdleMs");
    const max = positive(o.maxSessions ?? 10_000, "maxSessions");
    this.#modern = new ModernHttp({
      server,
      maxBodyBytes: this.#maxBody,
      maxListens: positive(o.maxListenStreams ?? 10_000, "maxListenStreams"),
      sink: (onGone) => this.#sink(onGone),
    });
    if (o.sessions !== false) {
      this.#table = new SessionTable(this.#idleMs, max, (s) => this.#end(s));
      this.#store = o.eventStore === false ? undefined : (o.eventStore ?? new MemoryEventStore());
    }
  }

  get sessionCount(): number {
    return this.#table?.size ?? 0;
  }

  async handle(request: Request): Promise<Response> {
    const origin = request.headers.get("origin");
    const host = request.headers.get("host") ?? new URL(request.url).host;
    if (!hostAllowed(host, this.#hosts))
      return httpError(403, SERVER_ERROR, "Forbidden: this Host is not allowed");
    if (!originAllowed(origin, this.#o.allowedOrigins, this.#hosts)) {
      return httpError(403, SERVER_ERROR, "Forbidden: this Origin is not allowed");
    }
    let response: Response;
    try {
      response = await this.#route(request);
    } catch {
      response = httpError(500, ErrorCode.InternalError, "Internal error");
    }
    return origin === null ? response : withCors(response, origin);
  }

  async #route(request: Request): Promise<Response> {
    const methods = this.#table ? "GET, POST, DELETE" : "POST";
    if (request.method === "OPTIONS") return preflight(request, methods);
    let auth: AuthInfo | undefined;
    if (this.#o.authenticate) {
      const verdict = await this.#o.authenticate(request);
      if (verdict instanceof Response) return verdict;
      auth = verdict;
    }
    // dual-era routing: a live session stays legacy; else the version header, initialize, the body
    const sid = request.headers.get("mcp-session-id");
    const modern = isModernHeader(request.headers) && !(sid !== null && this.#table?.get(sid));
    if (request.method === "POST")
      return modern ? this.#modern.post(request, auth) : this.#post(request, auth);
    if (modern && (request.method === "GET" || request.method === "DELETE")) return this.#modern.notAllowed();
    if (this.#table && request.method === "GET") return this.#get(request, this.#table);
    if (this.#table && request.method === "DELETE") return this.#delete(request, this.#table);
    return httpError(405, SERVER_ERROR, `Method not allowed: use ${methods}`, undefined, { allow: methods });
  }

  async #post(request: Request, auth: AuthInfo | undefined): Promise<Response> {
    const accept = request.headers.get("accept");
    if (!accepts(accept, "application/json") || !accepts(accept, "text/event-stream")) {
      return httpError(
        406,
        SERVER_ERROR,
        "Not Acceptable: Accept must list application/json and text/event-stream",
      );
    }
    if (!isJsonContentType(request.headers.get("content-type"))) {
      return httpError(415, SERVER_ERROR, "Unsupported Media Type: Content-Type must be application/json");
    }
    const version = request.headers.get("mcp-protocol-version");
    const sid = request.headers.get("mcp-session-id");
    const session = this.#table && sid !== null ? this.#table.get(sid) : undefined;
    const features = session ? featuresOf(session.connection.protocolVersion!) : versionFeatures(version);
    if (this.#table && sid !== null && !session) return sessionNotFound(features);
    let body: Awaited<ReturnType<typeof readBody>>;
    try {
      body = await readBody(request, this.#maxBody);
    } catch {
      return httpError(400, SERVER_ERROR, "Bad Request: the body could not be read", features);
    }
    if (!body.ok && body.reason === "too-large") {
      return httpError(
        413,
        SERVER_ERROR,
        `Payload Too Large: the body must not exceed ${this.#maxBody} bytes`,
        features,
      );
    }
    let message: unknown;
    try {
      if (!body.ok) throw new SyntaxError("not UTF-8");
      message = JSON.parse(body.text);
    } catch {
      return json(parseErrorResponse(features), {});
    }
    const init = isObject(message) && message.method === "initialize";
    if (!session && !init && isModernBody(message)) return this.#modern.serve(request, message, auth);
    if (!init && version !== null && !isLegacyVersion(version))
      return unsupportedVersion(version, session ? undefined : SUPPORTED_VERSIONS);
    if (Array.isArray(message) && version !== null && version !== BATCH_VERSION) {
      return httpError(
        400,
        ErrorCode.InvalidRequest,
        `Invalid Request: batches are only accepted on ${BATCH_VERSION}`,
        features,
      );
    }
    if (!this.#table) return this.#stateless(request, message, init, version, auth);
    if (session?.connection.closed) return sessionNotFound(features);
    if (session) {
      if (auth) session.connection.auth = auth;
      return this.#exchange(session.connection, session, message, undefined, () => {});
    }
    if (!init) {
      return httpError(
        400,
        SERVER_ERROR,
        `Bad Request: Mcp-Session-Id header is required (initialize first, or send a 2026-07-28 request with _meta); supported versions: ${SUPPORTED_VERSIONS.join(", ")}`,
        features,
        undefined,
        { supported: [...SUPPORTED_VERSIONS] },
      );
    }
    return this.#initialize(this.#table, message, auth);
  }

  async #initialize(table: SessionTable, message: unknown, auth: AuthInfo | undefined): Promise<Response> {
    if (!table.makeRoom()) {
      return tooManySessions();
    }
    const id = randomId(16);
    const standalone = new EventStream(randomId(12), this.#store);
    let session: Session | undefined;
    const connection = this.#server.connect({
      id,
      ...(auth ? { auth } : {}),
      send: (m) => {
        const data = encode(m);
        if (data !== undefined) session?.standalone.write(data);
      },
      onClose: () => session && this.#end(session),
    });
    const answer = await this.#server.handle(message, connection);
    if (connection.protocolVersion === undefined || connection.closed || answer === undefined) {
      connection.close();
      return answer === undefined ? new Response(null, { status: 202 }) : json(answer, {});
    }
    if (!table.makeRoom()) {
      // others initialized meanwhile
      connection.close();
      return tooManySessions();
    }
    session = new Session(id, connection, standalone);
    table.add(session);
    this.#startTimer();
    return json(answer, { "mcp-session-id": id });
  }

  async #stateless(
    request: Request,
    message: unknown,
    init: boolean,
    version: string | null,
    auth: AuthInfo | undefined,
  ): Promise<Response> {
    // nothing reaches a client outside its own POST without a session
    const connection = this.#server.connect({
      send: () => {},
      ...(auth ? { auth } : {}),
      ...(init ? {} : { initialized: { protocolVersion: version ?? BATCH_VERSION } }),
    });
    return this.#exchange(connection, undefined, message, request.signal, () => connection.close());
  }

  #exchange(
    connection: Connection,
    session: Session | undefined,
    message: unknown,
    signal: AbortSignal | undefined,
    done: () => void,
  ): Promise<Response> {
    return serveExchange({
      server: this.#server,
      connection,
      session,
      message,
      signal,
      done,
      store: session ? this.#store : undefined,
      retryMs: this.#retryMs,
      sink: (onGone) => this.#sink(onGone),
    });
  }

  #get(request: Request, table: SessionTable): Response | Promise<Response> {
    if (!accepts(request.headers.get("accept"), "text/event-stream")) {
      return httpError(406, SERVER_ERROR, "Not Acceptable: Accept must list text/event-stream");
    }
    const found = this.#session(request, table);
    if (found instanceof Response) return found;
    const session = found;
    const features = featuresOf(session.connection.protocolVersion!);
    const headers = { ...SSE_HEADERS, "mcp-session-id": session.id };
    const last = request.headers.get("last-event-id");
    if (last !== null && this.#store) {
      const dot = last.lastIndexOf(".");
      const stream = session.streams.get(last.slice(0, dot));
      const seq = Number(last.slice(dot + 1));
      if (!stream || dot < 0 || !Number.isInteger(seq) || seq < 0 || seq > stream.seq) {
        return httpError(400, SERVER_ERROR, "Bad Request: unknown Last-Event-ID", features);
      }
      const sink = this.#sink(() => {
        if (stream.sink === sink) stream.sink = undefined;
        session.lastActive = Date.now();
      });
      void stream.resume(seq, sink).then(() => {
        if (stream.done && stream !== session.standalone && !stream.sink) session.forget(stream);
      });
      return new Response(sink.readable, { status: 200, headers });
    }
    if (session.standalone.sink?.open) {
      return httpError(409, SERVER_ERROR, "Conflict: this session already has a GET stream open", features);
    }
    const sink = this.#sink(() => {
      if (session.standalone.sink === sink) session.standalone.sink = undefined;
      session.lastActive = Date.now();
    });
    // messages sent while no GET stream was open come first
    const prime = features.version >= "2025-11-25";
    void session.standalone.resume(session.standalone.sent, sink, prime, this.#retryMs);
    return new Response(sink.readable, { status: 200, headers });
  }

  #delete(request: Request, table: SessionTable): Response {
    const found = this.#session(request, table);
    if (found instanceof Response) return found;
    this.#end(found);
    return new Response(null, { status: 204 });
  }

  /** The session a GET or DELETE names, or the error answer (400 without one, 404 unknown, 400 bad version). */
  #session(request: Request, table: SessionTable): Session | Response {
    const sid = request.headers.get("mcp-session-id");
    const version = request.headers.get("mcp-protocol-version");
    if (version !== null && !isLegacyVersion(version)) return unsupportedVersion(version);
    if (sid === null) return httpError(400, SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required");
    return table.get(sid) ?? sessionNotFound(versionFeatures(version));
  }

  #sink(onGone: () => void): SseWriter {
    const sink = new SseWriter({ maxBufferedBytes: this.#o.maxBufferedBytes ?? 8 * 1024 * 1024, onGone });
    this.#live.add(sink);
    this.#startTimer();
    return sink;
  }

  #end(session: Session): void {
    this.#table?.remove(session);
    session.closeStreams();
    // idempotent: its onClose comes back here and finds nothing left to do
    session.connection.close();
  }

  /** One timer for all: expires idle sessions and writes keep-alives; it stops when nothing is left. */
  #startTimer(): void {
    if (this.#timer !== undefined) return;
    const every = Math.max(10, Math.min(this.#keepAliveMs, this.#idleMs / 2, 60_000));
    this.#timer = setInterval(() => this.#tick(), every);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #tick(): void {
    const now = Date.now();
    this.#table?.sweep(now);
    for (const sink of this.#live) {
      const stalled = sink.stalledSince;
      if (!sink.open) this.#live.delete(sink);
      // a client that stayed behind for a long time is gone, whatever its socket says
      else if (stalled !== undefined && now - stalled > 4 * this.#keepAliveMs) sink.drop();
      else if (now - sink.lastWrite >= this.#keepAliveMs) sink.comment("keepalive");
    }
    if ((this.#table?.size ?? 0) === 0 && this.#live.size === 0) this.#stopTimer();
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  closeSseStream(target: { sessionId: string; requestId: RequestId }): boolean {
    const session = this.#table?.get(target.sessionId);
    return session?.exchanges.get(target.requestId)?.disconnect(this.#retryMs) ?? false;
  }

  closeStandaloneStream(sessionId: string): boolean {
    const session = this.#table?.get(sessionId);
    if (!session?.standalone.sink) return false;
    session.standalone.detach(this.#retryMs);
    return true;
  }

  close(): void {
    this.#modern.close();
    if (this.#table) for (const s of [...this.#table.values()]) this.#end(s);
    for (const sink of this.#live) sink.close();
    this.#live.clear();
    this.#stopTimer();
  }
}
