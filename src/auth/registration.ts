/**
 * RFC 7591 dynamic client registration, with limits per address before the global one, and the
 * RFC 7009 revocation endpoint.
 */

import { ownClaims } from "./access-tokens.js";
import { type AsContext, grantScopes, overLimit } from "./as-context.js";
import { hasControl } from "./client-metadata-document.js";
import { digest, randomToken, sameText } from "./keys.js";
import { AuthStoreFullError } from "./memory-store.js";
import { json, notAllowed, oauthError, param, preflight, readJson } from "./oauth-http.js";
import type { ClientRecord } from "./store.js";
import { clientPost, revokeGrant } from "./token-endpoint.js";

const MAX_REDIRECTS = 10;
const MAX_URI = 2000;
const AUTH_METHODS = ["none", "client_secret_post", "client_secret_basic"] as const;
const GRANTS = ["authorization_code", "refresh_token"];
const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

const badMetadata = (why: string) => oauthError(400, "invalid_client_metadata", why);

/** A redirect URI a client may register: absolute, no fragment; https, http on loopback, or an app's own scheme. */
function redirectProblem(uri: unknown): string | undefined {
  if (typeof uri !== "string" || uri.length > MAX_URI)
    return "each redirect URI must be a string of at most 2000 characters";
  if (hasControl(uri)) return "a redirect URI must not hold control or text-direction characters";
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${JSON.stringify(uri)} is not an absolute URI`;
  }
  if (uri.includes("#")) return `${JSON.stringify(uri)} has a fragment`;
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:")
    return LOOPBACK.has(url.hostname) ? undefined : `${uri} must use https (http is for loopback only)`;
  if (/^(javascript|data|file|vbscript|blob|about):$/i.test(url.protocol))
    return `${uri} has a scheme that cannot be a redirect`;
  // a native app's private-use scheme (RFC 8252 §7.1): reverse domain name, with a dot
  return url.protocol.includes(".")
    ? undefined
    : `${uri} must use https, loopback http, or an app's reverse-domain scheme`;
}

function httpUrl(v: unknown): boolean {
  if (typeof v !== "string" || v.length > MAX_URI || hasControl(v)) return false;
  try {
    const u = new URL(v);
    return u.protocol === "https:" || u.protocol === "http:";
  } catch {
    return false;
  }
}

/** `POST /register`: a new client, limited per address (`info.address`) and in all. */
export async function register(
  ctx: AsContext,
  request: Request,
  address: string | undefined,
): Promise<Response> {
  if (request.method === "OPTIONS") return preflight("POST");
  if (request.method !== "POST") return notAllowed("POST");
  const limits = ctx.registration;
  if (limits === false) return oauthError(404, "invalid_request", "Registration is not open here");
  const busy = (who: string) =>
    oauthError(429, "temporarily_unavailable", `Too many registrations ${who}; try again later`, {
      "retry-after": String(Math.ceil(limits.windowMs / 1000)),
    });
  // per address first (skipped for a caller whose address is unknown: one shared bucket would let one
  // caller shut out all the others), then in all
  if (await overLimit(ctx, "register", address, limits)) return busy("now");
  const doc = await readJson(request, "invalid_client_metadata");
  if (doc instanceof Response) return doc;
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0)
    return oauthError(400, "invalid_redirect_uri", "redirect_uris is required");
  if (uris.length > MAX_REDIRECTS) return oauthError(400, "invalid_redirect_uri", "At most 10 redirect URIs");
  for (const u of uris) {
    const problem = redirectProblem(u);
    if (problem) return oauthError(400, "invalid_redirect_uri", problem);
  }
  const method = doc.token_endpoint_auth_method ?? "client_secret_basic";
  if (!AUTH_METHODS.includes(method as (typeof AUTH_METHODS)[number]))
    return badMetadata(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(", ")}`);
  const grants = doc.grant_types ?? GRANTS;
  if (
    !Array.isArray(grants) ||
    grants.some((g) => !GRANTS.includes(g)) ||
    !grants.includes("authorization_code")
  )
    return badMetadata(
      "grant_types may hold authorization_code and refresh_token only, and must hold authorization_code",
    );
  const responses = doc.response_types ?? ["code"];
  if (!Array.isArray(responses) || responses.some((r) => r !== "code"))
    return badMetadata('response_types must be ["code"]');
  for (const field of ["client_name", "scope", "software_id", "software_version"] as const) {
    const v = doc[field];
    if (v !== undefined && (typeof v !== "string" || v.length > 200))
      return badMetadata(`${field} must be a short string`);
    // as a metadata document's: nothing that reads otherwise on the consent page
    if (typeof v === "string" && hasControl(v))
      return badMetadata(`${field} must not hold control or text-direction characters`);
  }
  for (const field of ["client_uri", "logo_uri", "tos_uri", "policy_uri"] as const)
    if (doc[field] !== undefined && !httpUrl(doc[field]))
      return badMetadata(`${field} must be an http(s) URL`);
  const client: ClientRecord = {
    client_id: randomToken(18),
    kind: "registered",
    redirect_uris: uris as string[],
    token_endpoint_auth_method: method as ClientRecord["token_endpoint_auth_method"],
    grant_types: grants as string[],
    response_types: responses,
    client_id_issued_at: Math.floor(Date.now() / 1000),
  };
  for (const field of [
    "client_name",
    "client_uri",
    "logo_uri",
    "tos_uri",
    "policy_uri",
    "software_id",
    "software_version",
  ])
    if (doc[field] !== undefined) client[field] = doc[field];
  if (typeof doc.scope === "string") {
    const scopes = grantScopes(ctx, client, doc.scope);
    if (typeof scopes === "string") return badMetadata(scopes);
    client.scope = scopes.join(" ");
  }
  let secret: string | undefined;
  if (method !== "none") {
    secret = randomToken(32);
    client.client_secret_hash = await digest(secret);
  }
  try {
    // kept a day until its first code is redeemed (then as long as it is used): see `unredeemedTtlMs`
    await ctx.store.putClient(client, limits.unredeemedTtlMs);
  } catch (error) {
    if (!(error instanceof AuthStoreFullError)) throw error;
    return oauthError(503, "temporarily_unavailable", "No more clients can be registered now", {
      "retry-after": "3600",
    });
  }
  const { kind: _kind, client_secret_hash: _hash, ...shown } = client;
  return json(
    secret === undefined ? shown : { ...shown, client_secret: secret, client_secret_expires_at: 0 },
    201,
  );
}

/** `POST /revoke` (RFC 7009): a refresh or access token of the client's ends its grant; an unknown token is no error. */
export async function revocation(
  ctx: AsContext,
  request: Request,
  address: string | undefined,
): Promise<Response> {
  const post = await clientPost(ctx, request, address);
  if (post instanceof Response) return post;
  const { form, client } = post;
  const token = param(form, "token");
  if (token === undefined) return oauthError(400, "invalid_request", "The request has no token");
  const grantId = await grantOf(ctx, token);
  if (grantId !== undefined) {
    const grant = await ctx.store.getGrant(grantId);
    // another client's token is not this client's to end (RFC 7009 §2.1): answered the same, as unknown
    if (grant && grant.clientId === client.client_id) await revokeGrant(ctx, grant.id);
  }
  return json({}, 200);
}

/** The grant a token belongs to: a refresh token (current or rotated out), or one of this server's access tokens. */
async function grantOf(ctx: AsContext, token: string): Promise<string | undefined> {
  if (token.length > 8192) return undefined;
  const dot = token.indexOf(".");
  if (dot > 0 && token.indexOf(".", dot + 1) < 0) {
    const grant = await ctx.store.getGrant(token.slice(0, dot));
    if (!grant) return undefined;
    const hash = await digest(token);
    const known = sameText(hash, grant.refreshHash) || grant.usedRefreshHashes.some((h) => sameText(h, hash));
    return known ? grant.id : undefined;
  }
  try {
    const claims = await ownClaims({ keys: ctx.keys, issuer: ctx.issuer, audiences: ctx.resources }, token);
    return claims.gid as string;
  } catch {
    return undefined;
  }
}
