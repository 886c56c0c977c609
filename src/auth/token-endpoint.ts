/**
 * The token endpoint: client authentication, the `authorization_code` grant (one-time code, PKCE
 * S256, exact redirect URI, the code's resource) and the `refresh_token` grant (rotation on every use,
 * a rotated-out token presented again revokes the grant).
 */
import { signAccessToken } from "./access-tokens.js";
import { type AsContext, FETCHES_BUSY, findClient, ourResource, UNCOUNTED } from "./as-context.js";
import { digest, randomToken, sameText } from "./keys.js";
import { AuthStoreFullError } from "./memory-store.js";
import { json, notAllowed, oauthError, param, preflight, readForm } from "./oauth-http.js";
import type { ClientRecord, CodeRecord, GrantRecord } from "./store.js";

/** A PKCE code verifier (RFC 7636 §4.1). */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** Rotated-out refresh token digests a grant remembers (to tell a replay). */
const USED_KEPT = 20;

/** Client credentials from `Authorization: Basic` (RFC 6749 §2.3.1: each part form-urlencoded). */
function basicCredentials(request: Request): { id: string; secret: string } | undefined | "bad" {
  const header = request.headers.get("authorization");
  if (header === null) return undefined;
  const m = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!m) return "bad";
  try {
    const text = atob(m[1]!);
    const colon = text.indexOf(":");
    if (colon < 0) return "bad";
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
    return { id: decode(text.slice(0, colon)), secret: decode(text.slice(colon + 1)) };
  } catch {
    return "bad";
  }
}

/** A client's POST to the token or revocation endpoint: its form and the client, authenticated; else the answer that refuses it. */
export async function clientPost(
  ctx: AsContext,
  request: Request,
  address: string | undefined,
): Promise<{ form: URLSearchParams; client: ClientRecord } | Response> {
  if (request.method === "OPTIONS") return preflight("POST");
  if (request.method !== "POST") return notAllowed("POST");
  const form = await readForm(request);
  if (form instanceof Response) return form;
  const client = await authenticateClient(ctx, request, form, address);
  return client instanceof Response ? client : { form, client };
}

/** The client a token or revocation request comes from, authenticated as it registered; else the answer: 401 with `WWW-Authenticate` when it used Basic, else 400. */
export async function authenticateClient(
  ctx: AsContext,
  request: Request,
  form: URLSearchParams,
  address: string | undefined,
): Promise<ClientRecord | Response> {
  const basic = basicCredentials(request);
  // RFC 6749 §5.2: a client that used the Authorization header gets 401 with the scheme it may use
  // (RFC 9110 §11.6.1: every 401 carries WWW-Authenticate); any other client 400
  const refuse = (why: string) =>
    basic
      ? oauthError(401, "invalid_client", why, { "www-authenticate": 'Basic realm="token"' })
      : oauthError(400, "invalid_client", why);
  if (basic === "bad") return refuse("The Authorization header is not Basic client credentials");
  const formSecret = param(form, "client_secret");
  const formId = param(form, "client_id");
  if (basic && formSecret !== undefined)
    return oauthError(400, "invalid_request", "Use one way of client authentication, not two");
  if (basic && formId !== undefined && formId !== basic.id)
    return oauthError(400, "invalid_request", "client_id differs from the authenticated client");
  const id = basic?.id ?? formId;
  if (id === undefined) return refuse("The request names no client (client_id)");
  const client = await findClient(ctx, id, address);
  if (client === FETCHES_BUSY)
    return oauthError(
      503,
      "temporarily_unavailable",
      "Too many client metadata documents were fetched; try again later",
      { "retry-after": String(Math.ceil(ctx.cimdFetches.windowMs / 1000)) },
    );
  if (typeof client === "string") return refuse(client);
  const method = client.token_endpoint_auth_method;
  const secret = basic?.secret ?? formSecret;
  if (method === "none") return secret === undefined ? client : refuse("This client has no secret");
  const used = basic ? "client_secret_basic" : "client_secret_post";
  if (secret === undefined || used !== method) return refuse(`This client authenticates by ${method}`);
  const hash = client.client_secret_hash;
  if (typeof hash !== "string" || !sameText(await digest(secret), hash))
    return refuse("The client secret is wrong");
  return client;
}

/** The counter a code's redemption and its replays hit: a count past one means a replay was seen. */
const replayMark = (grantId: string) => `code-replay:${grantId}`;

/** Redemptions under way in this process (grant id → whether a replay was seen meanwhile), per server: a replay is told even when the store kept no counter. */
const redeeming = new WeakMap<AsContext, Map<string, boolean>>();
/** Redemptions under way one process tracks at most (past it, the store's mark alone tells). */
const MAX_REDEEMING = 10_000;

/** The S256 challenge of a verifier. */
async function s256(verifier: string): Promise<string> {
  return digest(verifier);
}

/** `POST /token`. */
export async function token(
  ctx: AsContext,
  request: Request,
  address: string | undefined,
): Promise<Response> {
  const post = await clientPost(ctx, request, address);
  if (post instanceof Response) return post;
  const { form, client } = post;
  const type = param(form, "grant_type");
  if (type === undefined) return oauthError(400, "invalid_request", "The request has no grant_type");
  if (type !== "authorization_code" && type !== "refresh_token")
    return oauthError(400, "unsupported_grant_type", `The grant_type ${type} is not supported`);
  if (Array.isArray(client.grant_types) && !client.grant_types.includes(type))
    return oauthError(400, "unauthorized_client", `This client did not register the grant_type ${type}`);
  try {
    return type === "authorization_code"
      ? await codeGrant(ctx, client, form)
      : await refreshGrant(ctx, client, form);
  } catch (error) {
    if (!(error instanceof AuthStoreFullError)) throw error;
    return oauthError(503, "temporarily_unavailable", "The server cannot take more grants now", {
      "retry-after": "60",
    });
  }
}

/** The resource a token request names, if any: "ok" when absent or equal to `bound`, else the invalid_target answer. */
function sameTarget(ctx: AsContext, form: URLSearchParams, bound: string): Response | undefined {
  const asked = param(form, "resource");
  if (asked === undefined) return undefined;
  if (ourResource(ctx, asked) !== bound)
    return oauthError(400, "invalid_target", "The resource is not the one this grant is for");
  return undefined;
}

async function codeGrant(ctx: AsContext, client: ClientRecord, form: URLSearchParams): Promise<Response> {
  const code = param(form, "code");
  const redirectUri = param(form, "redirect_uri");
  const verifier = param(form, "code_verifier");
  if (code === undefined) return oauthError(400, "invalid_request", "The request has no code");
  if (verifier === undefined) return oauthError(400, "invalid_request", "A PKCE code_verifier is required");
  if (redirectUri === undefined) return oauthError(400, "invalid_request", "The request has no redirect_uri");
  if (code.length > 256) return oauthError(400, "invalid_grant", "The code is not valid");
  // the code is spent by this request whatever follows: one guess of the verifier per code
  const taken = await ctx.store.takeCode(await digest(code));
  if (taken === undefined) return oauthError(400, "invalid_grant", "The code is not valid or has expired");
  if ("replayed" in taken) {
    // marked first: a first redemption still between takeCode and putGrant finds the mark and revokes what it saved
    await ctx.store.hit(replayMark(taken.replayed.grantId), ctx.ttl.code);
    const local = redeeming.get(ctx);
    if (local?.has(taken.replayed.grantId)) local.set(taken.replayed.grantId, true);
    await revokeGrant(ctx, taken.replayed.grantId);
    return oauthError(400, "invalid_grant", "The code was already used; the tokens it gave are revoked");
  }
  const local = redeeming.get(ctx) ?? new Map<string, boolean>();
  redeeming.set(ctx, local);
  const tracked = local.size < MAX_REDEEMING;
  if (tracked) local.set(taken.code.grantId, false);
  try {
    return await redeemCode(ctx, client, taken.code, { form, redirectUri, verifier });
  } finally {
    if (tracked) local.delete(taken.code.grantId);
  }
}

async function redeemCode(
  ctx: AsContext,
  client: ClientRecord,
  c: CodeRecord,
  { form, redirectUri, verifier }: { form: URLSearchParams; redirectUri: string; verifier: string },
): Promise<Response> {
  if (c.clientId !== client.client_id)
    return oauthError(400, "invalid_grant", "The code was issued to another client");
  if (c.redirectUri !== redirectUri)
    return oauthError(400, "invalid_grant", "The redirect_uri is not the one of the authorization request");
  if (!VERIFIER.test(verifier) || !sameText(await s256(verifier), c.codeChallenge))
    return oauthError(400, "invalid_grant", "The code_verifier does not match the code_challenge");
  const target = sameTarget(ctx, form, c.resource);
  if (target) return target;
  const now = Date.now();
  const refresh = `${c.grantId}.${randomToken(32)}`;
  const grant: GrantRecord = {
    id: c.grantId,
    clientId: c.clientId,
    subject: c.identity.subject,
    resource: c.resource,
    scopes: c.scopes,
    refreshHash: await digest(refresh),
    usedRefreshHashes: [],
    createdAt: now,
    expiresAt: now + ctx.ttl.refresh,
  };
  if (c.identity.claims) grant.claims = c.identity.claims;
  if (c.identity.upstream) grant.upstream = c.identity.upstream;
  await ctx.store.putGrant(grant);
  // a replay that came while this redemption was under way marked the grant: it ends now (two hits in
  // one store, so one of the two always sees the other, on any replica)
  // (UNCOUNTED: a full MemoryAuthStore kept no counter; this process's record of its redemptions tells then)
  const marks = await ctx.store.hit(replayMark(grant.id), ctx.ttl.code);
  if ((marks > 1 && marks !== UNCOUNTED) || redeeming.get(ctx)?.get(grant.id) === true) {
    await revokeGrant(ctx, grant.id);
    return oauthError(400, "invalid_grant", "The code was used twice; the tokens it gave are revoked");
  }
  // a registered client's first grant: from now on it is kept while used, not for a day only
  if (client.kind === "registered" && client.redeemed !== true)
    await ctx.store.putClient({ ...client, redeemed: true }).catch((error: unknown) => {
      // a full store keeps it on its first time to live: the tokens are still given
      if (!(error instanceof AuthStoreFullError)) throw error;
    });
  return tokens(ctx, client, grant, grant.scopes, refresh);
}

async function refreshGrant(ctx: AsContext, client: ClientRecord, form: URLSearchParams): Promise<Response> {
  const presented = param(form, "refresh_token");
  if (presented === undefined) return oauthError(400, "invalid_request", "The request has no refresh_token");
  const invalid = () => oauthError(400, "invalid_grant", "The refresh token is not valid");
  const dot = presented.indexOf(".");
  if (dot < 1 || presented.length > 256) return invalid();
  const grant = await ctx.store.getGrant(presented.slice(0, dot));
  if (!grant || grant.clientId !== client.client_id) return invalid();
  const hash = await digest(presented);
  if (!sameText(hash, grant.refreshHash)) {
    if (!grant.usedRefreshHashes.some((h) => sameText(h, hash))) return invalid();
    // a token rotated out came back: it leaked, or the client raced itself; either way the grant ends
    await revokeGrant(ctx, grant.id);
    return oauthError(400, "invalid_grant", "The refresh token was already used; the grant is revoked");
  }
  const target = sameTarget(ctx, form, grant.resource);
  if (target) return target;
  const asked = param(form, "scope");
  let scopes = grant.scopes;
  if (asked !== undefined) {
    const want = [...new Set(asked.split(" ").filter((s) => s !== "" && s !== "offline_access"))];
    const extra = want.find((s) => !grant.scopes.includes(s));
    if (extra) return oauthError(400, "invalid_scope", `The scope ${extra} was not granted`);
    scopes = want;
  }
  const next = `${grant.id}.${randomToken(32)}`;
  const nextHash = await digest(next);
  // written over the grant as read; when something else was saved meanwhile (an upstream refresh, on any
  // replica) it is read again and rotated over that, so nothing saved is overwritten with older tokens
  let current = grant;
  for (let attempt = 0; attempt < 5; attempt++) {
    const rotated: GrantRecord = {
      ...current,
      refreshHash: nextHash,
      usedRefreshHashes: [hash, ...current.usedRefreshHashes].slice(0, USED_KEPT),
      expiresAt: Date.now() + ctx.ttl.refresh,
    };
    if (await ctx.store.replaceGrant(rotated, hash)) return tokens(ctx, client, rotated, scopes, next);
    const now = await ctx.store.getGrant(grant.id);
    if (!now) return invalid();
    // another request rotated this same token first: it was presented twice
    if (!sameText(now.refreshHash, hash)) {
      await revokeGrant(ctx, grant.id);
      return oauthError(400, "invalid_grant", "The refresh token was already used; the grant is revoked");
    }
    current = now;
  }
  return oauthError(503, "temporarily_unavailable", "The grant is changing; try again", {
    "retry-after": "1",
  });
}

/** Ends a grant: its refresh tokens at once, its access tokens at their next liveness check. */
export async function revokeGrant(ctx: AsContext, grantId: string): Promise<void> {
  await ctx.store.deleteGrant(grantId);
  ctx.liveness.forget(grantId);
}

async function tokens(
  ctx: AsContext,
  client: ClientRecord,
  grant: GrantRecord,
  scopes: readonly string[],
  refresh: string,
): Promise<Response> {
  const access = await signAccessToken(ctx.keys, ctx.issuer, grant, scopes, ctx.ttl.access);
  const body: { [k: string]: unknown } = {
    access_token: access,
    token_type: "Bearer",
    expires_in: ctx.ttl.access,
  };
  if (scopes.length) body.scope = scopes.join(" ");
  const refreshes = !Array.isArray(client.grant_types) || client.grant_types.includes("refresh_token");
  if (refreshes) body.refresh_token = refresh;
  return json(body);
}
