/**
 * Federated sign-in at an upstream OAuth 2.0 / OpenID Connect provider, the part every provider shares:
 * PKCE, `state` bound to the authorization in progress and to the browser, the callback checked and the
 * code exchanged by `oauth4webapi` (loaded on first use: an optional peer), upstream refresh, and the
 * provider's failures turned into `SignInError`s that say what happened.
 */
import type * as Oauth from "oauth4webapi";
import { digest, randomToken, sameText } from "./keys.js";
import {
  type SignIn,
  type SignInCallback,
  SignInError,
  type SignInFinished,
  type SignInStart,
} from "./sign-in.js";
import type { Identity, UpstreamTokens } from "./store.js";

/** Options every upstream provider takes. */
export interface UpstreamOptions {
  /** The client id registered at the provider. Required. */
  clientId: string;
  /** The route under the issuer the provider returns to; register `issuer + callbackPath` as the redirect URI there. Default: `"/oauth/callback"`. */
  callbackPath?: string;
  /** More parameters for the provider's authorization request (`prompt`, `login_hint`, …). Default: none. */
  authorizationParams?: { readonly [name: string]: string };
  /** Milliseconds each request to the provider may take. Default: 10000. */
  timeoutMs?: number;
  /** Allows `http:` endpoints at the provider: for tests and local development only, never in production. Default: false. */
  allowHttp?: boolean;
}

/** The oauth4webapi module, loaded once on first use. */
export type OauthLib = typeof Oauth;

let loading: Promise<OauthLib> | undefined;

/** oauth4webapi, imported on first use so that `picomcp/auth` loads without it when no provider is used. */
export function oauthLib(): Promise<OauthLib> {
  loading ??= import("oauth4webapi").catch((error: unknown) => {
    loading = undefined;
    throw new Error(
      "picomcp/auth: signing in at GitHub, Google or an OIDC issuer needs the package oauth4webapi (npm install oauth4webapi)",
      { cause: error },
    );
  });
  return loading;
}

/** What a provider preset gives the shared flow. */
export interface Provider {
  /** For messages and the consent page. */
  readonly name: string;
  readonly clientId: string;
  /** The provider's authorization server metadata (discovered once, or fixed). */
  metadata(lib: OauthLib): Promise<Oauth.AuthorizationServer>;
  /** How the client authenticates at the token endpoint. */
  clientAuth(lib: OauthLib, as: Oauth.AuthorizationServer): Oauth.ClientAuth;
  readonly scopes: readonly string[];
  /** OpenID Connect: a nonce is sent and an id_token required and checked. */
  readonly openid: boolean;
  /** Parameters added to the authorization request. */
  readonly params: { readonly [name: string]: string };
  /** Who signed in, from the token response (the id_token's claims, a user endpoint). */
  identify(
    lib: OauthLib,
    as: Oauth.AuthorizationServer,
    tokens: Oauth.TokenEndpointResponse,
    request: RequestOptions,
  ): Promise<Omit<Identity, "upstream">>;
  /** Checks a refreshed token response still speaks for the same person (the id_token's `sub`). */
  checkRefresh?(lib: OauthLib, tokens: Oauth.TokenEndpointResponse, before: UpstreamTokens): void;
  /** Replaces `fetch` for the provider's endpoints (GitHub answers its token errors with 200). */
  readonly fetch?: (url: string, init: Oauth.CustomFetchOptions<string, unknown>) => Promise<Response>;
}

/** The options oauth4webapi's requests take here: a deadline, and `http:` when allowed. */
export interface RequestOptions {
  signal: AbortSignal;
  [option: symbol]: unknown;
}

/** What `begin` keeps in `pending.signIn` for `finish`. */
interface Kept {
  /** The random part of `state` (after the pending id). */
  state: string;
  /** SHA-256 (base64url) of the secret in the browser's cookie. */
  browser: string;
  /** The PKCE code verifier. */
  verifier: string;
  nonce?: string;
}

/** Whether two strings are equal, in time that does not depend on where they differ (both are hashed first). */
async function sameSecret(a: string, b: string): Promise<boolean> {
  return sameText(await digest(a), await digest(b));
}

/** The value of cookie `name` in a request, or undefined. */
function cookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The browser cookie that ties a callback to the browser that began it: one per authorization in progress. */
function cookieName(state: string): string {
  return `picomcp-signin-${state}`;
}

/** The `Set-Cookie` value of that cookie, for the callback's path only: `value` for `maxAge` seconds (0 clears it). */
function signInCookie(callbackUrl: string, state: string, value: string, maxAge: number): string {
  const callback = new URL(callbackUrl);
  const attributes = [
    `Path=${callback.pathname}`,
    `Max-Age=${maxAge}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(callback.protocol === "https:" ? ["Secure"] : []),
  ];
  return `${cookieName(state)}=${value}; ${attributes.join("; ")}`;
}

/** What an upstream token response keeps: `before`'s refresh and id tokens stay when a refresh brings none. */
export function upstreamTokens(tokens: Oauth.TokenEndpointResponse, before?: UpstreamTokens): UpstreamTokens {
  const refreshToken = tokens.refresh_token ?? before?.refreshToken;
  const idToken = tokens.id_token ?? before?.idToken;
  const scope = tokens.scope ?? before?.scope;
  return {
    accessToken: tokens.access_token,
    tokenType: tokens.token_type,
    ...(refreshToken !== undefined ? { refreshToken } : {}),
    ...(typeof tokens.expires_in === "number" ? { expiresAt: Date.now() + tokens.expires_in * 1000 } : {}),
    ...(scope !== undefined ? { scope } : {}),
    ...(idToken !== undefined ? { idToken } : {}),
  };
}

/**
 * Turns anything a step at the provider threw into a `SignInError` naming the provider and the step:
 * the provider's own error code and description when it sent one.
 */
export function signInFailure(
  lib: OauthLib | undefined,
  name: string,
  step: string,
  error: unknown,
): SignInError {
  if (error instanceof SignInError) return error;
  const said = (code: unknown, description: unknown) =>
    `${String(code)}${typeof description === "string" && description ? ` (${description})` : ""}`;
  if (lib && error instanceof lib.AuthorizationResponseError)
    return new SignInError(
      `${name} did not sign the person in: ${said(error.error, error.error_description)}`,
    );
  if (lib && error instanceof lib.ResponseBodyError)
    return new SignInError(`${name} refused the ${step}: ${said(error.error, error.error_description)}`);
  if (lib && error instanceof lib.WWWAuthenticateChallengeError)
    return new SignInError(`${name} refused the ${step} (HTTP ${error.status})`);
  if (
    lib &&
    (error instanceof lib.OperationProcessingError || error instanceof lib.UnsupportedOperationError)
  )
    return new SignInError(`${name}'s answer to the ${step} is not valid: ${error.message}`);
  if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError"))
    return new SignInError(`${name} did not answer the ${step} in time`);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  if (error instanceof TypeError && error.message === "fetch failed")
    return new SignInError(`${name} cannot be reached for the ${step}${cause}`);
  return new SignInError(
    `the ${step} at ${name} failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/** Runs one step at the provider, its failures as `SignInError`s. */
async function step<T>(
  lib: OauthLib | undefined,
  name: string,
  what: string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw signInFailure(lib, name, what, error);
  }
}

/** Caches a discovery (or any load) until it fails: a failed one is tried again at the next sign-in. */
export function once<A, T>(load: (arg: A) => Promise<T>): (arg: A) => Promise<T> {
  let value: Promise<T> | undefined;
  return (arg) => {
    value ??= load(arg).catch((error: unknown) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}

/** Reads the options every provider shares, refusing bad ones at once. */
export function sharedOptions(options: UpstreamOptions, preset: string) {
  if (typeof options.clientId !== "string" || options.clientId === "")
    throw new TypeError(`${preset}: clientId is required`);
  const callbackPath = options.callbackPath ?? "/oauth/callback";
  if (!callbackPath.startsWith("/") || callbackPath.startsWith("//") || /[?#]/.test(callbackPath))
    throw new TypeError(
      `${preset}: callbackPath must be a path starting with "/" (got ${JSON.stringify(callbackPath)})`,
    );
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw new TypeError(`${preset}: timeoutMs must be a positive number of milliseconds`);
  return { callbackPath, timeoutMs, allowHttp: options.allowHttp === true };
}

/** Requires `url` to be an absolute https URL (or http with `allowHttp`). */
export function endpoint(url: string, field: string, preset: string, allowHttp: boolean): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`${preset}: ${field} must be an absolute URL (got ${JSON.stringify(url)})`);
  }
  if (parsed.protocol !== "https:" && !(allowHttp && parsed.protocol === "http:"))
    throw new TypeError(
      `${preset}: ${field} must be an https URL (got ${JSON.stringify(url)}; allowHttp is for tests)`,
    );
  return url;
}

/** Builds the `SignIn` of one upstream provider. */
export function upstreamSignIn(
  provider: Provider,
  shared: { callbackPath: string; timeoutMs: number; allowHttp: boolean },
): SignIn {
  const { name } = provider;
  const client: Oauth.Client = { client_id: provider.clientId };
  const requestOptions = (lib: OauthLib): RequestOptions => {
    const options: RequestOptions = { signal: AbortSignal.timeout(shared.timeoutMs) };
    if (shared.allowHttp) options[lib.allowInsecureRequests] = true;
    if (provider.fetch) options[lib.customFetch] = provider.fetch;
    return options;
  };
  const metadata = async (lib: OauthLib) => step(lib, name, "discovery", () => provider.metadata(lib));

  return {
    name,
    callbackPath: shared.callbackPath,

    async begin(start: SignInStart): Promise<Response> {
      const lib = await oauthLib();
      const as = await metadata(lib);
      if (!as.authorization_endpoint)
        throw new SignInError(`${name}'s metadata names no authorization_endpoint`);
      const state = randomToken();
      const secret = randomToken();
      const verifier = lib.generateRandomCodeVerifier();
      const kept: Kept = { state, browser: await digest(secret), verifier };
      const url = new URL(as.authorization_endpoint);
      const set = (key: string, value: string) => url.searchParams.set(key, value);
      set("response_type", "code");
      set("client_id", provider.clientId);
      set("redirect_uri", start.callbackUrl);
      if (provider.scopes.length > 0) set("scope", provider.scopes.join(" "));
      set("state", `${start.pending.id}.${state}`);
      set("code_challenge", await lib.calculatePKCECodeChallenge(verifier));
      set("code_challenge_method", "S256");
      if (provider.openid) {
        kept.nonce = lib.generateRandomNonce();
        set("nonce", kept.nonce);
      }
      for (const [key, value] of Object.entries(provider.params)) set(key, value);
      start.pending.signIn = { ...kept };
      return new Response(null, {
        status: 303,
        headers: {
          location: url.href,
          "set-cookie": signInCookie(start.callbackUrl, state, secret, 900),
          "cache-control": "no-store",
          "referrer-policy": "no-referrer",
        },
      });
    },

    async finish(callback: SignInCallback): Promise<SignInFinished> {
      const lib = await oauthLib();
      const params = new URL(callback.request.url).searchParams;
      const fullState = params.get("state");
      const dot = fullState?.lastIndexOf(".") ?? -1;
      if (!fullState || dot <= 0) {
        const error = params.get("error");
        throw new SignInError(
          error
            ? `${name} did not sign the person in: ${error} (and sent no state naming the sign-in)`
            : `the callback from ${name} has no valid state`,
        );
      }
      const id = fullState.slice(0, dot);
      const part = fullState.slice(dot + 1);
      const pending = await callback.load(id);
      const kept = pending?.signIn as Partial<Kept> | undefined;
      if (!pending || typeof kept?.state !== "string" || typeof kept.verifier !== "string")
        throw new SignInError(
          `this sign-in at ${name} is unknown or has expired: start again from the client`,
        );
      if (!(await sameSecret(part, kept.state)))
        throw new SignInError(`the state in the callback from ${name} does not match this sign-in`);
      const secret = cookie(callback.request, cookieName(kept.state));
      if (
        secret === undefined ||
        typeof kept.browser !== "string" ||
        !(await sameSecret(await digest(secret), kept.browser))
      )
        throw new SignInError(
          `this sign-in at ${name} was started in another browser: start again from the client`,
        );
      const as = await metadata(lib);
      const validated = await step(lib, name, "callback", async () =>
        lib.validateAuthResponse(as, client, params, fullState),
      );
      const auth = provider.clientAuth(lib, as);
      const tokens = await step(lib, name, "code exchange", async () => {
        const response = await lib.authorizationCodeGrantRequest(
          as,
          client,
          auth,
          validated,
          callback.callbackUrl,
          kept.verifier!,
          requestOptions(lib),
        );
        return provider.openid
          ? lib.processAuthorizationCodeResponse(as, client, response, {
              expectedNonce: kept.nonce ?? lib.expectNoNonce,
              requireIdToken: true,
            })
          : lib.processAuthorizationCodeResponse(as, client, response);
      });
      const who = await step(lib, name, "user lookup", () =>
        provider.identify(lib, as, tokens, requestOptions(lib)),
      );
      return {
        pending,
        identity: { ...who, upstream: upstreamTokens(tokens) },
        // the browser's tie to this sign-in is spent
        setCookie: [signInCookie(callback.callbackUrl, kept.state, "", 0)],
      };
    },

    async refresh(before: UpstreamTokens): Promise<UpstreamTokens> {
      if (!before.refreshToken)
        throw new SignInError(`${name} gave no refresh token for this sign-in: sign in again`);
      const lib = await oauthLib();
      const as = await metadata(lib);
      const auth = provider.clientAuth(lib, as);
      const tokens = await step(lib, name, "token refresh", async () => {
        const response = await lib.refreshTokenGrantRequest(
          as,
          client,
          auth,
          before.refreshToken!,
          requestOptions(lib),
        );
        const result = await lib.processRefreshTokenResponse(as, client, response);
        provider.checkRefresh?.(lib, result, before);
        return result;
      });
      return upstreamTokens(tokens, before);
    },
  };
}
