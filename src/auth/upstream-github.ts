/**
 * Sign-in with a GitHub account (an OAuth App or a GitHub App's user tokens): GitHub's OAuth endpoints,
 * then `GET /user` for the account's stable numeric id (the subject `github:<id>`) and its login, name
 * and email.
 */
import type * as Oauth from "oauth4webapi";
import { type SignIn, SignInError } from "./sign-in.js";
import { endpoint, type Provider, sharedOptions, type UpstreamOptions, upstreamSignIn } from "./upstream.js";

/** Options of {@link github}. */
export interface GitHubOptions extends UpstreamOptions {
  /** The OAuth App's (or GitHub App's) client secret. Required. */
  clientSecret: string;
  /** Scopes to ask for (an OAuth App's; a GitHub App's tokens carry its permissions instead). Default: `["read:user"]`. */
  scopes?: readonly string[];
  /** Default: `https://github.com/login/oauth/authorize` (GitHub Enterprise Server: `https://HOST/login/oauth/authorize`). */
  authorizationEndpoint?: string;
  /** Default: `https://github.com/login/oauth/access_token`. */
  tokenEndpoint?: string;
  /** The REST API, where `/user` is read. Default: `https://api.github.com` (GitHub Enterprise Server: `https://HOST/api/v3`). */
  apiUrl?: string;
  /** The `iss` GitHub sends back with the code (RFC 9207). Default: the authorization endpoint without its `/authorize` (`https://github.com/login/oauth`). */
  issuer?: string;
}

/** The fields of GitHub's `GET /user` that become the identity. */
interface GitHubUser {
  id?: unknown;
  login?: unknown;
  name?: unknown;
  email?: unknown;
}

/**
 * Signs people in with their GitHub account. The subject is `github:<numeric id>` (a login can be renamed,
 * the id cannot); the claims carry `login`, and `name` and `email` when the account shows them.
 * @example
 * const signIn = github({
 *   clientId: process.env.GITHUB_CLIENT_ID!,
 *   clientSecret: process.env.GITHUB_CLIENT_SECRET!,
 * });
 */
export function github(options: GitHubOptions): SignIn {
  const shared = sharedOptions(options, "github");
  if (typeof options.clientSecret !== "string" || options.clientSecret === "")
    throw new TypeError("github: clientSecret is required");
  const at = (url: string, field: string) => endpoint(url, field, "github", shared.allowHttp);
  const authorize = at(
    options.authorizationEndpoint ?? "https://github.com/login/oauth/authorize",
    "authorizationEndpoint",
  );
  const token = at(options.tokenEndpoint ?? "https://github.com/login/oauth/access_token", "tokenEndpoint");
  const api = at(options.apiUrl ?? "https://api.github.com", "apiUrl").replace(/\/+$/, "");
  // GitHub names itself `https://github.com/login/oauth` in the callback's `iss`: checked whenever it is sent
  const issuer = options.issuer ?? authorize.replace(/\/authorize\/?$/, "");
  const as: Oauth.AuthorizationServer = {
    issuer,
    authorization_endpoint: authorize,
    token_endpoint: token,
  };
  const secret = options.clientSecret;
  const provider: Provider = {
    name: "GitHub",
    clientId: options.clientId,
    scopes: options.scopes ?? ["read:user"],
    openid: false,
    params: options.authorizationParams ?? {},
    metadata: async () => as,
    clientAuth: (lib) => lib.ClientSecretPost(secret),
    // GitHub answers a refused code or refresh token with 200 and an `error` member: made the 400 OAuth says
    fetch: async (url, init) => {
      const response = await fetch(url, init as RequestInit);
      if (response.status !== 200 || url !== token) return response;
      const body = (await response
        .clone()
        .json()
        .catch(() => undefined)) as { error?: unknown } | undefined;
      if (typeof body?.error !== "string") return response;
      return new Response(JSON.stringify(body), {
        status: 400,
        headers: { "content-type": "application/json" },
      });
    },
    async identify(lib, _as, tokens, request) {
      const response = await lib.protectedResourceRequest(
        tokens.access_token,
        "GET",
        new URL(`${api}/user`),
        new Headers({ accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28" }),
        null,
        request,
      );
      if (response.status !== 200) throw new SignInError(`GitHub's /user answered HTTP ${response.status}`);
      const user = (await response.json().catch(() => undefined)) as GitHubUser | undefined;
      const id = user?.id;
      if (typeof id !== "number" || !Number.isSafeInteger(id) || id <= 0)
        throw new SignInError("GitHub's /user named no numeric account id");
      const claims: { [claim: string]: unknown } = {};
      for (const claim of ["login", "name", "email"] as const) {
        if (typeof user?.[claim] === "string" && user[claim] !== "") claims[claim] = user[claim];
      }
      return { subject: `github:${id}`, claims };
    },
  };
  return upstreamSignIn(provider, shared);
}
