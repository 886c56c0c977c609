/**
 * The OAuth 2.1 resource server in front of the Streamable HTTP handler: bearer tokens on every
 * request, RFC 9728 protected resource metadata, and the 401/403 challenges that point clients at it.
 */

import type { AuthInfo } from "../connection.js";
import { httpError, SERVER_ERROR } from "../http/answers.js";
import type { ErrorStatus } from "../http/options.js";
import { type Answer, headerOf, toResponse, withHeaders } from "../http/reply.js";
import { readBody } from "../http/request.js";
import { isScopeToken } from "../registry.js";
import type { McpServer } from "../server.js";

/** Thrown by a `verifyToken` hook for a token it refuses; its message becomes the challenge's `error_description`. */
export class InvalidTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidTokenError";
  }
}

/** Verifies an access token: its `AuthInfo`, or nothing (or a thrown {@link InvalidTokenError}) when it is refused. */
export type VerifyToken = (
  token: string,
  request: Request,
) => AuthInfo | undefined | Promise<AuthInfo | undefined>;

/** Options of {@link createResourceServer}. */
export interface ResourceServerOptions {
  /** The canonical URI of the MCP endpoint (`https://mcp.example.com/mcp`): the PRM `resource` and the audience tokens must name. Required. */
  resource: string;
  /** Issuer URLs of the authorization servers that issue tokens for this server (PRM `authorization_servers`). Required, at least one. */
  authorizationServers: readonly string[];
  /** Verifies each bearer token (`jwtVerifier(...)` for JWTs, your own for opaque tokens). Required. */
  verifyToken: VerifyToken;
  /** Scopes every request needs; a token without them gets 403 `insufficient_scope`. Default: none. */
  requiredScopes?: readonly string[];
  /** The PRM `scopes_supported`, kept minimal. Default: `requiredScopes` (omitted when empty). */
  scopesSupported?: readonly string[];
  /** More PRM fields (`resource_name`, `resource_documentation`, …). Default: none. */
  metadata?: { readonly [field: string]: unknown };
  /** Told when a token could not be checked for a reason other than the token (a key set that does not load, say); the client gets 503. Default: none. */
  onError?: (error: unknown) => void;
  /**
   * The server behind the handler: with it, the 403 for a token without `requiredScopes` also names the
   * scopes of the tool, prompt or resource the request asks for — one challenge for all it needs
   * (`createProtectedHandler` passes its own). Default: none (the challenge names `requiredScopes`).
   */
  server?: McpServer;
}

/** The RFC 9728 protected resource metadata document. */
export interface ProtectedResourceMetadata {
  /** The canonical resource URI. */
  resource: string;
  /** Issuers whose tokens this server accepts. */
  authorization_servers: string[];
  /** The scopes a client may ask for; absent when none were given. */
  scopes_supported?: string[];
  /** How a token may be sent: `["header"]` only. */
  bearer_methods_supported: string[];
  /** Fields from the `metadata` option. */
  [field: string]: unknown;
}

/** A resource server: the `authenticate` hook of `createHttpHandler`, and a wrapper that serves PRM and scope challenges. */
export interface ResourceServer {
  /** The canonical resource URI (lower-case scheme and host, no fragment, no trailing slash at the root). */
  readonly resource: string;
  /** Where the metadata is served (the path-inserted well-known URL); the challenges point here. */
  readonly metadataUrl: string;
  /** The metadata document. */
  readonly metadata: ProtectedResourceMetadata;
  /** The `authenticate` hook: the caller's `AuthInfo`, or the 400/401/403/503 to answer with. */
  authenticate(request: Request): Promise<AuthInfo | Response>;
  /** The `errorStatus` hook of `createHttpHandler`: an `insufficient_scope` refusal becomes a 403 with one challenge for every scope the operation needs. */
  errorStatus: ErrorStatus;
  /** Wraps the MCP handler: serves the metadata at both well-known paths, and lets a browser read the challenges. */
  wrap(handler: (request: Request) => Promise<Response>): (request: Request) => Promise<Response>;
}

const OFFLINE = "offline_access";
const WELL_KNOWN = "/.well-known/oauth-protected-resource";
// RFC 6750 §2.1 b64token
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The canonical form of a server URI: lower-case scheme and host, no fragment, no trailing slash at the root. */
export function canonicalResource(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new TypeError(`resource must be an absolute URL, got ${JSON.stringify(uri)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new TypeError(`resource must be an http(s) URL, got ${JSON.stringify(uri)}`);
  if (url.hash !== "" || uri.includes("#"))
    throw new TypeError(`resource must not have a fragment, got ${JSON.stringify(uri)}`);
  const path = url.pathname === "/" ? "" : url.pathname;
  return `${url.protocol}//${url.host}${path}${url.search}`;
}

function scopeList(scopes: readonly string[] | undefined, name: string): string[] {
  const out = [...new Set(scopes ?? [])];
  for (const s of out) {
    if (!isScopeToken(s)) throw new TypeError(`${name}: ${JSON.stringify(s)} is not a valid scope`);
    if (s === OFFLINE)
      throw new TypeError(
        `${name} must not hold ${OFFLINE}: it is for the client to ask for, never advertised`,
      );
  }
  return out;
}

/** An `error_description` as RFC 6750 lets it be quoted. */
function quotable(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, "'");
}

/** Creates a resource server; throws on a bad `resource`, no authorization server, or `offline_access` among the scopes. */
export function createResourceServer(options: ResourceServerOptions): ResourceServer {
  return resourceServer(options).server;
}

/** `wrap`, for a handler that answers with picomcp's own replies as well as with `Response`s. */
export type WrapAnswers = <A extends Answer>(
  handler: (request: Request) => Promise<A>,
) => (request: Request) => Promise<A | Response>;

/** Bytes of a refused request's body read to find what it asks for: its method and its name fit well within. */
const ASKED_BYTES = 64 * 1024;

/**
 * @internal — the resource server, and its `wrap` for handlers that answer without making a `Response`;
 * `maxBodyBytes` bounds the body read to find what a refused request asked for (with {@link ASKED_BYTES}).
 */
export function resourceServer(
  options: ResourceServerOptions,
  maxBodyBytes = 4 * 1024 * 1024,
): {
  server: ResourceServer;
  wrap: WrapAnswers;
} {
  const resource = canonicalResource(options.resource);
  const servers = [...(options.authorizationServers ?? [])];
  if (servers.length === 0) throw new TypeError("authorizationServers needs at least one issuer URL");
  for (const s of servers) canonicalResource(s);
  if (typeof options.verifyToken !== "function") throw new TypeError("verifyToken must be a function");
  const required = scopeList(options.requiredScopes, "requiredScopes");
  const supported = scopeList(options.scopesSupported ?? required, "scopesSupported");
  const url = new URL(resource);
  const path = url.pathname === "/" ? "" : url.pathname;
  const metadataPaths = new Set([WELL_KNOWN, `${WELL_KNOWN}${path}`]);
  const metadataUrl = `${url.origin}${WELL_KNOWN}${path}`;
  // scopes_supported comes from its own option only, where offline_access is refused
  const { scopes_supported: _ignored, ...extra } = options.metadata ?? {};
  const metadata: ProtectedResourceMetadata = {
    ...extra,
    resource,
    authorization_servers: servers,
    bearer_methods_supported: ["header"],
  };
  if (supported.length) metadata.scopes_supported = supported;
  const body = JSON.stringify(metadata);

  /** One `WWW-Authenticate` challenge; the scopes never include `offline_access`. */
  const challengeHeader = (error: string | undefined, description: string, scopes: readonly string[]) => {
    const parts: string[] = [];
    if (error) parts.push(`error="${error}"`, `error_description="${quotable(description)}"`);
    parts.push(`resource_metadata="${metadataUrl}"`);
    const scope = scopes.filter((s) => s !== OFFLINE);
    if (scope.length) parts.push(`scope="${scope.join(" ")}"`);
    return `Bearer ${parts.join(", ")}`;
  };
  const challenge = (
    status: number,
    error: string | undefined,
    description: string,
    scopes: readonly string[],
  ): Response =>
    toResponse(
      httpError(status, SERVER_ERROR, description, undefined, {
        "www-authenticate": challengeHeader(error, description, scopes),
      }),
    );
  const entryScopes = required.length ? required : supported;

  /** The scopes to ask for: what the operation needs, plus what the token holds that belongs here. */
  const stepUp = (granted: readonly string[], needed: readonly string[]): string[] => {
    const relevant = supported.length ? granted.filter((s) => supported.includes(s)) : granted;
    return [...new Set([...relevant, ...required, ...needed])];
  };

  // what each request's token was verified as, for the step-up challenge of a refused answer
  const verified = new WeakMap<Request, AuthInfo>();

  /**
   * The scopes of what a request refused for the server's own scopes asks for: its body is read here
   * (the refusal is its answer, so nothing else reads it), and what cannot be read asks for none. At
   * most {@link ASKED_BYTES} are read: no caller's share counts them yet (authentication comes first),
   * so a stalled body holds no more than that; a longer one asks for the server's scopes alone.
   */
  const askedFor = async (request: Request): Promise<readonly string[]> => {
    const server = options.server;
    if (server === undefined || request.method !== "POST") return [];
    try {
      const body = await readBody(request, Math.min(maxBodyBytes, ASKED_BYTES));
      return body.ok ? server.scopesFor(JSON.parse(body.text)) : [];
    } catch {
      return [];
    }
  };

  const authenticate = async (request: Request): Promise<AuthInfo | Response> => {
    // parsed only when there is a query at all: a request's URL has no fragment, so "?" starts it
    const url = request.url;
    if (url.includes("?") && new URL(url).searchParams.has("access_token")) {
      return challenge(
        400,
        "invalid_request",
        "Bad Request: send the token in the Authorization header, never in the URL",
        entryScopes,
      );
    }
    const header = request.headers.get("authorization");
    if (header === null || !/^bearer(\s|$)/i.test(header)) {
      return challenge(401, undefined, "Unauthorized: a bearer token is required", entryScopes);
    }
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) {
      return challenge(
        400,
        "invalid_request",
        "Bad Request: the Authorization header is not one bearer token",
        entryScopes,
      );
    }
    let info: AuthInfo | undefined;
    try {
      info = await options.verifyToken(token, request);
    } catch (error) {
      if (error instanceof InvalidTokenError)
        return challenge(401, "invalid_token", `Unauthorized: ${error.message}`, entryScopes);
      try {
        options.onError?.(error);
      } catch {
        // a failing hook must not turn a 503 into a 500
      }
      return toResponse(
        httpError(
          503,
          SERVER_ERROR,
          "Service Unavailable: the access token could not be checked",
          undefined,
          {
            "retry-after": "5",
          },
        ),
      );
    }
    if (!info)
      return challenge(401, "invalid_token", "Unauthorized: the access token is not valid", entryScopes);
    // a list of strings, or none: a string's substrings must never pass for scopes
    const granted = Array.isArray(info.scopes) ? info.scopes.filter((s) => typeof s === "string") : [];
    if (required.some((s) => !granted.includes(s))) {
      // SEP-2350: one challenge for everything the request needs, not the server's scopes first and
      // the operation's on the retry
      const needed = await askedFor(request);
      const missing = [...new Set([...required, ...needed])].filter((s) => !granted.includes(s));
      const who = missing.some((s) => !required.includes(s)) ? "this request" : "this server";
      return challenge(
        403,
        "insufficient_scope",
        `Forbidden: ${who} needs the scope${missing.length > 1 ? "s" : ""} ${missing.join(" ")}`,
        stepUp(granted, needed),
      );
    }
    verified.set(request, info);
    return info;
  };

  const errorStatus: ErrorStatus = (error, request) => {
    const data = error.data as { error?: unknown; scopes?: unknown } | undefined;
    const scopes = data?.scopes;
    if (data?.error !== "insufficient_scope" || !Array.isArray(scopes)) return undefined;
    if (!scopes.every((x): x is string => typeof x === "string" && isScopeToken(x))) return undefined;
    const held = verified.get(request)?.scopes;
    const granted = Array.isArray(held) ? held : [];
    const www = challengeHeader("insufficient_scope", error.message, stepUp(granted, scopes));
    return { status: 403, headers: { "www-authenticate": www } };
  };

  const wrap: WrapAnswers = (handler) => async (request: Request) => {
    // a URL's path is part of its text as it is (never decoded): no "well-known" there, no parse
    const url = request.url;
    if (url.includes("well-known") && metadataPaths.has(new URL(url).pathname))
      return serveMetadata(request, body);
    const response = await handler(request);
    return headerOf(response, "www-authenticate") !== null ? exposeChallenge(response) : response;
  };

  return { server: { resource, metadataUrl, metadata, authenticate, errorStatus, wrap }, wrap };
}

/** A browser client must read the challenge to find the metadata: expose it wherever CORS is on. */
function exposeChallenge<A extends Answer>(response: A): A {
  if (headerOf(response, "access-control-allow-origin") === null) return response;
  const expose = headerOf(response, "access-control-expose-headers");
  if (expose?.split(",").some((h) => h.trim().toLowerCase() === "www-authenticate")) return response;
  const value = expose ? `${expose}, www-authenticate` : "www-authenticate";
  return withHeaders(response, { "access-control-expose-headers": value });
}

function serveMetadata(request: Request, body: string): Response {
  const cors = { "access-control-allow-origin": "*" };
  if (request.method === "OPTIONS") {
    return new Response(null, {
      status: 204,
      headers: {
        ...cors,
        allow: "GET, OPTIONS",
        "access-control-allow-methods": "GET",
        "access-control-max-age": "86400",
      },
    });
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    return toResponse(
      httpError(405, SERVER_ERROR, "Method not allowed: use GET", undefined, { allow: "GET, OPTIONS" }),
    );
  }
  return new Response(request.method === "HEAD" ? null : body, {
    status: 200,
    headers: { ...cors, "content-type": "application/json", "cache-control": "public, max-age=3600" },
  });
}
