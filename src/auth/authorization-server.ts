/**
 * The OAuth 2.1 authorization server of `picomcp/auth`: its options, its routes (RFC 8414 metadata,
 * JWKS, authorize and consent, token, registration, revocation, the sign-in's callback) answered by
 * one web-standard `handle`, and the methods a resource server and an operator use.
 */
import { normalPeer } from "../http/request.js";
import { GrantLiveness, ownVerifier } from "./access-tokens.js";
import type {
  AsContext,
  AuthenticateHook,
  AuthorizationLimits,
  ClientMetadataFetchLimits,
  RegistrationLimits,
  Tiers,
} from "./as-context.js";
import { authorize, consent, signInCallback } from "./authorize.js";
import type { ClientMetadataOptions } from "./client-metadata.js";
import { KeyRing, type SigningAlgorithm } from "./keys.js";
import { AuthStoreFullError, MemoryAuthStore } from "./memory-store.js";
import { errorPage, json, notAllowed, oauthError, preflight } from "./oauth-http.js";
import { register, revocation } from "./registration.js";
import { canonicalResource, type VerifyToken } from "./resource-server.js";
import type { SignIn } from "./sign-in.js";
import type { AuthStore } from "./store.js";
import { revokeGrant, token } from "./token-endpoint.js";
import { upstreamOf } from "./upstream-token.js";

export type {
  AuthenticateHook,
  AuthorizationLimits,
  ClientMetadataFetchLimits,
  RegistrationLimits,
} from "./as-context.js";
export type { SigningAlgorithm } from "./keys.js";

/** Options of {@link createAuthorizationServer}. */
export interface AuthorizationServerOptions {
  /** The issuer URL (`https://mcp.example.com`, or with a path): every route is under it; http only on a loopback host. Required. */
  issuer: string;
  /** The canonical URIs of the resources (MCP endpoints) it issues tokens for; a client must name one (RFC 8707). Required, at least one. */
  resources: readonly string[];
  /** A team's own sign-in, run before the consent page (exactly one of this and `signIn`). */
  authenticate?: AuthenticateHook;
  /** A federated sign-in (GitHub, Google, any OIDC issuer), run after the consent page (exactly one of this and `authenticate`). */
  signIn?: SignIn;
  /** Where clients, authorizations, codes, grants and keys are kept. Default: a `MemoryAuthStore` (one process). */
  store?: AuthStore;
  /** The scopes a client may ask for (`scopes_supported`); one that asks for none gets them all. Default: any scope asked, none when none is. */
  scopes?: readonly string[];
  /** Seconds an access token lives. Default: 3600. */
  accessTokenTtl?: number;
  /** Seconds a grant (its refresh token) lives unused; each refresh starts it again. Default: 2592000 (30 days). */
  refreshTokenTtl?: number;
  /** Seconds a code may wait for its redemption. Default: 60. */
  codeTtl?: number;
  /** Seconds the person has to consent and sign in. Default: 600. */
  authorizationTtl?: number;
  /** Client ID Metadata Documents: `false` to refuse them, or options of their fetcher. Default: on. */
  clientMetadataDocuments?: boolean | ClientMetadataOptions;
  /** How many Client ID Metadata Documents callers may cause to be fetched: per address, per network (IPv4 /24, IPv6 /48) and in all, per window. Default: 30 per address, 120 per network, 1000 in all, per ten minutes. */
  clientMetadataFetches?: ClientMetadataFetchLimits;
  /** RFC 7591 dynamic registration: `false` to close it, or its limits. Default: on, 10 per address, 40 per network (IPv4 /24, IPv6 /48) and 1000 in all per hour. */
  registration?: boolean | RegistrationLimits;
  /** How many sign-ins (`/authorize` requests) one address and all together may start per window, counted through `store.hit` before anything is kept. Default: 60 per address, 240 per network (IPv4 /24, IPv6 /48), 10000 in all, per ten minutes. */
  authorizations?: AuthorizationLimits;
  /** The algorithm of new signing keys. Default: "ES256". */
  algorithm?: SigningAlgorithm;
  /** Milliseconds a grant seen live is believed before the store is asked again: how long a revocation made on another replica takes to stop its access tokens. Default: 5000. */
  revocationDelayMs?: number;
  /** Milliseconds signing keys read from the store are used before they are read again (how soon a rotation on another replica signs here). Default: 60000. */
  keysCacheMs?: number;
  /** Told of an unexpected failure (a store that fails, a hook that throws); the caller gets a 500 or 503. Default: `console.error`. */
  onError?: (error: unknown) => void;
}

/** An OAuth 2.1 authorization server for MCP clients (see {@link createAuthorizationServer}). */
export interface AuthorizationServer {
  /** The issuer URL, canonical: the `iss` of its tokens and responses. */
  readonly issuer: string;
  /** The RFC 8414 metadata document. */
  readonly metadata: AuthorizationServerMetadata;
  /** The canonical resources it issues tokens for. */
  readonly resources: readonly string[];
  /**
   * Answers a request to one of its routes; undefined for any other path. Never throws. `info.address`
   * is the caller's, for the per-address limits of sign-ins and registrations (default: the peer the Node bridge or `withPeer` tells).
   */
  handle(request: Request, info?: { address?: string | undefined }): Promise<Response | undefined>;
  /** Verifies its own access tokens locally (its keys, any of its resources, the grant still live). */
  readonly verifyToken: VerifyToken;
  /** A `verifyToken` that accepts only tokens for `resource` (one of its resources). */
  verifierFor(resource: string): VerifyToken;
  /** Revokes a grant, or every grant of a subject: refresh tokens stop at once, access tokens within `revocationDelayMs`. */
  revoke(what: { grant: string } | { subject: string }): Promise<void>;
  /** Makes a new signing key that signs from now on; the old one verifies until its tokens have expired. Returns the new `kid`. */
  rotateKeys(): Promise<string>;
  /** Closes the store it made itself (not one it was given). */
  close(): Promise<void>;
}

/** The authorization server metadata (RFC 8414). */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  registration_endpoint?: string;
  revocation_endpoint: string;
  scopes_supported?: string[];
  response_types_supported: string[];
  grant_types_supported: string[];
  code_challenge_methods_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  authorization_response_iss_parameter_supported: boolean;
  client_id_metadata_document_supported: boolean;
  [field: string]: unknown;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

function seconds(v: number | undefined, fallback: number, name: string): number {
  const n = v ?? fallback;
  if (!Number.isInteger(n) || n < 1)
    throw new RangeError(`${name} must be a positive whole number of seconds`);
  return n;
}

/** A limit option checked: a positive whole number, else thrown naming the option. */
function limit(v: number | undefined, fallback: number, name: string): number {
  const n = v ?? fallback;
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive whole number`);
  return n;
}

/** Limits as given, checked, with their defaults: per network 4 × per address unless said. */
function tiers(
  given: { perAddress?: number; perNetwork?: number; total?: number; windowMs?: number },
  perAddress: number,
  total: number,
  windowMs: number,
  name: string,
): Tiers {
  const address = limit(given.perAddress, perAddress, `${name}.perAddress`);
  return {
    perAddress: address,
    perNetwork: limit(given.perNetwork, 4 * address, `${name}.perNetwork`),
    total: limit(given.total, total, `${name}.total`),
    windowMs: limit(given.windowMs, windowMs, `${name}.windowMs`),
  };
}

function checkedIssuer(issuer: string): URL {
  let url: URL;
  try {
    url = new URL(canonicalResource(issuer));
  } catch {
    throw new TypeError(`issuer must be an absolute http(s) URL, got ${JSON.stringify(issuer)}`);
  }
  if (url.search !== "") throw new TypeError("issuer must have no query");
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname))
    throw new TypeError("issuer must use https (http is for a loopback host only)");
  return url;
}

/**
 * Creates an OAuth 2.1 authorization server for MCP clients: PKCE S256, RFC 8707 resources, RFC 8414
 * metadata, refresh-token rotation, Client ID Metadata Documents and RFC 7591 registration. Serve it
 * with `createProtectedHandler(server, { authorizationServer })`, or call `handle` from your own router.
 * @example
 * const authorizationServer = createAuthorizationServer({
 *   issuer: "https://mcp.example.com",
 *   resources: ["https://mcp.example.com/mcp"],
 *   authenticate: (request) => sessionOf(request), // your own sign-in: an Identity, or undefined
 * });
 */
export function createAuthorizationServer(options: AuthorizationServerOptions): AuthorizationServer {
  const url = checkedIssuer(options.issuer);
  const issuer = url.href.replace(/\/$/, "");
  const basePath = url.pathname.replace(/\/$/, "");
  const resources = [...new Set((options.resources ?? []).map(canonicalResource))];
  if (resources.length === 0) throw new TypeError("resources needs at least one resource URI");
  if ((options.authenticate === undefined) === (options.signIn === undefined))
    throw new TypeError("Give exactly one of authenticate and signIn");
  if (options.signIn?.callbackPath !== undefined && !/^\/[^?#]*$/.test(options.signIn.callbackPath))
    throw new TypeError("signIn.callbackPath must be a path starting with /");
  const own = options.store === undefined;
  const store = options.store ?? new MemoryAuthStore();
  const access = seconds(options.accessTokenTtl, 3600, "accessTokenTtl");
  const keysCacheMs = options.keysCacheMs ?? 60_000;
  const algorithm = options.algorithm ?? "ES256";
  // a retired key verifies as long as a token it signed can live: signed up to keysCacheMs after its rotation
  const keys = new KeyRing(store, algorithm, (access + 60) * 1000 + keysCacheMs, keysCacheMs);
  const reg = options.registration ?? true;
  const cimd = options.clientMetadataDocuments ?? true;
  const report =
    options.onError ??
    ((error: unknown) => console.error("picomcp/auth: the authorization server failed:", error));
  const ctx: AsContext = {
    issuer,
    base: issuer,
    basePath,
    origin: url.origin,
    secure: url.protocol === "https:",
    resources,
    scopes: options.scopes ? [...options.scopes] : undefined,
    store,
    keys,
    signIn: options.signIn,
    authenticate: options.authenticate,
    ttl: {
      access,
      refresh: seconds(options.refreshTokenTtl, 30 * 86400, "refreshTokenTtl") * 1000,
      code: seconds(options.codeTtl, 60, "codeTtl") * 1000,
      pending: seconds(options.authorizationTtl, 600, "authorizationTtl") * 1000,
    },
    cimd: cimd === false ? false : cimd === true ? {} : cimd,
    registration:
      reg === false
        ? false
        : {
            ...tiers(reg === true ? {} : reg, 10, 1000, 3_600_000, "registration"),
            unredeemedTtlMs: limit(
              reg === true ? undefined : reg.unredeemedTtlMs,
              86_400_000,
              "registration.unredeemedTtlMs",
            ),
          },
    cimdFetches: tiers(options.clientMetadataFetches ?? {}, 30, 1000, 600_000, "clientMetadataFetches"),
    authorizations: tiers(options.authorizations ?? {}, 60, 10_000, 600_000, "authorizations"),
    liveness: new GrantLiveness(store, options.revocationDelayMs ?? 5000),
    report: (error) => {
      try {
        report(error);
      } catch {
        // a failing hook changes no answer
      }
    },
  };
  const metadata: AuthorizationServerMetadata = {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    revocation_endpoint: `${issuer}/revoke`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
    revocation_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: cimd !== false,
  };
  if (reg !== false) metadata.registration_endpoint = `${issuer}/register`;
  if (ctx.scopes) metadata.scopes_supported = [...ctx.scopes];
  const metadataBody = JSON.stringify(metadata);

  type Route = (request: Request, address: string | undefined) => Promise<Response>;
  const routes = new Map<string, Route>([
    [`${basePath}/authorize`, (r, a) => authorize(ctx, r, a)],
    [`${basePath}/consent`, (r) => consent(ctx, r)],
    [`${basePath}/token`, (r, a) => token(ctx, r, a)],
    [`${basePath}/register`, (r, a) => register(ctx, r, a)],
    [`${basePath}/revoke`, (r, a) => revocation(ctx, r, a)],
    [`${basePath}/jwks`, (r) => jwks(r)],
  ]);
  const serveMetadata: Route = async (r) =>
    readOnly(r) ?? json(JSON.parse(metadataBody), 200, "public, max-age=3600");
  for (const path of [
    `/.well-known/oauth-authorization-server${basePath}`,
    `/.well-known/openid-configuration${basePath}`,
    `${basePath}/.well-known/openid-configuration`,
  ])
    routes.set(path, serveMetadata);
  const callback = options.signIn?.callbackPath;
  if (callback !== undefined) routes.set(`${basePath}${callback}`, (r) => signInCallback(ctx, r));

  async function jwks(request: Request): Promise<Response> {
    return readOnly(request) ?? json(await keys.jwks(), 200, "public, max-age=300");
  }

  const verifierFor = (resource: string): VerifyToken => {
    const r = canonicalResource(resource);
    if (!resources.includes(r))
      throw new TypeError(`${resource} is not one of the authorization server's resources`);
    return ownVerifier({
      keys,
      issuer,
      audiences: [r],
      liveness: ctx.liveness,
      upstream: (g) => upstreamOf(ctx, g),
    });
  };

  const browserRoutes = new Set([`${basePath}/authorize`, `${basePath}/consent`]);
  if (callback !== undefined) browserRoutes.add(`${basePath}${callback}`);

  const server: AuthorizationServer = {
    issuer,
    metadata,
    resources,
    async handle(request, info) {
      const path = pathOf(request.url);
      const route = routes.get(path);
      if (route === undefined) return undefined;
      try {
        return await route(request, info?.address ?? normalPeer(request));
      } catch (error) {
        if (error instanceof AuthStoreFullError) {
          const why = "The authorization server is full; try again later";
          return browserRoutes.has(path)
            ? errorPage(503, "temporarily_unavailable", why)
            : oauthError(503, "temporarily_unavailable", why, { "retry-after": "60" });
        }
        ctx.report(error);
        return browserRoutes.has(path)
          ? errorPage(500, "server_error", "The sign-in failed on the server; try again")
          : oauthError(500, "server_error", "The authorization server failed; try again");
      }
    },
    verifyToken: ownVerifier({
      keys,
      issuer,
      audiences: resources,
      liveness: ctx.liveness,
      upstream: (g) => upstreamOf(ctx, g),
    }),
    verifierFor,
    async revoke(what) {
      const ids = "grant" in what ? [what.grant] : await store.grantsOf(what.subject);
      for (const id of ids) await revokeGrant(ctx, id);
    },
    rotateKeys: () => keys.rotate(),
    async close() {
      if (own) await store.close?.();
    },
  };
  routesOf.set(server, new Set(routes.keys()));
  return server;
}

/** @internal — the paths each authorization server answers, for a handler that serves it beside others. */
export const routesOf = new WeakMap<AuthorizationServer, ReadonlySet<string>>();

/** The path of an absolute URL as a `Request` has it (normalized, percent-encoded), without parsing it whole. */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q < 0 ? url.slice(start) : url.slice(start, q);
}

/** The answer to anything but GET, HEAD or a preflight on a read-only route; undefined for a GET. */
function readOnly(request: Request): Response | undefined {
  if (request.method === "OPTIONS") return preflight("GET");
  if (request.method !== "GET" && request.method !== "HEAD") return notAllowed("GET");
  return undefined;
}
