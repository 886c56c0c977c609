// github() against a small stand-in of GitHub's endpoints on 127.0.0.1 (authorize, access_token, GET /user),
// answering with the JSON shapes GitHub documents; the browser's part (redirects, cookies) done by fetch.
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { github } from "../../src/auth/index.js";
import { SignInError } from "../../src/auth/sign-in.js";
import { bodyOf, browse, last, listenLater, relyingParty, type Seen, s256 } from "../upstream-helpers.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

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
async function githubStandIn(
  options: { expiring?: boolean; deny?: boolean; user?: object; silent?: boolean; iss?: string | null } = {},
) {
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
      // GitHub names itself in the callback (RFC 9207), as https://github.com/login/oauth
      const iss = options.iss === undefined ? `${at.origin}/login/oauth` : options.iss;
      if (iss !== null) back.searchParams.set("iss", iss);
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === "/login/oauth/access_token" && req.method === "POST") {
      if (options.silent) return; // never answers
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

async function githubParty(stand: { origin: string }, timeoutMs?: number) {
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
      ...(timeoutMs ? { timeoutMs } : {}),
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

  it("GitHub's iss: checked when sent (another issuer refused before any code exchange), not required when absent", async () => {
    const wrong = await githubStandIn({ iss: "https://github.example/login/oauth" });
    const rp = await githubParty(wrong);
    expect(await browse(rp)).toEqual({
      status: 400,
      text: `GitHub's answer to the callback is not valid: unexpected "iss" (issuer) response parameter value`,
    });
    expect(wrong.seen.token).toEqual([]);
    const none = await githubParty(await githubStandIn({ iss: null }));
    expect(await browse(none)).toEqual({ status: 200, text: "signed in as github:1" });
  });

  it("a token endpoint that never answers: refused at timeoutMs, the provider named", async () => {
    const rp = await githubParty(await githubStandIn({ silent: true }), 300);
    expect(await browse(rp)).toEqual({
      status: 400,
      text: "GitHub did not answer the code exchange in time",
    });
  });

  it("refuses bad options at once", () => {
    expect(() => github({ clientId: "x", clientSecret: "" })).toThrow("github: clientSecret is required");
    expect(() => github({ clientId: "x", clientSecret: "y", tokenEndpoint: "http://127.0.0.1:1/t" })).toThrow(
      'github: tokenEndpoint must be an https URL (got "http://127.0.0.1:1/t"; allowHttp is for tests)',
    );
  });
});
