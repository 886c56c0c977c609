/**
 * The authorization endpoint and what follows it in the browser: the request checked (client,
 * exact redirect URI, PKCE S256, resource, scopes), the consent page, its approve/deny POST, the
 * sign-in (the `authenticate` hook before consent, or a `SignIn` after it, with its callback route),
 * and the code sent back with `state` and `iss`.
 */
import {
  type AsContext,
  FETCHES_BUSY,
  findClient,
  grantScopes,
  ourResource,
  overAddress,
  overTotal,
} from "./as-context.js";
import { consentCookie, consentCookieHeader, consentPage, cookieOf } from "./consent-page.js";
import { digest, randomToken, sameText } from "./keys.js";
import { errorPage, param, readForm, redirectTo, repeated } from "./oauth-http.js";
import { SignInError, type SignInFinished } from "./sign-in.js";
import type { Identity, PendingAuthorization } from "./store.js";

/** A PKCE S256 challenge: 32 bytes of SHA-256 in base64url. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** Characters of `state` kept and echoed at most. */
const MAX_STATE = 2048;

/** An error sent back to the client at its (checked) redirect URI, with `state` and `iss` (RFC 9207). */
function sendBack(
  ctx: AsContext,
  to: { redirectUri: string; state?: string | undefined },
  error: string,
  description: string,
  status = 302,
): Response {
  return redirectTo(
    to.redirectUri,
    { error, error_description: description, state: to.state, iss: ctx.issuer },
    status,
  );
}

/** Whether `identity` is one a code may be issued for. */
function validIdentity(identity: unknown): identity is Identity {
  const s = (identity as Identity | undefined)?.subject;
  return typeof s === "string" && s !== "" && s.length <= 1024;
}

/** `GET /authorize`: checks the request, then shows the consent page (or what the `authenticate` hook answers). */
export async function authorize(
  ctx: AsContext,
  request: Request,
  address: string | undefined,
): Promise<Response> {
  if (request.method !== "GET")
    return errorPage(405, "invalid_request", "Use GET for the authorization endpoint");
  // counted before anything is fetched or kept: a crowd is refused, nobody's sign-in in progress is dropped
  // (a page, not a redirect: the client and its redirect URI are not checked yet); per address and
  // network first, in all only once the client and its redirect URI are known (junk uses up no total)
  const limits = ctx.authorizations;
  const busy = () => {
    const page = errorPage(429, "temporarily_unavailable", "Too many sign-ins are starting; try again later");
    page.headers.set("retry-after", String(Math.ceil(limits.windowMs / 1000)));
    return page;
  };
  if (await overAddress(ctx, "authorize", address, limits)) return busy();
  const params = new URL(request.url).searchParams;
  // nothing is sent back to a redirect URI until the client and the URI are known to be its own
  const dup = repeated(params);
  if (dup) return errorPage(400, "invalid_request", `The parameter ${dup} is given more than once`);
  const clientId = param(params, "client_id");
  if (!clientId) return errorPage(400, "invalid_request", "The request names no client (client_id)");
  const client = await findClient(ctx, clientId, address);
  if (client === FETCHES_BUSY) return busy();
  if (typeof client === "string") return errorPage(400, "invalid_client", client);
  const redirectUri = param(params, "redirect_uri");
  if (!redirectUri) return errorPage(400, "invalid_request", "The request has no redirect_uri");
  if (!client.redirect_uris.includes(redirectUri))
    return errorPage(
      400,
      "invalid_request",
      "The redirect_uri is not one the client registered (they must match exactly)",
    );
  if (await overTotal(ctx, "authorize", limits)) return busy();
  const rawState = param(params, "state");
  const back = { redirectUri, state: rawState };
  if (rawState !== undefined && rawState.length > MAX_STATE)
    return sendBack(ctx, { redirectUri }, "invalid_request", "The state is too long");
  if (param(params, "response_type") !== "code")
    return sendBack(ctx, back, "unsupported_response_type", "Only response_type=code is supported");
  const challenge = param(params, "code_challenge");
  if (!challenge) return sendBack(ctx, back, "invalid_request", "A PKCE code_challenge is required");
  if (param(params, "code_challenge_method") !== "S256")
    return sendBack(
      ctx,
      back,
      "invalid_request",
      "code_challenge_method must be S256 (plain is not allowed)",
    );
  if (!CHALLENGE.test(challenge))
    return sendBack(ctx, back, "invalid_request", "The code_challenge is not an S256 challenge");
  const asked = param(params, "resource");
  if (!asked) return sendBack(ctx, back, "invalid_target", "The resource parameter (RFC 8707) is required");
  const resource = ourResource(ctx, asked);
  if (!resource)
    return sendBack(ctx, back, "invalid_target", "The resource is not one this server issues tokens for");
  const scopes = grantScopes(ctx, client, param(params, "scope"));
  if (typeof scopes === "string") return sendBack(ctx, back, "invalid_scope", scopes);

  // the person must always see the consent page: a request to skip it cannot be met
  if (param(params, "prompt")?.split(" ").includes("none"))
    return sendBack(ctx, back, "consent_required", "The person must approve this client on the consent page");
  const secret = randomToken(32);
  const pending: PendingAuthorization = {
    id: await digest(secret),
    clientId: client.client_id,
    redirectUri,
    codeChallenge: challenge,
    resource,
    scopes,
    createdAt: Date.now(),
  };
  if (rawState !== undefined) pending.state = rawState;
  if (ctx.authenticate) {
    const who = await ctx.authenticate(request);
    if (who instanceof Response) return who;
    if (who === undefined) return sendBack(ctx, back, "access_denied", "The person could not be signed in");
    if (!validIdentity(who))
      throw new TypeError("authenticate must return an Identity with a non-empty subject");
    pending.identity = who;
  }
  await ctx.store.putPending(pending, ctx.ttl.pending);
  return consentPage(ctx, client, pending, secret, Math.floor(ctx.ttl.pending / 1000));
}

/**
 * Whether a POST comes from the server's own page: `Origin` and `Sec-Fetch-Site`, where the browser
 * sends them. The page's `Referrer-Policy: no-referrer` makes a browser send `Origin: null` for its
 * own form, so a null origin passes only when Fetch Metadata says same-origin.
 */
function sameOrigin(ctx: AsContext, request: Request): boolean {
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site");
  if (origin === "null") return site === "same-origin";
  if (origin !== null && origin !== ctx.origin) return false;
  return site === null || site === "same-origin";
}

/** `POST /consent`: the person's approval or denial. */
export async function consent(ctx: AsContext, request: Request): Promise<Response> {
  if (request.method !== "POST") return errorPage(405, "invalid_request", "Use the consent page's buttons");
  if (!sameOrigin(ctx, request))
    return errorPage(403, "access_denied", "The approval did not come from this server's own consent page");
  const form = await readForm(request);
  if (form instanceof Response)
    return errorPage(400, "invalid_request", "The approval is not a form this page sends");
  const secret = param(form, "csrf");
  const decision = param(form, "decision");
  if (!secret || secret.length > 128 || (decision !== "approve" && decision !== "deny"))
    return errorPage(403, "access_denied", "The approval is not a form this page sends");
  const id = await digest(secret);
  const cookie = cookieOf(request, consentCookie(id));
  if (cookie === undefined || !sameText(cookie, secret))
    return errorPage(403, "access_denied", "This consent page was not opened in this browser");
  const clear = { "set-cookie": consentCookieHeader(ctx, id, "", 0) };
  const pending = await ctx.store.getPending(id);
  if (!pending || pending.consented)
    return errorPage(400, "invalid_request", "This sign-in has expired; start it again");
  if (decision === "deny") {
    if (!(await ctx.store.takePending(id)))
      return errorPage(400, "invalid_request", "This sign-in has expired");
    return withHeaders(sendBack(ctx, pending, "access_denied", "The person denied the request", 303), clear);
  }
  if (pending.identity) return withHeaders(await finish(ctx, id, pending.identity, 303), clear);
  const signIn = ctx.signIn!;
  pending.consented = true;
  try {
    const started = await signIn.begin({ request, pending, callbackUrl: callbackUrl(ctx) });
    if (started instanceof Response) {
      await ctx.store.putPending(pending, ctx.ttl.pending);
      return withHeaders(started, clear);
    }
    if (!validIdentity(started))
      throw new TypeError(`${signIn.name}: begin returned no Identity with a subject`);
    return withHeaders(await finish(ctx, id, started, 303), clear);
  } catch (error) {
    if (!(error instanceof SignInError)) throw error;
    await ctx.store.takePending(id);
    return withHeaders(sendBack(ctx, pending, "access_denied", error.message, 303), clear);
  }
}

/** The sign-in's callback URL: the issuer's base and its `callbackPath`. */
export function callbackUrl(ctx: AsContext): string {
  return `${ctx.base}${ctx.signIn?.callbackPath ?? ""}`;
}

/** The sign-in's callback route: who signed in, for which authorization. */
export async function signInCallback(ctx: AsContext, request: Request): Promise<Response> {
  const signIn = ctx.signIn!;
  if (!signIn.finish) return errorPage(404, "invalid_request", "This sign-in has no callback");
  let done: SignInFinished;
  try {
    done = await signIn.finish({
      request,
      load: (id) => ctx.store.getPending(id),
      callbackUrl: callbackUrl(ctx),
    });
  } catch (error) {
    if (error instanceof SignInError) return errorPage(400, "access_denied", error.message);
    throw error;
  }
  // the sign-in's own cookies, cleared whatever the answer
  const clear = (response: Response) => {
    for (const value of done.setCookie ?? []) response = withHeaders(response, { "set-cookie": value });
    return response;
  };
  const stored = await ctx.store.getPending(done.pending.id);
  if (!stored?.consented)
    return clear(errorPage(400, "invalid_request", "This sign-in has expired or was already finished"));
  if (!validIdentity(done.identity))
    throw new TypeError(`${signIn.name}: finish returned no Identity with a subject`);
  return clear(await finish(ctx, stored.id, done.identity, 302));
}

/** Takes the authorization (one winner) and sends its code back to the client. */
async function finish(ctx: AsContext, id: string, identity: Identity, status: number): Promise<Response> {
  const pending = await ctx.store.takePending(id);
  if (!pending) return errorPage(400, "invalid_request", "This sign-in has expired or was already finished");
  const code = randomToken(32);
  await ctx.store.putCode(await digest(code), {
    clientId: pending.clientId,
    redirectUri: pending.redirectUri,
    codeChallenge: pending.codeChallenge,
    resource: pending.resource,
    scopes: pending.scopes,
    identity,
    grantId: randomToken(16),
    expiresAt: Date.now() + ctx.ttl.code,
  });
  return redirectTo(pending.redirectUri, { code, state: pending.state, iss: ctx.issuer }, status);
}

function withHeaders(response: Response, headers: { [name: string]: string }): Response {
  try {
    for (const [k, v] of Object.entries(headers)) response.headers.append(k, v);
    return response;
  } catch {
    // a response with immutable headers (one a fetch returned): copied
    const copy = new Response(response.body, response);
    for (const [k, v] of Object.entries(headers)) copy.headers.append(k, v);
    return copy;
  }
}
