// github() and google() against small stand-ins of their endpoints on 127.0.0.1, answering with the JSON
// shapes GitHub and Google document; the browser's part (following redirects, keeping cookies) done by fetch.
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { github, google } from "../../src/auth/index.js";
import { SignInError } from "../../src/auth/sign-in.js";
import { type Finished, listenLater, relyingParty } from "../upstream-helpers.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

/** What a stand-in saw. */
interface Seen {
  authorize: Record<string, string>[];
  token: { form: Record<string, string>; authorization: string | undefined; accept: string | undefined }[];
  user: Record<string, string | undefined>[];
}

/** The person's browser: `/start` at the relying party, the provider's consent (approved at once), the callback. */
async function browse(
  rp: Awaited<ReturnType<typeof relyingParty>>,
): Promise<{ status: number; text: string }> {
  const start = await fetch(`${rp.origin}/start`, { redirect: "manual" });
  expect(start.status).toBe(303);
  const cookie = start.headers.get("set-cookie")!.split(";")[0]!;
  const consent = await fetch(start.headers.get("location")!, { redirect: "manual" });
  expect(consent.status).toBe(302);
  const callback = await fetch(consent.headers.get("location")!, { headers: { cookie } });
  return { status: callback.status, text: await callback.text() };
}

const last = (finished: Finished[]) => finished.at(-1)!;

// ---- GitHub ----------------------------------------------------------------------------------

const GITHUB_USER = {
  login: "octocat",
  id: 1,
  node_id: "MDQ6VXNlcjE=",
  avatar_url: "https://github.com/images/error/octocat_happy.gif",
  gravatar_id: "",
  url: "https://api.github.com/users/octocat",
  html_url: "https://github.com/octocat",
  type: "User",
  site_admin: false,
  name: "monalisa octocat",
  company: "GitHub",
  blog: "https://github.com/blog",
  location: "San Francisco",
  email: "octocat@github.com",
  hireable: false,
  bio: "There once was...",
  twitter_username: "monatheoctocat",
  public_repos: 2,
  public_gists: 1,
  followers: 20,
  following: 0,
  created_at: "2008-01-14T04:33:35Z",
  updated_at: "2008-01-14T04:33:35Z",
};

const GITHUB_ERRORS = {
  bad_verification_code: {
    error: "bad_verification_code",
    error_description: "The code passed is incorrect or expired.",
    error_uri:
      "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code",
  },
  bad_refresh_token: {
    error: "bad_refresh_token",
    error_description: "The refresh token passed is incorrect or expired.",
    error_uri:
      "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors",
  },
};

/**
 * GitHub's OAuth endpoints (authorize, access_token) and REST `GET /user`, as GitHub documents them: an
 * OAuth App's token that never expires, or a GitHub App's user token that does (with a refresh token);
 * token errors answered with 200 and an `error` member, as GitHub does.
 */
async function githubStandIn(options: { expiring?: boolean; deny?: boolean; user?: object } = {}) {
  const at = await listenLater();
  closers.push(at.close);
  const seen: Seen = { authorize: [], token: [], user: [] };
  const codes = new Map<string, { challenge: string; redirectUri: string }>();
  const refreshTokens = new Set<string>();
  const accessTokens = new Set<string>();
  const issue = () => {
    const access = `${options.expiring ? "ghu" : "gho"}_${randomBytes(18).toString("hex")}`;
    accessTokens.add(access);
    if (!options.expiring) return { access_token: access, scope: "read:user", token_type: "bearer" };
    const refresh = `ghr_${randomBytes(30).toString("hex")}`;
    refreshTokens.add(refresh);
    return {
      access_token: access,
      expires_in: 28800,
      refresh_token: refresh,
      refresh_token_expires_in: 15897600,
      scope: "",
      token_type: "bearer",
    };
  };
  at.serve(async (req, res) => {
    const url = new URL(req.url!, at.origin);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
    };
    if (url.pathname === "/login/oauth/authorize") {
      const params = Object.fromEntries(url.searchParams);
      seen.authorize.push(params);
      const back = new URL(params.redirect_uri!);
      if (options.deny) {
        back.searchParams.set("error", "access_denied");
        back.searchParams.set("error_description", "The user has denied your application access.");
        back.searchParams.set(
          "error_uri",
          "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#access-denied",
        );
      } else {
        const code = randomBytes(10).toString("hex");
        codes.set(code, { challenge: params.code_challenge!, redirectUri: params.redirect_uri! });
        back.searchParams.set("code", code);
      }
      back.searchParams.set("state", params.state!);
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === "/login/oauth/access_token" && req.method === "POST") {
      const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
      seen.token.push({ form, authorization: req.headers.authorization, accept: req.headers.accept });
      if (form.client_id !== "Iv1.gh-client" || form.client_secret !== "gh-secret")
        return json(200, {
          error: "incorrect_client_credentials",
          error_description: "The client_id and/or client_secret passed are incorrect.",
        });
      if (form.grant_type === "refresh_token") {
        if (!refreshTokens.delete(form.refresh_token!)) return json(200, GITHUB_ERRORS.bad_refresh_token);
        return json(200, issue());
      }
      const code = codes.get(form.code!);
      codes.delete(form.code!);
      if (
        !code ||
        code.challenge !== s256(form.code_verifier ?? "") ||
        code.redirectUri !== form.redirect_uri
      )
        return json(200, GITHUB_ERRORS.bad_verification_code);
      return json(200, issue());
    }
    if (url.pathname === "/api/user") {
      seen.user.push({
        authorization: req.headers.authorization,
        accept: req.headers.accept,
        "user-agent": req.headers["user-agent"],
        "x-github-api-version": req.headers["x-github-api-version"] as string | undefined,
      });
      const token = req.headers.authorization?.replace(/^(Bearer|token) /, "");
      if (!token || !accessTokens.has(token))
        return json(401, {
          message: "Requires authentication",
          documentation_url: "https://docs.github.com/rest/users/users#get-the-authenticated-user",
          status: "401",
        });
      return json(200, options.user ?? GITHUB_USER);
    }
    json(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest", status: "404" });
  });
  return { origin: at.origin, seen };
}

async function githubParty(stand: { origin: string }) {
  const rp = await relyingParty();
  closers.push(rp.close);
  rp.use(
    github({
      clientId: "Iv1.gh-client",
      clientSecret: "gh-secret",
      authorizationEndpoint: `${stand.origin}/login/oauth/authorize`,
      tokenEndpoint: `${stand.origin}/login/oauth/access_token`,
      apiUrl: `${stand.origin}/api`,
      allowHttp: true,
    }),
  );
  return rp;
}

describe("github() against a stand-in of GitHub", () => {
  it("signs in an OAuth App's user: subject github:<numeric id>, login/name/email, the token kept upstream", async () => {
    const stand = await githubStandIn();
    const rp = await githubParty(stand);
    expect(await browse(rp)).toEqual({ status: 200, text: "signed in as github:1" });
    const done = last(rp.finished);
    if (!("identity" in done)) throw new Error(done.error);
    const accessToken = done.identity.upstream!.accessToken;
    expect(accessToken).toMatch(/^gho_/);
    expect(done.identity).toEqual({
      subject: "github:1",
      claims: { login: "octocat", name: "monalisa octocat", email: "octocat@github.com" },
      upstream: { accessToken, tokenType: "bearer", scope: "read:user" },
    });
    const pendingId = done.pending.id;
    expect(stand.seen.authorize).toEqual([
      {
        response_type: "code",
        client_id: "Iv1.gh-client",
        redirect_uri: rp.callbackUrl,
        scope: "read:user",
        state: expect.stringMatching(new RegExp(`^${pendingId}\\.[\\w-]{43}$`)),
        code_challenge: expect.stringMatching(/^[\w-]{43}$/),
        code_challenge_method: "S256",
      },
    ]);
    expect(stand.seen.token).toEqual([
      {
        form: {
          grant_type: "authorization_code",
          code: expect.stringMatching(/^[0-9a-f]{20}$/),
          redirect_uri: rp.callbackUrl,
          code_verifier: expect.stringMatching(/^[\w-]{43}$/),
          client_id: "Iv1.gh-client",
          client_secret: "gh-secret",
        },
        authorization: undefined,
        accept: "application/json",
      },
    ]);
    expect(stand.seen.user).toEqual([
      {
        authorization: `Bearer ${accessToken}`,
        accept: "application/vnd.github+json",
        "user-agent": expect.stringMatching(/^oauth4webapi\//),
        "x-github-api-version": "2022-11-28",
      },
    ]);
  });

  it("a GitHub App's expiring user token: refresh() rotates it; a spent refresh token is GitHub's bad_refresh_token", async () => {
    const stand = await githubStandIn({ expiring: true });
    const rp = await githubParty(stand);
    await browse(rp);
    const done = last(rp.finished);
    if (!("identity" in done)) throw new Error(done.error);
    const first = done.identity.upstream!;
    expect(first).toMatchObject({
      accessToken: expect.stringMatching(/^ghu_/),
      refreshToken: expect.stringMatching(/^ghr_/),
    });
    expect(first.expiresAt! - Date.now()).toBeGreaterThan(28_700_000);
    const next = await rp.signIn().refresh!(first);
    expect(next.accessToken).toMatch(/^ghu_/);
    expect(next.accessToken).not.toBe(first.accessToken);
    expect(next.refreshToken).not.toBe(first.refreshToken);
    expect(stand.seen.token.at(-1)!.form).toEqual({
      grant_type: "refresh_token",
      refresh_token: first.refreshToken,
      client_id: "Iv1.gh-client",
      client_secret: "gh-secret",
    });
    await expect(rp.signIn().refresh!(first)).rejects.toThrow(
      new SignInError(
        "GitHub refused the token refresh: bad_refresh_token (The refresh token passed is incorrect or expired.)",
      ),
    );
  });

  it("the person denies the app: GitHub's access_denied and its description", async () => {
    const rp = await githubParty(await githubStandIn({ deny: true }));
    expect(await browse(rp)).toEqual({
      status: 400,
      text: "GitHub did not sign the person in: access_denied (The user has denied your application access.)",
    });
  });

  it("a code GitHub no longer knows (replayed): bad_verification_code, answered with 200 by GitHub", async () => {
    const stand = await githubStandIn();
    const rp = await githubParty(stand);
    rp.holdNext();
    await browse(rp);
    const { url, cookie } = rp.held[0]!;
    const first = await fetch(url, { headers: { cookie } });
    expect(await first.text()).toBe("signed in as github:1");
    const again = await fetch(url, { headers: { cookie } });
    expect({ status: again.status, text: await again.text() }).toEqual({
      status: 400,
      text: "GitHub refused the code exchange: bad_verification_code (The code passed is incorrect or expired.)",
    });
  });

  it("a /user without a numeric id is refused rather than guessed at", async () => {
    const rp = await githubParty(await githubStandIn({ user: { ...GITHUB_USER, id: "1" } }));
    expect(await browse(rp)).toEqual({ status: 400, text: "GitHub's /user named no numeric account id" });
  });

  it("refuses bad options at once", () => {
    expect(() => github({ clientId: "x", clientSecret: "" })).toThrow("github: clientSecret is required");
    expect(() => github({ clientId: "x", clientSecret: "y", tokenEndpoint: "http://127.0.0.1:1/t" })).toThrow(
      'github: tokenEndpoint must be an https URL (got "http://127.0.0.1:1/t"; allowHttp is for tests)',
    );
  });
});

// ---- Google ----------------------------------------------------------------------------------

const GOOGLE_SUB = "110169484474386276334";

/**
 * Google's OpenID endpoints as its discovery document names them: authorize (which adds `authuser` and
 * `prompt` to the callback, and never `iss`), token (Basic client authentication; an RS256 id_token;
 * no new refresh token on refresh), and the key set.
 */
async function googleStandIn(
  options: { nonce?: string; aud?: string; hd?: string; tokenError?: boolean } = {},
) {
  const at = await listenLater();
  closers.push(at.close);
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const kid = randomBytes(8).toString("hex");
  const seen: Seen = { authorize: [], token: [], user: [] };
  const codes = new Map<string, { challenge: string; nonce: string }>();
  const refreshTokens = new Set<string>();
  const idToken = async (nonce: string | undefined) =>
    new SignJWT({
      azp: "google-client.apps.googleusercontent.com",
      email: "someone@example.com",
      email_verified: true,
      at_hash: "HK6E_P6Dh8Y93mRNtsDB1Q",
      name: "Some One",
      picture: "https://lh3.googleusercontent.com/a/photo",
      given_name: "Some",
      family_name: "One",
      ...(options.hd ? { hd: options.hd } : {}),
      ...(nonce !== undefined ? { nonce: options.nonce ?? nonce } : {}),
    })
      .setProtectedHeader({ alg: "RS256", kid, typ: "JWT" })
      .setIssuer(at.origin)
      .setAudience(options.aud ?? "google-client.apps.googleusercontent.com")
      .setSubject(GOOGLE_SUB)
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(privateKey);
  at.serve(async (req, res) => {
    const url = new URL(req.url!, at.origin);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
    };
    if (url.pathname === "/.well-known/openid-configuration")
      return json(200, {
        issuer: at.origin,
        authorization_endpoint: `${at.origin}/o/oauth2/v2/auth`,
        device_authorization_endpoint: `${at.origin}/device/code`,
        token_endpoint: `${at.origin}/token`,
        userinfo_endpoint: `${at.origin}/v1/userinfo`,
        revocation_endpoint: `${at.origin}/revoke`,
        jwks_uri: `${at.origin}/oauth2/v3/certs`,
        response_types_supported: [
          "code",
          "token",
          "id_token",
          "code token",
          "code id_token",
          "token id_token",
          "code token id_token",
          "none",
        ],
        response_modes_supported: ["query", "fragment", "form_post"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        scopes_supported: ["openid", "email", "profile"],
        token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
        claims_supported: [
          "aud",
          "email",
          "email_verified",
          "exp",
          "family_name",
          "given_name",
          "iat",
          "iss",
          "name",
          "picture",
          "sub",
        ],
        code_challenge_methods_supported: ["plain", "S256"],
        grant_types_supported: [
          "authorization_code",
          "refresh_token",
          "urn:ietf:params:oauth:grant-type:device_code",
          "urn:ietf:params:oauth:grant-type:jwt-bearer",
        ],
      });
    if (url.pathname === "/oauth2/v3/certs")
      return json(200, { keys: [{ ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" }] });
    if (url.pathname === "/o/oauth2/v2/auth") {
      const params = Object.fromEntries(url.searchParams);
      seen.authorize.push(params);
      const code = `4/0A${randomBytes(20).toString("base64url")}`;
      codes.set(code, { challenge: params.code_challenge!, nonce: params.nonce! });
      const back = new URL(params.redirect_uri!);
      back.searchParams.set("state", params.state!);
      back.searchParams.set("code", code);
      back.searchParams.set(
        "scope",
        "email profile openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile",
      );
      back.searchParams.set("authuser", "0");
      back.searchParams.set("prompt", "consent");
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === "/token" && req.method === "POST") {
      const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
      seen.token.push({ form, authorization: req.headers.authorization, accept: req.headers.accept });
      // RFC 6749 2.3.1: the id and secret are form-urlencoded, then joined and base64-encoded
      const [id, secret] = Buffer.from(req.headers.authorization?.replace(/^Basic /, "") ?? "", "base64")
        .toString()
        .split(":")
        .map((part) => decodeURIComponent(part.replaceAll("+", " ")));
      if (id !== "google-client.apps.googleusercontent.com" || secret !== "google-secret")
        return json(401, { error: "invalid_client", error_description: "Unauthorized" });
      const tokens = {
        access_token: `ya29.a0${randomBytes(24).toString("base64url")}`,
        expires_in: 3599,
        scope:
          "https://www.googleapis.com/auth/userinfo.email openid https://www.googleapis.com/auth/userinfo.profile",
        token_type: "Bearer",
      };
      if (form.grant_type === "refresh_token") {
        if (!refreshTokens.has(form.refresh_token!))
          return json(400, { error: "invalid_grant", error_description: "Bad Request" });
        return json(200, { ...tokens, id_token: await idToken(undefined) });
      }
      const code = codes.get(form.code!);
      codes.delete(form.code!);
      if (options.tokenError || !code || code.challenge !== s256(form.code_verifier ?? ""))
        return json(400, { error: "invalid_grant", error_description: "Bad Request" });
      const refresh = `1//0g${randomBytes(30).toString("base64url")}`;
      refreshTokens.add(refresh);
      return json(200, { ...tokens, refresh_token: refresh, id_token: await idToken(code.nonce) });
    }
    json(404, { error: "not_found" });
  });
  return { origin: at.origin, seen };
}

async function googleParty(stand: { origin: string }, hostedDomain?: string) {
  const rp = await relyingParty();
  closers.push(rp.close);
  rp.use(
    google({
      clientId: "google-client.apps.googleusercontent.com",
      clientSecret: "google-secret",
      issuer: stand.origin,
      allowHttp: true,
      ...(hostedDomain ? { hostedDomain } : {}),
    }),
  );
  return rp;
}

describe("google() against a stand-in of Google", () => {
  it("signs in: subject google:<sub>, the id_token's profile claims, offline access asked for, Basic client auth", async () => {
    const stand = await googleStandIn();
    const rp = await googleParty(stand);
    expect(await browse(rp)).toEqual({ status: 200, text: `signed in as google:${GOOGLE_SUB}` });
    const done = last(rp.finished);
    if (!("identity" in done)) throw new Error(done.error);
    const upstream = done.identity.upstream!;
    expect(done.identity).toEqual({
      subject: `google:${GOOGLE_SUB}`,
      claims: {
        name: "Some One",
        given_name: "Some",
        family_name: "One",
        email: "someone@example.com",
        email_verified: true,
        picture: "https://lh3.googleusercontent.com/a/photo",
      },
      upstream: {
        accessToken: expect.stringMatching(/^ya29\.a0/),
        tokenType: "bearer",
        refreshToken: expect.stringMatching(/^1\/\/0g/),
        expiresAt: expect.any(Number),
        scope:
          "https://www.googleapis.com/auth/userinfo.email openid https://www.googleapis.com/auth/userinfo.profile",
        idToken: expect.any(String),
      },
    });
    expect(stand.seen.authorize).toEqual([
      {
        response_type: "code",
        client_id: "google-client.apps.googleusercontent.com",
        redirect_uri: rp.callbackUrl,
        scope: "openid email profile",
        state: expect.stringMatching(new RegExp(`^${done.pending.id}\\.[\\w-]{43}$`)),
        code_challenge: expect.stringMatching(/^[\w-]{43}$/),
        code_challenge_method: "S256",
        nonce: expect.stringMatching(/^[\w-]{43}$/),
        access_type: "offline",
      },
    ]);
    expect(stand.seen.token[0]!.form).toEqual({
      grant_type: "authorization_code",
      code: expect.stringMatching(/^4\/0A/),
      redirect_uri: rp.callbackUrl,
      code_verifier: expect.stringMatching(/^[\w-]{43}$/),
    });

    // refresh: a new access token; Google sends no new refresh token, so the old one stays
    const next = await rp.signIn().refresh!(upstream);
    expect(next.accessToken).not.toBe(upstream.accessToken);
    expect(next.refreshToken).toBe(upstream.refreshToken);
    expect(stand.seen.token.at(-1)!.form).toEqual({
      grant_type: "refresh_token",
      refresh_token: upstream.refreshToken,
    });
  });

  it("an id_token with another nonce, or for another client, is refused", async () => {
    const nonce = await googleParty(await googleStandIn({ nonce: "not-the-nonce-sent" }));
    expect(await browse(nonce)).toEqual({
      status: 400,
      text: `Google's answer to the code exchange is not valid: unexpected ID Token "nonce" claim value`,
    });
    const aud = await googleParty(await googleStandIn({ aud: "another-client.apps.googleusercontent.com" }));
    expect(await browse(aud)).toEqual({
      status: 400,
      text: `Google's answer to the code exchange is not valid: unexpected JWT "aud" (audience) claim value`,
    });
  });

  it("hostedDomain: hd is asked for, and an account of another domain is refused", async () => {
    const other = await googleStandIn({ hd: "other.example" });
    const rp = await googleParty(other, "example.com");
    expect(await browse(rp)).toEqual({
      status: 400,
      text: "this Google account is not one of example.com (hd other.example)",
    });
    expect(other.seen.authorize[0]).toMatchObject({ hd: "example.com", access_type: "offline" });
    const same = await googleParty(await googleStandIn({ hd: "example.com" }), "example.com");
    expect(await browse(same)).toEqual({ status: 200, text: `signed in as google:${GOOGLE_SUB}` });
  });

  it("Google's token error: invalid_grant with its description, as a SignInError", async () => {
    const rp = await googleParty(await googleStandIn({ tokenError: true }));
    expect(await browse(rp)).toEqual({
      status: 400,
      text: "Google refused the code exchange: invalid_grant (Bad Request)",
    });
    expect(last(rp.finished)).toEqual({
      error: "SignInError: Google refused the code exchange: invalid_grant (Bad Request)",
    });
  });
});
