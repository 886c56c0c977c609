/**
 * The checks a Streamable HTTP request passes before it reaches a session (DNS rebinding, media
 * types, size), and the plain answers: errors with JSON-RPC bodies, JSON answers, CORS.
 */
import { type AuthInfo, type Connection, principalOf } from "../connection.js";
import {
  DEFAULT_FEATURES,
  type Features,
  featuresOf,
  isLegacyVersion,
  LEGACY_VERSIONS,
} from "../eras/versions.js";
import { ErrorCode } from "../errors.js";
import { encodeMessage, errorResponse } from "../jsonrpc.js";
import type { JsonRpcResponse } from "../types.js";
import type { ErrorStatus } from "./options.js";
import { type Answer, Reply, toResponse, withHeaders } from "./reply.js";
import { header } from "./request.js";
import type { Session, SessionTable } from "./session.js";

/** The JSON-RPC code of transport-level refusals (406, 415, 413, 409, 405, 403, 400 without a session). */
export const SERVER_ERROR = -32000;
/** The JSON-RPC code of a 404 for an unknown or ended session. */
export const SESSION_NOT_FOUND = -32001;

/** Hosts a local server answers by default: loopback names, any port. */
export const LOOPBACK_HOSTS: readonly string[] = Object.freeze(["localhost", "127.0.0.1", "[::1]"]);

/** A JSON-RPC error body (no id) with an HTTP status. */
export function httpError(
  status: number,
  code: number,
  message: string,
  features?: Features,
  headers?: { [name: string]: string },
  data?: unknown,
): Reply {
  const error = data === undefined ? { code, message } : { code, message, data };
  const body = encodeMessage(errorResponse(undefined, error, features));
  return new Reply(status, headers ? { "content-type": "application/json", ...headers } : JSON_TYPE, body);
}

/** The headers of a JSON answer that has no others (shared: a reply's headers are never changed). */
export const JSON_TYPE: { readonly [name: string]: string } = Object.freeze({
  "content-type": "application/json",
});

/** 404 for an unknown, expired or ended session. */
export function sessionNotFound(features?: Features): Reply {
  return httpError(404, SESSION_NOT_FOUND, "Session not found", features);
}

/** 503 when the session table is full of busy sessions. */
export function tooManySessions(): Reply {
  return httpError(503, SERVER_ERROR, "Service Unavailable: too many sessions", undefined, {
    "retry-after": "5",
  });
}

/** 401 for a request without credentials on a session that was opened with them. */
export function unauthorized(features?: Features): Reply {
  return httpError(
    401,
    SERVER_ERROR,
    "Unauthorized: this session was opened with credentials; send them with every request",
    features,
    { "www-authenticate": "Bearer" },
  );
}

/**
 * Whether a request may use a session: only the principal that opened it, with credentials when
 * it was opened with them. Another principal gets the same 404 as an unknown id, so that a session
 * id tells nobody else that it exists; missing credentials get 401. A session is never rebound.
 */
export function refuseSession(
  session: Session,
  auth: AuthInfo | undefined,
  features: Features,
): Reply | undefined {
  if (mayUse(session, auth)) return undefined;
  return auth === undefined ? unauthorized(features) : sessionNotFound(features);
}

/** Whether a caller with `auth` may use `session` (see {@link refuseSession}). */
export function mayUse(session: Session, auth: AuthInfo | undefined): boolean {
  if (auth === undefined) return !session.authenticated;
  return session.authenticated && principalOf(auth) === session.principal;
}

/** 429 when anonymous sessions are created faster than allowed, or a principal is at its cap. */
export function tooManyRequests(message: string, retryAfterMs: number): Reply {
  return httpError(429, SERVER_ERROR, `Too Many Requests: ${message}`, undefined, {
    "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
  });
}

/** Makes room in `table` for one more session of `principal`, or the 429 or 503 that says why there is none. */
export function noRoom(table: SessionTable, principal: string | undefined): Reply | undefined {
  const why = table.makeRoom(principal);
  if (why === "principal") return tooManyRequests("this principal has too many busy sessions", 5000);
  return why === "full" ? tooManySessions() : undefined;
}

/** A `Response` of the `authenticate` hook, with a JSON-RPC error body if it is an error without one. */
export function withErrorBody(response: Response): Response {
  if (response.status < 400 || response.body !== null) return response;
  const headers = new Headers(response.headers);
  headers.set("content-type", "application/json");
  const message =
    response.statusText ||
    (response.status === 401 ? "Unauthorized" : response.status === 403 ? "Forbidden" : "Refused");
  const body = encodeMessage(errorResponse(undefined, { code: SERVER_ERROR, message }));
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/** Freezes verified credentials in place, nested objects too, so no request can change another's. */
export function freezeAuth(auth: AuthInfo): AuthInfo {
  deepFreeze(auth, 8);
  return auth;
}

function deepFreeze(value: object, depth: number): void {
  if (Object.isFrozen(value)) return;
  Object.freeze(value);
  if (depth === 0) return;
  for (const key in value) {
    const v = (value as { [key: string]: unknown })[key];
    if (typeof v === "object" && v !== null) deepFreeze(v, depth - 1);
  }
}

/** An RFC 3986 authority without user info: a reg-name or IPv4, or an IPv6 literal, and a port. */
const HOST_SYNTAX = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::\d{1,5})?$/;

/** Whether a `Host` header is well formed (`localhost:3000@evil.com` is not). */
export function validHost(host: string): boolean {
  return HOST_SYNTAX.test(host);
}

/** Splits `host[:port]` (IPv6 in brackets) into a lower-case host name and the port text. */
function splitHost(value: string): { name: string; port: string } {
  const v = value.trim().toLowerCase();
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(v);
  return m ? { name: m[1]!, port: m[2] ?? "" } : { name: v, port: "" };
}

/**
 * Whether `host` (a Host header, `name[:port]`) is allowed: an entry with a port must match
 * exactly; an entry without one matches that name on any port. `"*"` allows everything.
 */
export function hostAllowed(host: string, allowed: readonly string[] | "*"): boolean {
  if (allowed === "*") return true;
  const h = splitHost(host);
  return allowed.some((entry) => {
    const e = splitHost(entry);
    return e.name === h.name && (e.port === "" || e.port === h.port);
  });
}

/**
 * The Host check of one handler: 400 for a malformed Host, 403 for one not allowed, else 0. The last
 * verdict is kept: a client sends the same Host with every request.
 */
export class HostCheck {
  readonly #allowed: readonly string[] | "*";
  #last: string | undefined;
  #refusal = 0;

  constructor(allowed: readonly string[] | "*") {
    this.#allowed = allowed;
  }

  refusal(host: string): number {
    if (host === this.#last) return this.#refusal;
    this.#refusal = !validHost(host) ? 400 : hostAllowed(host, this.#allowed) ? 0 : 403;
    this.#last = host;
    return this.#refusal;
  }

  // each refused Host is told of once (a client repeats it with every request), up to 100 of them
  readonly #told = new Set<string>();

  /** The operator's line for a refused `host`, the first time it is refused; else undefined. */
  toldOnce(host: string): string | undefined {
    if (this.#told.has(host) || this.#told.size >= 100) return undefined;
    this.#told.add(host);
    const allowed = this.#allowed === "*" ? '"*"' : JSON.stringify(this.#allowed);
    return `picomcp/http: refused Host "${host}" (403): it is not in allowedHosts ${allowed}; add it to the allowedHosts option of the HTTP handler (or of serve)`;
  }
}

/**
 * Whether a request's `Origin` may call: absent (not a browser) is fine; a listed origin is fine;
 * without a list, an origin whose host passes the host check is fine. `"null"` never is, unless listed.
 */
export function originAllowed(
  origin: string | null,
  allowedOrigins: readonly string[] | "*" | undefined,
  allowedHosts: readonly string[] | "*",
): boolean {
  if (origin === null) return true;
  if (allowedOrigins === "*") return true;
  const o = origin.trim().toLowerCase();
  if (allowedOrigins) return allowedOrigins.some((a) => a.trim().toLowerCase().replace(/\/$/, "") === o);
  if (allowedHosts === "*") return true;
  let url: URL;
  try {
    url = new URL(o);
  } catch {
    return false;
  }
  return (url.protocol === "http:" || url.protocol === "https:") && hostAllowed(url.host, allowedHosts);
}

/** Whether an `Accept` header admits `type` (wildcards count; `q=0` excludes). A missing header admits nothing. */
export function accepts(header: string | null, type: string): boolean {
  if (!header) return false;
  const main = type.slice(0, type.indexOf("/"));
  for (const part of header.split(",")) {
    const [range = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    if (range === type || range === "*/*" || range === `${main}/*`) return true;
  }
  return false;
}

/** The last Accept header a POST came with, and whether it admits both of a POST's answers: clients send the same one every time. */
let lastAccept: string | null = null;
let lastAcceptsBoth = false;

/** Whether an `Accept` header admits JSON and SSE (what a POST may be answered with), as {@link accepts} says. */
export function acceptsJsonAndSse(header: string | null): boolean {
  if (header === lastAccept) return lastAcceptsBoth;
  const both = accepts(header, "application/json") && accepts(header, "text/event-stream");
  lastAccept = header;
  lastAcceptsBoth = both;
  return both;
}

/** Whether a `Content-Type` header is JSON (`application/json`, any parameters). */
export function isJsonContentType(header: string | null): boolean {
  if (header === "application/json") return true;
  if (!header) return false;
  return header.split(";")[0]!.trim().toLowerCase() === "application/json";
}

/** A random id of visible ASCII (lower-case hex) from Web Crypto. */
export function randomId(bytes: number): string {
  // one call to Web Crypto per 4 KiB of ids: a call costs far more than the bytes it returns
  if (poolAt + bytes > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  let s = "";
  for (let i = poolAt; i < poolAt + bytes; i++) s += HEX[pool[i]!]!;
  poolAt += bytes;
  return s;
}

const pool = new Uint8Array(4096);
let poolAt = pool.length;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function versionFeatures(version: string | null): Features {
  return isLegacyVersion(version) ? featuresOf(version) : DEFAULT_FEATURES;
}

/** 400 -32022 naming `supported`: a session's revisions by default (outside one, the endpoint's). */
export function unsupportedVersion(requested: string, supported: readonly string[] = LEGACY_VERSIONS): Reply {
  return httpError(
    400,
    ErrorCode.UnsupportedProtocolVersion,
    `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(requested)}; supported: ${supported.join(", ")}`,
    undefined,
    undefined,
    { supported: [...supported], requested },
  );
}

/** A JSON answer: 400 when it is a lone error tied to no request (the input was not a request), else 200. */
export function json(
  answer: JsonRpcResponse | JsonRpcResponse[],
  headers?: { readonly [name: string]: string },
  status?: number,
): Reply {
  const orphan = !Array.isArray(answer) && "error" in answer && answer.id == null;
  return new Reply(
    status ?? (orphan ? 400 : 200),
    headers ? { "content-type": "application/json", ...headers } : JSON_TYPE,
    encodeMessage(answer),
  );
}

/** What the `errorStatus` option makes of a single error answer: its status and headers, or nothing. */
export function mapError(
  map: ErrorStatus | undefined,
  answer: JsonRpcResponse | JsonRpcResponse[] | undefined,
  request: Request,
): ReturnType<ErrorStatus> {
  if (!map || answer === undefined || Array.isArray(answer) || !("error" in answer)) return undefined;
  let mapped: ReturnType<ErrorStatus>;
  try {
    mapped = map(answer.error, request);
    // headers a Response would refuse (a newline in a value, say) are found here, not while answering
    if (mapped?.headers) new Headers(mapped.headers);
  } catch {
    // a hook that throws, or gives headers no Response can carry, must not cost the request its answer
    return undefined;
  }
  // a hook's bad status would make the Response constructor throw: keep the default instead
  return mapped && Number.isInteger(mapped.status) && mapped.status >= 200 && mapped.status <= 599
    ? mapped
    : undefined;
}

/** The answer to a POST's requests (with what `errorStatus` made of an error), or 202/404 when there is none. */
export function answerResponse(
  answer: JsonRpcResponse | JsonRpcResponse[] | undefined,
  headers: { readonly [name: string]: string } | undefined,
  connection: Connection,
  mapped?: ReturnType<ErrorStatus>,
): Answer {
  if (answer !== undefined) {
    if (!mapped) return json(answer, headers);
    // a hook's headers (any case, any spelling) are made what a Response makes of them
    const merged = { ...headers, ...mapped.headers };
    return mapped.headers
      ? toResponse(json(answer, merged, mapped.status))
      : json(answer, merged, mapped.status);
  }
  // cancelled: by the client (nothing to say), or because the session ended
  if (connection.closed && headers?.["mcp-session-id"])
    return httpError(404, SESSION_NOT_FOUND, "Session not found");
  return new Reply(202, headers ?? NONE, null);
}

/** No headers (shared: a reply's headers are never changed). */
export const NONE: { readonly [name: string]: string } = Object.freeze({});

/** What a browser may send when the preflight does not list its headers (both eras). */
const CORS_ALLOW_HEADERS =
  "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name";
/** What a browser may read: the session id, the revision, the challenge of a 401, when to retry a 429 or 503. */
const CORS_EXPOSE_HEADERS = "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after";

export function preflight(request: Request, methods: string): Reply {
  const headers: { [name: string]: string } = { allow: `${methods}, OPTIONS` };
  if (header(request, "origin") !== null) {
    headers["access-control-allow-methods"] = methods;
    headers["access-control-allow-headers"] =
      header(request, "access-control-request-headers") ?? CORS_ALLOW_HEADERS;
    headers["access-control-max-age"] = "86400";
  }
  return new Reply(204, headers, null);
}

const CORS_VARY = Object.freeze({ vary: "origin" });

/** Adds CORS headers for an allowed browser origin (copying a response whose headers are immutable). */
export function withCors(answer: Answer, origin: string): Answer {
  return withHeaders(
    answer,
    { "access-control-allow-origin": origin, "access-control-expose-headers": CORS_EXPOSE_HEADERS },
    CORS_VARY,
  );
}
