/**
 * Sign-in at any OpenID Connect issuer found by discovery (`oidc`), and Google, which is one (`google`):
 * the id_token checked by `oauth4webapi` (issuer, audience, nonce, times), the person's subject
 * namespaced by the issuer so two providers' users never merge.
 */
import type * as Oauth from "oauth4webapi";
import { fromBase64Url } from "../bytes.js";
import { type SignIn, SignInError } from "./sign-in.js";
import type { UpstreamTokens } from "./store.js";
import {
  endpoint,
  type OauthLib,
  once,
  type Provider,
  type RequestOptions,
  sharedOptions,
  type UpstreamOptions,
  upstreamSignIn,
} from "./upstream.js";

/** Options of {@link oidc}. */
export interface OidcOptions extends UpstreamOptions {
  /** The issuer identifier; its `/.well-known/openid-configuration` is read on the first sign-in. Required. */
  issuer: string;
  /** The client secret, for a confidential client; without it the client is public (PKCE alone). */
  clientSecret?: string;
  /** Scopes to ask for; must include `openid`. Default: `["openid", "profile", "email"]`. */
  scopes?: readonly string[];
  /** The provider's name in messages and on the consent page. Default: the issuer's host. */
  name?: string;
  /** Put before the id_token's `sub` to make the subject here. Default: the issuer and `#` (`https://idp.example.com#248289761001`). */
  subjectPrefix?: string;
  /** Also reads the userinfo endpoint for the person's claims (many issuers keep `name` and `email` there). Default: true when the issuer has one. */
  userinfo?: boolean;
  /** How the client authenticates at the token endpoint. Default: `client_secret_basic` (`client_secret_post` when only that is supported), `none` without a secret. */
  tokenEndpointAuthMethod?: "client_secret_basic" | "client_secret_post" | "none";
}

/** Options of {@link google}. */
export interface GoogleOptions extends UpstreamOptions {
  /** The OAuth client secret from the Google Cloud console. Required. */
  clientSecret: string;
  /** Scopes to ask for. Default: `["openid", "email", "profile"]`. */
  scopes?: readonly string[];
  /** Only accounts of this Google Workspace domain may sign in (`hd`, checked in the id_token). Default: any account. */
  hostedDomain?: string;
  /** Asks for a refresh token (`access_type=offline`), so `upstreamToken` can refresh. Default: true. */
  offline?: boolean;
  /** Where Google's OpenID configuration is read: a stand-in for tests. Default: `https://accounts.google.com`. */
  issuer?: string;
}

/** The id_token and userinfo claims an `Identity` carries: who the person is, never the token's own claims. */
const PROFILE = [
  "name",
  "given_name",
  "family_name",
  "preferred_username",
  "nickname",
  "email",
  "email_verified",
  "picture",
  "locale",
  "hd",
] as const;

function profile(...sources: ({ readonly [claim: string]: unknown } | undefined)[]): {
  [claim: string]: unknown;
} {
  const claims: { [claim: string]: unknown } = {};
  for (const source of sources) {
    for (const claim of PROFILE) {
      const value = source?.[claim];
      if (claims[claim] === undefined && ["string", "boolean", "number"].includes(typeof value))
        claims[claim] = value;
    }
  }
  return claims;
}

/** The `sub` of an id_token already validated when it was received, or undefined. */
function subjectOf(idToken: string | undefined): string | undefined {
  const payload = idToken?.split(".")[1];
  const bytes = payload === undefined ? undefined : fromBase64Url(payload);
  if (!bytes) return undefined;
  try {
    const sub = (JSON.parse(new TextDecoder().decode(bytes)) as { sub?: unknown }).sub;
    return typeof sub === "string" ? sub : undefined;
  } catch {
    return undefined;
  }
}

function secretAuth(
  lib: OauthLib,
  as: Oauth.AuthorizationServer,
  secret: string | undefined,
  method: OidcOptions["tokenEndpointAuthMethod"],
): Oauth.ClientAuth {
  if (method === "none" || secret === undefined) return lib.None();
  const supported = as.token_endpoint_auth_methods_supported;
  const post =
    method === "client_secret_post" ||
    (method === undefined &&
      supported !== undefined &&
      !supported.includes("client_secret_basic") &&
      supported.includes("client_secret_post"));
  return post ? lib.ClientSecretPost(secret) : lib.ClientSecretBasic(secret);
}

interface OidcSetup {
  preset: string;
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  method: OidcOptions["tokenEndpointAuthMethod"];
  scopes: readonly string[];
  name: string;
  prefix: string;
  userinfo: boolean | undefined;
  params: { readonly [name: string]: string };
  check?: (claims: Oauth.IDToken) => void;
  options: UpstreamOptions;
}

function openidProvider(setup: OidcSetup): SignIn {
  const shared = sharedOptions(setup.options, setup.preset);
  const issuer = new URL(endpoint(setup.issuer, "issuer", setup.preset, shared.allowHttp));
  if (!setup.scopes.includes("openid"))
    throw new TypeError(
      `${setup.preset}: scopes must include "openid" (got ${JSON.stringify(setup.scopes)})`,
    );
  if (setup.method !== undefined && setup.method !== "none" && setup.clientSecret === undefined)
    throw new TypeError(`${setup.preset}: tokenEndpointAuthMethod ${setup.method} needs a clientSecret`);
  const client: Oauth.Client = { client_id: setup.clientId };
  const discover = once(async (lib: OauthLib) => {
    const options: RequestOptions = { signal: AbortSignal.timeout(shared.timeoutMs) };
    if (shared.allowHttp) options[lib.allowInsecureRequests] = true;
    const response = await lib.discoveryRequest(issuer, options);
    return lib.processDiscoveryResponse(issuer, response);
  });
  const provider: Provider = {
    name: setup.name,
    clientId: setup.clientId,
    scopes: setup.scopes,
    openid: true,
    params: setup.params,
    metadata: discover,
    clientAuth: (loaded, as) => secretAuth(loaded, as, setup.clientSecret, setup.method),
    async identify(loaded, as, tokens, request) {
      const claims = loaded.getValidatedIdTokenClaims(tokens);
      if (!claims) throw new SignInError(`${setup.name} sent no id_token`);
      setup.check?.(claims);
      let info: Oauth.UserInfoResponse | undefined;
      if ((setup.userinfo ?? true) && as.userinfo_endpoint) {
        const response = await loaded.userInfoRequest(as, client, tokens.access_token, request);
        info = await loaded.processUserInfoResponse(as, client, claims.sub, response);
      }
      const found = profile(claims, info);
      return {
        subject: `${setup.prefix}${claims.sub}`,
        ...(Object.keys(found).length > 0 ? { claims: found } : {}),
      };
    },
    checkRefresh(loaded, tokens, before: UpstreamTokens) {
      const now = loaded.getValidatedIdTokenClaims(tokens)?.sub;
      const then = subjectOf(before.idToken);
      if (now !== undefined && then !== undefined && now !== then)
        throw new SignInError(
          `${setup.name} refreshed the tokens of another person (sub ${now}, not ${then})`,
        );
    },
  };
  return upstreamSignIn(provider, shared);
}

/**
 * Signs people in at any OpenID Connect issuer (Keycloak, Okta, Auth0, Entra, …), found by discovery on
 * the first sign-in. The subject is `<issuer>#<sub>`; `name`, `email` and the other profile claims come
 * from the id_token and the userinfo endpoint.
 * @example
 * const signIn = oidc({
 *   issuer: "https://login.example.com/realms/staff",
 *   clientId: "mcp",
 *   clientSecret: process.env.OIDC_CLIENT_SECRET!,
 * });
 */
export function oidc(options: OidcOptions): SignIn {
  if (typeof options?.issuer !== "string") throw new TypeError("oidc: issuer is required");
  const issuer = options.issuer;
  let host = issuer;
  try {
    host = new URL(issuer).host;
  } catch {}
  return openidProvider({
    preset: "oidc",
    issuer,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    method: options.tokenEndpointAuthMethod,
    scopes: options.scopes ?? ["openid", "profile", "email"],
    name: options.name ?? host,
    prefix: options.subjectPrefix ?? `${issuer}#`,
    userinfo: options.userinfo,
    params: options.authorizationParams ?? {},
    options,
  });
}

/**
 * Signs people in with their Google account (OpenID Connect at `https://accounts.google.com`). The
 * subject is `google:<sub>`; the claims carry `email`, `email_verified`, `name`, `picture` and `hd`.
 * @example
 * const signIn = google({
 *   clientId: process.env.GOOGLE_CLIENT_ID!,
 *   clientSecret: process.env.GOOGLE_CLIENT_SECRET!,
 * });
 */
export function google(options: GoogleOptions): SignIn {
  if (typeof options?.clientSecret !== "string" || options.clientSecret === "")
    throw new TypeError("google: clientSecret is required");
  const domain = options.hostedDomain;
  return openidProvider({
    preset: "google",
    issuer: options.issuer ?? "https://accounts.google.com",
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    method: undefined,
    scopes: options.scopes ?? ["openid", "email", "profile"],
    name: "Google",
    prefix: "google:",
    userinfo: false,
    params: {
      ...(options.offline === false ? {} : { access_type: "offline" }),
      ...(domain !== undefined ? { hd: domain } : {}),
      ...options.authorizationParams,
    },
    ...(domain !== undefined
      ? {
          check: (claims: Oauth.IDToken) => {
            if (claims.hd !== domain)
              throw new SignInError(
                `this Google account is not one of ${domain} (hd ${String(claims.hd ?? "absent")})`,
              );
          },
        }
      : {}),
    options,
  });
}
