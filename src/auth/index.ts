/**
 * `picomcp/auth`: the Streamable HTTP handler as an OAuth 2.1 resource server. The JWT verifier
 * needs the optional peer dependency `jose`; everything else is web standards.
 */
import { ProxyTrust } from "../http/client-address.js";
import { createHttpHandler } from "../http/index.js";
import type { ErrorStatus, HttpHandler, HttpHandlerOptions } from "../http/options.js";
import { ANSWER, type Answer, type Answering } from "../http/reply.js";
import { header, normalPeer, peerOf } from "../http/request.js";
import type { McpServer } from "../server.js";
import { type AuthorizationServer, pathOf, routesOf } from "./authorization-server.js";
import {
  canonicalResource,
  type ResourceServer,
  type ResourceServerOptions,
  resourceServer,
} from "./resource-server.js";

export type {
  AuthenticateHook,
  AuthorizationLimits,
  AuthorizationServer,
  AuthorizationServerMetadata,
  AuthorizationServerOptions,
  ClientMetadataFetchLimits,
  RegistrationLimits,
  SigningAlgorithm,
} from "./authorization-server.js";
export { createAuthorizationServer } from "./authorization-server.js";
export type {
  AddressKind,
  ClientMetadata,
  ClientMetadataOptions,
  HostLookup,
  ResolvedAddress,
} from "./client-metadata.js";
export { ClientMetadataError, fetchClientMetadata } from "./client-metadata.js";
export type { JwtAlgorithm, JwtVerifierOptions } from "./jwt.js";
export { authInfo, jwtVerifier } from "./jwt.js";
export type { MemoryAuthStoreOptions } from "./memory-store.js";
export { AuthStoreFullError, MemoryAuthStore } from "./memory-store.js";
export type {
  ProtectedResourceMetadata,
  ResourceServer,
  ResourceServerOptions,
  VerifyToken,
} from "./resource-server.js";
export { canonicalResource, createResourceServer, InvalidTokenError } from "./resource-server.js";
export type { SignIn, SignInCallback, SignInFinished, SignInStart } from "./sign-in.js";
export { SignInError } from "./sign-in.js";
export type {
  AuthStore,
  ClientRecord,
  CodeRecord,
  GrantRecord,
  Identity,
  PendingAuthorization,
  StoredKey,
  StoredKeys,
  TakenCode,
  UpstreamTokens,
} from "./store.js";
export { upstreamToken } from "./upstream-token.js";

/** Options of {@link createProtectedHandler}: the resource server's, and every option of `createHttpHandler` but `authenticate`. */
export interface ProtectedHandlerOptions
  extends Omit<HttpHandlerOptions, "authenticate">,
    Omit<ResourceServerOptions, "server" | "authorizationServers" | "verifyToken"> {
  /** Issuer URLs of the authorization servers (PRM `authorization_servers`). Required, unless `authorizationServer` is given (then its issuer). */
  authorizationServers?: readonly string[];
  /** Verifies each bearer token. Required, unless `authorizationServer` is given (then its own tokens for `resource`). */
  verifyToken?: ResourceServerOptions["verifyToken"];
  /** An authorization server of `createAuthorizationServer` to serve from the same handler (its routes first); `resource` must be one of its resources. */
  authorizationServer?: AuthorizationServer;
}

/** What {@link createProtectedHandler} returns: an `HttpHandler` that also serves the metadata, and its resource server. */
export interface ProtectedHandler extends HttpHandler {
  /** The resource server behind it (its `metadataUrl`, `metadata`, `resource`). */
  readonly resourceServer: ResourceServer;
}

/**
 * Serves `server` over Streamable HTTP as an OAuth 2.1 resource server: every request needs a valid
 * bearer token; the protected resource metadata is served at both well-known paths.
 * @example
 * const handle = createProtectedHandler(server, {
 *   resource: "https://mcp.example.com/mcp",
 *   authorizationServers: ["https://auth.example.com"],
 *   verifyToken: jwtVerifier({
 *     issuer: "https://auth.example.com",
 *     audience: "https://mcp.example.com/mcp",
 *     jwks: "https://auth.example.com/jwks",
 *   }),
 * });
 */
export function createProtectedHandler(
  server: McpServer,
  options: ProtectedHandlerOptions,
): ProtectedHandler {
  const {
    resource,
    authorizationServer: as,
    requiredScopes,
    scopesSupported,
    metadata,
    onError,
    ...rest
  } = options;
  const { authorizationServers, verifyToken, ...http } = rest;
  if (as && !as.resources.includes(canonicalResource(resource)))
    throw new TypeError(`resource ${resource} is not one of the authorizationServer's resources`);
  const { server: rs, wrap: wrapRs } = resourceServer(
    {
      resource,
      authorizationServers: authorizationServers ?? (as ? [as.issuer] : []),
      verifyToken: verifyToken ?? (as ? as.verifierFor(resource) : (undefined as never)),
      server,
      ...(requiredScopes ? { requiredScopes } : {}),
      ...(scopesSupported ? { scopesSupported } : {}),
      ...(metadata ? { metadata } : {}),
      ...(onError ? { onError } : {}),
    },
    http.maxBodyBytes,
  );
  const own = http.errorStatus;
  const errorStatus: ErrorStatus = own
    ? (error, request) => rs.errorStatus(error, request) ?? own(error, request)
    : rs.errorStatus;
  const inner = createHttpHandler(server, {
    ...http,
    authenticate: rs.authenticate,
    errorStatus,
  }) as HttpHandler & Answering;
  const wrap = as ? serving(as, http.trustProxy, wrapRs) : wrapRs;
  const handler = wrap(inner) as ProtectedHandler & Answering;
  // the Node bridge gets the same wrapper around the answers it writes without a Response
  const answer = inner[ANSWER];
  if (answer) handler[ANSWER] = wrap(async (request) => answer(request));
  handler.closeSseStream = (target) => inner.closeSseStream(target);
  handler.closeStandaloneStream = (id) => inner.closeStandaloneStream(id);
  handler.close = () => inner.close();
  Object.defineProperty(handler, "sessionCount", { get: () => inner.sessionCount });
  Object.defineProperty(handler, "resourceServer", { value: rs });
  return handler;
}

/** `wrap` with the authorization server's routes answered first (its registration limits told the caller's address). */
function serving(
  as: AuthorizationServer,
  trustProxy: HttpHandlerOptions["trustProxy"],
  wrap: <A extends Answer>(h: (r: Request) => Promise<A>) => (r: Request) => Promise<A | Response>,
) {
  const paths = routesOf.get(as);
  if (!paths) throw new TypeError("authorizationServer must be made by createAuthorizationServer");
  const trust = trustProxy === undefined ? undefined : new ProxyTrust(trustProxy);
  const address = (request: Request) =>
    trust ? trust.client(peerOf(request)?.address, header(request, trust.header)) : normalPeer(request);
  return <A extends Answer>(h: (r: Request) => Promise<A>) => {
    const inner = wrap(h);
    return async (request: Request): Promise<A | Response> => {
      if (!paths.has(pathOf(request.url))) return inner(request);
      return (await as.handle(request, { address: address(request) })) ?? inner(request);
    };
  };
}

export type { UpstreamOptions } from "./upstream.js";
export type { GitHubOptions } from "./upstream-github.js";
export { github } from "./upstream-github.js";
export type { GoogleOptions, OidcOptions } from "./upstream-oidc.js";
export { google, oidc } from "./upstream-oidc.js";
