/** The options of the Streamable HTTP handler, and what it returns. */
import type { AuthInfo } from "../connection.js";
import type { CountStore } from "../limits/counts.js";
import type { Share } from "../limits/shares.js";
import type { JsonRpcErrorObject, RequestId } from "../types.js";
import type { TrustProxy } from "./client-address.js";
import type { EventStore } from "./event-store.js";
import type { SessionStore } from "./session-store.js";

/** Options of {@link createHttpHandler}. */
export interface HttpHandlerOptions {
  /**
   * Sessions (`Mcp-Session-Id`, the GET stream, resumability); `false` serves every POST on its own
   * (stateless); a `SessionStore` (`RedisSessionStore` of picomcp/redis) keeps them where every
   * instance serves them (docs/scaling.md). Default: true (sessions in this instance's memory).
   */
  sessions?: boolean | SessionStore;
  /** Milliseconds a session may sit idle (no request in flight, no stream open) before it ends. Default: 1800000 (30 min). */
  sessionIdleMs?: number;
  /** Most live sessions; at the cap a new one replaces the least recently used idle anonymous one (or one of its own principal's), else 503. Default: 10000. */
  maxSessions?: number;
  /** Most live sessions of one principal (or anonymous address); at the cap its least recently used idle one ends, and if all are busy it gets 429. Default: 32. */
  maxSessionsPerPrincipal?: number;
  /**
   * Sessions without a principal created per minute, in bursts of as many (token buckets): by each
   * anonymous caller the handler tells apart (an address, `limits.key`), and by all of them together
   * (a number sets the total alone); past either, 429 with Retry-After. Default: 600 per caller, 6000 in all.
   */
  anonymousSessionsPerMinute?: number | { perCaller?: number; total?: number };
  /** Most messages in one JSON-RPC batch (2025-03-26 only); a larger one gets 400; 0 turns batches off. Default: 100, or 0 without sessions. */
  maxBatchSize?: number;
  /** Bytes of JSON the answers of one batch may take; an answer that would pass it becomes a short -32000 error. Default: 8388608 (8 MiB). */
  maxBatchAnswerBytes?: number;
  /** `Host` values served: a name (any port) or `name:port`; `"*"` turns the check off. Default: localhost, 127.0.0.1, [::1]. */
  allowedHosts?: readonly string[] | "*";
  /** Where the handler's lines for the operator go: one for each `Host` it refuses, naming `allowedHosts`. Default: `console.warn`. */
  log?: (line: string) => void;
  /** Browser origins allowed (`scheme://host[:port]`), or `"*"`. Default: origins whose host passes `allowedHosts`. */
  allowedOrigins?: readonly string[] | "*";
  /** Largest request body in bytes; a larger one gets 413. Default: 4194304 (4 MiB). */
  maxBodyBytes?: number;
  /** Keeps SSE events so a client can resume with `Last-Event-ID`; `false` turns that off. Default: a `MemoryEventStore`. */
  eventStore?: EventStore | false;
  /** The `retry:` (ms) sent with priming events and when the server closes a stream early. Default: 1000. */
  retryMs?: number;
  /** Milliseconds of silence on an SSE stream before a keep-alive comment. Default: 15000. */
  keepAliveMs?: number;
  /** Bytes queued for an SSE client that is not reading before it is dropped as gone. Default: 8388608 (8 MiB). */
  maxBufferedBytes?: number;
  /** Most 2026-07-28 `subscriptions/listen` streams open at once; one more gets 503 (`Retry-After: 5`). Default: 10000. */
  maxListenStreams?: number;
  /**
   * Verifies the credentials of every request: return the caller's `AuthInfo` (frozen, it becomes that
   * request's `ctx.auth`; its principal binds the session it opens), nothing (anonymous), or a `Response`
   * to answer with (a 401; a JSON-RPC error body is added when it has none). Default: none.
   */
  authenticate?: (
    request: Request,
  ) => AuthInfo | Response | undefined | Promise<AuthInfo | Response | undefined>;
  /**
   * Maps the error answer of one request, about to be sent as a JSON response, to the HTTP status and
   * headers it goes out with (`picomcp/auth` turns `insufficient_scope` into a 403 challenge this way);
   * nothing keeps the default. The body stays the JSON-RPC answer. Not called for batches, for answers
   * on an SSE stream (their status is already sent), or for errors found before the request ran.
   * Default: none.
   */
  errorStatus?: ErrorStatus;
  /**
   * The proxies in front of the server that are trusted to name the client: a count of hops, or
   * their addresses (`["10.0.0.0/8"]`, `"loopback"`, `"private"`), and the header they append to
   * (`X-Forwarded-For` by default, or RFC 7239 `Forwarded`). The client they name is what the
   * limits, `ctx.clientAddress` and telemetry see; an entry a client wrote itself is never read.
   * Only with such a proxy in front: without one, every client can name itself. Default: none (the
   * peer's address).
   */
  trustProxy?: TrustProxy;
  /**
   * What one caller may hold over HTTP, and all callers together; a caller at its share gets 429
   * (`Retry-After`), the server at a total 503. Defaults: docs/security.md.
   */
  limits?: HttpLimits;
}

/** The HTTP handler's `limits`: its shares and totals, and who an anonymous caller is. */
export interface HttpLimits {
  /** 2025 sessions; `maxSessionsPerPrincipal` and `maxSessions` set the same. Default: 32 per principal, 10000 in all. */
  sessions?: Share;
  /** Open GET streams of sessions. Default: 32 per principal, 10000 in all. */
  sseStreams?: Share;
  /** Bytes queued for SSE clients that do not read; the stream a write would take past them is dropped as gone. Default: 16 MiB per principal, 128 MiB in all. */
  sseBytes?: Share;
  /** Bytes of the bodies of 1 KiB or more of requests in flight (a listen's, while it is open), counted from their declared `Content-Length` (or as they arrive) before they are read; a body refused gets 429/503 and its connection closes. Default: 16 MiB per principal, 128 MiB in all. */
  requestBytes?: Share;
  /**
   * Names the caller of a request without a principal, so that anonymous callers each get a share and
   * a rate of their own; undefined makes it the one shared anonymous caller. Default: its address
   * where the handler knows it (`picomcp/node`, `withPeer`, behind `trustProxy` the client's; an IPv6
   * address by its `ipv6Prefix`), else none (every anonymous caller is one).
   */
  key?: (request: Request) => string | undefined;
  /** Bits of an IPv6 address that name one anonymous caller (a host is given a /64 to choose from). Default: 64. */
  ipv6Prefix?: number;
  /** Where the counts live. Default: in this process's memory. */
  store?: CountStore;
}

/** Maps a JSON-RPC error answer to its HTTP status and extra headers, or to nothing (the default status). */
export type ErrorStatus = (
  error: JsonRpcErrorObject,
  request: Request,
) => { status: number; headers?: { readonly [name: string]: string } } | undefined;

/** What {@link createHttpHandler} returns: the fetch handler, plus session controls. */
export interface HttpHandler {
  (request: Request): Promise<Response>;
  /**
   * Closes the SSE connection of a request in flight without ending its stream (with a `retry:`
   * hint); the client resumes with GET and `Last-Event-ID` and still gets the result. Pass the
   * handler's `ctx`. False when the request is unknown or its stream cannot be resumed.
   */
  closeSseStream(target: { sessionId: string; requestId: RequestId }): boolean;
  /** Closes a session's GET stream (the client reconnects to it). False when none is open. */
  closeStandaloneStream(sessionId: string): boolean;
  /** Live sessions. */
  readonly sessionCount: number;
  /** Ends every session and stream, and stops the timer. */
  close(): void;
  /**
   * Drains, then closes: from now on every new request gets `503` with `Retry-After: 1` and
   * `Connection: close` (a POST of a session with requests in flight here is still served: it may
   * carry the answer to a question one of them asked); GET streams close with a `retry:` hint and
   * listen streams end with their final result, so their clients resume on another instance;
   * requests in flight and this server's running tasks get `graceMs` to finish. Past it, requests
   * still running are cancelled (`ctx.signal` aborts) and the tasks left are failed in the task store
   * at once. Resolves once closed; calling it again returns the same promise.
   */
  drain(options?: DrainOptions): Promise<void>;
  /** Whether a drain has begun: a readiness check answers 503 from then on (docs/scaling.md). */
  readonly draining: boolean;
}

/** Options of a drain (`handler.drain()`, `NodeServer.close()` of picomcp/node). */
export interface DrainOptions {
  /**
   * Milliseconds the requests in flight (and the tasks this process runs) get to finish; past them,
   * their handlers are cancelled (`ctx.signal` aborts) and the tasks left are failed. A non-negative
   * integer; 0 cancels at once. Default: 30000.
   */
  graceMs?: number;
}

/** A positive number option, or a RangeError naming it. */
export function positive(n: number, name: string): number {
  if (!(n > 0) || !Number.isFinite(n)) throw new RangeError(`${name} must be a positive number`);
  return n;
}

/** A non-negative integer option, or a RangeError naming it. */
export function count(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer`);
  return n;
}

/** `anonymousSessionsPerMinute` checked: per caller and in all (a number is the total). */
export function anonymousRates(o: HttpHandlerOptions["anonymousSessionsPerMinute"]): {
  perCaller: number;
  total: number;
} {
  const { perCaller = 600, total = 6000 } = typeof o === "number" ? { total: o } : (o ?? {});
  return {
    perCaller: positive(perCaller, "anonymousSessionsPerMinute.perCaller"),
    total: positive(total, "anonymousSessionsPerMinute"),
  };
}
