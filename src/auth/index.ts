/**
 * `picomcp/auth`: the Streamable HTTP handler as an OAuth 2.1 resource server. The JWT verifier
 * needs the optional peer dependency `jose`; everything else is web standards.
 */
import { createHttpHandler } from "../http/index.js";
import type { ErrorStatus, HttpHandler, HttpHandlerOptions } from "../http/options.js";
import { ANSWER, type Answering } from "../http/reply.js";
import type { McpServer } from "../server.js";
import { type ResourceServer, type ResourceServerOptions, resourceServer } from "./resource-server.js";

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
export type { SignIn, SignInCallback, SignInStart } from "./sign-in.js";
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

/** Options of {@link createProtectedHandler}: the resource server's, and every option of `createHttpHandler` but `authenticate`. */
export interface ProtectedHandlerOptions
  extends Omit<HttpHandlerOptions, "authenticate">,
    Omit<ResourceServerOptions, "server"> {}

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
    authorizationServers,
    verifyToken,
    requiredScopes,
    scopesSupported,
    metadata,
    onError,
    ...http
  } = options;
  const { server: rs, wrap } = resourceServer(
    {
      resource,
      authorizationServers,
      verifyToken,
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
  const handler = wrap(inner) as ProtectedHandler & Answering;
  // the Node bridge gets the same wrapper around the answers it writes without a Response
  const answer = inner[ANSWER];
  if (answer) handler[ANSWER] = wrap(answer);
  handler.closeSseStream = (target) => inner.closeSseStream(target);
  handler.closeStandaloneStream = (id) => inner.closeStandaloneStream(id);
  handler.close = () => inner.close();
  Object.defineProperty(handler, "sessionCount", { get: () => inner.sessionCount });
  Object.defineProperty(handler, "resourceServer", { value: rs });
  return handler;
}
