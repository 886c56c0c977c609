// oidc(): sign-in at a real OpenID provider (oidc-provider 9, started here on 127.0.0.1), the person's
// login and consent driven in headless chromium; then refresh, and the callbacks that must be refused.
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oidc } from "../../src/auth/index.js";
import { SignInError } from "../../src/auth/sign-in.js";
import type { Identity } from "../../src/auth/store.js";
import { BROWSER_TIMEOUT, chromiumFor, launchBrowser, poll } from "../browser.js";
import {
  type Finished,
  listenLater,
  OP_CLIENT,
  OP_PUBLIC_CLIENT,
  relyingParty,
  startOpenIdProvider,
} from "../upstream-helpers.js";

const chromium = await chromiumFor("sign-in at oidc-provider in chromium");

let op: Awaited<ReturnType<typeof startOpenIdProvider>>;
let rp: Awaited<ReturnType<typeof relyingParty>>;
let browser: BrowserContext;

beforeAll(async () => {
  rp = await relyingParty();
  op = await startOpenIdProvider([rp.callbackUrl]);
  rp.use(
    oidc({ issuer: op.issuer, clientId: OP_CLIENT.id, clientSecret: OP_CLIENT.secret, allowHttp: true }),
  );
  if (chromium) browser = await launchBrowser(chromium);
});
afterAll(async () => {
  await browser?.close();
  await rp?.close();
  await op?.close();
});

/** A page that reaches only 127.0.0.1 (the provider's page imports a web font from elsewhere). */
async function localPage(context: BrowserContext): Promise<Page> {
  await context.clearCookies();
  const page = await context.newPage();
  await page.route(
    (url) => url.hostname !== "127.0.0.1",
    (route) => route.abort(),
  );
  return page;
}

/** Signs `login` in at the provider's development pages: the login form, then consent. */
async function logInAndConsent(page: Page, login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
  await page.locator('input[name="prompt"][value="consent"]').waitFor({ state: "attached" });
  await page.locator('button[type="submit"]').click();
}

const identities = (list: Finished[]) =>
  list.filter((f): f is Extract<Finished, { identity: Identity }> => "identity" in f);

describe.skipIf(!chromium)("oidc() against oidc-provider, in chromium", { timeout: BROWSER_TIMEOUT }, () => {
  it("signs the person in: PKCE, state and nonce sent; identity namespaced by the issuer; upstream tokens kept", async () => {
    const page = await localPage(browser);
    const before = rp.finished.length;
    await page.goto(`${rp.origin}/start`);
    await logInAndConsent(page, "alice");
    await poll(() => page.url().startsWith(rp.callbackUrl) && rp.finished.length > before).toBe(true);
    await poll(() => page.locator("body").textContent()).toBe(`signed in as ${op.issuer}#alice`);

    // the authorization request that begin sent the browser to
    const sent = rp.redirects.at(-1)!;
    expect(sent.origin + sent.pathname).toBe(`${op.issuer}/auth`);
    const params = Object.fromEntries(sent.searchParams);
    const pendingId = [...rp.pendings.keys()].at(-1)!;
    expect(params).toMatchObject({
      response_type: "code",
      client_id: OP_CLIENT.id,
      redirect_uri: rp.callbackUrl,
      scope: "openid profile email",
      code_challenge_method: "S256",
    });
    expect(params.code_challenge).toMatch(/^[\w-]{43}$/);
    expect(params.nonce).toMatch(/^[\w-]{43}$/);
    // the state names the authorization in progress and carries a random part that only it keeps
    expect(params.state).toMatch(new RegExp(`^${pendingId}\\.[\\w-]{43}$`));
    const kept = rp.pendings.get(pendingId)!.signIn!;
    expect(Object.keys(kept).sort()).toEqual(["browser", "nonce", "state", "verifier"]);
    expect(params.state).toBe(`${pendingId}.${kept.state}`);

    // the provider's callback carried the code, the state and its issuer (RFC 9207)
    const callback = new URL(page.url());
    expect(callback.searchParams.get("iss")).toBe(op.issuer);
    expect(callback.searchParams.get("state")).toBe(params.state);

    const done = rp.finished.at(-1)!;
    if (!("identity" in done)) throw new Error(done.error);
    expect(done.pending.id).toBe(pendingId);
    // the cookie that tied the callback to this browser is spent: cleared with the answer
    const callbackPath = new URL(rp.callbackUrl).pathname;
    expect(done.setCookie).toEqual([
      `picomcp-signin-${kept.state}=; Path=${callbackPath}; Max-Age=0; HttpOnly; SameSite=Lax`,
    ]);
    const { upstream, ...who } = done.identity;
    expect(who).toEqual({
      subject: `${op.issuer}#alice`,
      claims: { name: "Person alice", email: "alice@example.test", email_verified: true },
    });
    expect(upstream).toMatchObject({
      accessToken: expect.any(String),
      tokenType: "bearer",
      refreshToken: expect.any(String),
      idToken: expect.any(String),
      scope: "openid profile email",
    });
    expect(upstream!.expiresAt! - Date.now()).toBeGreaterThan(3500_000);
    expect(upstream!.expiresAt! - Date.now()).toBeLessThanOrEqual(3600_000);
    // the upstream access token works at the provider
    const me = await fetch(`${op.issuer}/me`, {
      headers: { authorization: `Bearer ${upstream!.accessToken}` },
    });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ sub: "alice", email: "alice@example.test" });

    await page.close();
  });

  it("refresh() gets new upstream tokens with the refresh token, for the same person", async () => {
    const first = identities(rp.finished)[0]!.identity.upstream!;
    const refreshed = await rp.signIn().refresh!(first);
    expect(refreshed.accessToken).not.toBe(first.accessToken);
    expect(refreshed.refreshToken).toEqual(expect.any(String));
    expect(refreshed.expiresAt! - Date.now()).toBeGreaterThan(3500_000);
    const me = await fetch(`${op.issuer}/me`, {
      headers: { authorization: `Bearer ${refreshed.accessToken}` },
    });
    expect(await me.json()).toMatchObject({ sub: "alice" });
    // a refresh token the provider does not know: the provider's own error, as a SignInError
    const refused = rp.signIn().refresh!({ ...first, refreshToken: "not-a-refresh-token" });
    await expect(refused).rejects.toThrow(SignInError);
    await expect(refused).rejects.toThrow(/refused the token refresh: invalid_grant/);
    await expect(rp.signIn().refresh!({ accessToken: "a" })).rejects.toThrow(/gave no refresh token/);
    // tokens that were another person's (by the id_token kept with them; its sub in UTF-8): the refresh
    // answers for alice, and is refused
    const payload = Buffer.from(JSON.stringify({ sub: "mällory" })).toString("base64url");
    const theirs = rp.signIn().refresh!({ ...refreshed, idToken: `e30.${payload}.c2ln` });
    await expect(theirs).rejects.toThrow(/refreshed the tokens of another person \(sub alice, not mällory\)/);
  });

  it("refuses a tampered state, another browser, a wrong or missing iss; the untouched callback still works", async () => {
    const page = await localPage(browser);
    // the callback is held, not finished, so each variant can be tried before the real one
    rp.holdNext();
    const heldBefore = rp.held.length;
    await page.goto(`${rp.origin}/start`);
    await logInAndConsent(page, "bob");
    await poll(() => rp.held.length).toBe(heldBefore + 1);
    const { cookie, url: heldUrl } = rp.held.at(-1)!;
    expect(cookie).toMatch(/picomcp-signin-[\w-]{43}=[\w-]{43}/);
    const real = new URL(heldUrl);
    const state = real.searchParams.get("state")!;
    const dot = state.lastIndexOf(".");
    const variant = (change: (params: URLSearchParams) => void) => {
      const url = new URL(real);
      change(url.searchParams);
      return url.href;
    };
    const attempts: [string, string, { cookie?: string }][] = [
      [
        variant((p) => p.set("state", `${state.slice(0, dot)}.${"A".repeat(43)}`)),
        "does not match this sign-in",
        { cookie },
      ],
      [
        variant((p) => p.set("state", `pending-nope.${state.slice(dot + 1)}`)),
        "is unknown or has expired",
        { cookie },
      ],
      [variant((p) => p.delete("state")), "has no valid state", { cookie }],
      [real.href, "was started in another browser", {}],
      [
        real.href,
        "was started in another browser",
        { cookie: cookie.replace(/(picomcp-signin-[\w-]+=)[\w-]+/g, `$1${"B".repeat(43)}`) },
      ],
      [
        variant((p) => p.set("iss", "https://evil.example")),
        'unexpected "iss" (issuer) response parameter value',
        { cookie },
      ],
      [variant((p) => p.delete("iss")), 'response parameter "iss" (issuer) missing', { cookie }],
    ];
    for (const [url, message, headers] of attempts) {
      const answer = await fetch(url, { headers });
      expect({ status: answer.status, text: await answer.text() }).toEqual({
        status: 400,
        text: expect.stringContaining(message),
      });
    }
    const genuine = await fetch(real.href, { headers: { cookie } });
    expect(await genuine.text()).toBe(`signed in as ${op.issuer}#bob`);
    // a replay of the same callback (same browser, same cookie) is refused: the provider spent its code
    const replay = await fetch(real.href, { headers: { cookie } });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toMatch(/^127\.0\.0\.1:\d+ refused the code exchange: invalid_grant/);
    await page.close();
  });

  it("a public client (no secret): PKCE alone at the token endpoint, the same identity", async () => {
    rp.use(oidc({ issuer: op.issuer, clientId: OP_PUBLIC_CLIENT, allowHttp: true }));
    try {
      const page = await localPage(browser);
      const before = rp.finished.length;
      await page.goto(`${rp.origin}/start`);
      await logInAndConsent(page, "dave");
      await poll(() => rp.finished.length).toBe(before + 1);
      const done = rp.finished.at(-1)!;
      if (!("identity" in done)) throw new Error(done.error);
      expect(done.identity).toMatchObject({
        subject: `${op.issuer}#dave`,
        claims: { name: "Person dave", email: "dave@example.test", email_verified: true },
        upstream: { accessToken: expect.any(String), refreshToken: expect.any(String) },
      });
      expect(rp.redirects.at(-1)!.searchParams.get("client_id")).toBe(OP_PUBLIC_CLIENT);
      const refreshed = await rp.signIn().refresh!(done.identity.upstream!);
      expect(refreshed.accessToken).not.toBe(done.identity.upstream!.accessToken);
      await page.close();
    } finally {
      rp.use(
        oidc({ issuer: op.issuer, clientId: OP_CLIENT.id, clientSecret: OP_CLIENT.secret, allowHttp: true }),
      );
    }
  });

  it("a person who cancels at the provider: access_denied, as a SignInError with the provider's words", async () => {
    const page = await localPage(browser);
    const before = rp.finished.length;
    await page.goto(`${rp.origin}/start`);
    await page.locator("a", { hasText: "Cancel" }).click();
    await poll(() => rp.finished.length).toBe(before + 1);
    expect(rp.finished.at(-1)).toEqual({
      error: `SignInError: 127.0.0.1:${new URL(op.issuer).port} did not sign the person in: access_denied (End-User aborted interaction)`,
    });
    await page.close();
  });
});

describe("oidc() without a reachable issuer", () => {
  it("begin fails with a SignInError naming discovery, and discovers again on the next sign-in", async () => {
    const closed = await listenLater();
    await closed.close();
    const down = oidc({ issuer: closed.origin, clientId: "x", allowHttp: true, timeoutMs: 5000 });
    const pending = {
      id: "p1",
      clientId: "c",
      redirectUri: "http://127.0.0.1:1/cb",
      codeChallenge: "x".repeat(43),
      resource: "http://127.0.0.1:1/mcp",
      scopes: [],
      createdAt: Date.now(),
    };
    const start = {
      request: new Request("http://127.0.0.1:1/consent"),
      pending,
      callbackUrl: "http://127.0.0.1:1/cb",
    };
    await expect(down.begin(start)).rejects.toThrow(
      new SignInError(
        `${closed.origin.slice(7)} cannot be reached for the discovery: connect ECONNREFUSED ${closed.origin.slice(7)}`,
      ),
    );
    await expect(down.begin(start)).rejects.toThrow(/cannot be reached for the discovery/);
  });

  it("refuses bad options at once", () => {
    expect(() => oidc({ issuer: "http://idp.example", clientId: "x" })).toThrow(
      'oidc: issuer must be an https URL (got "http://idp.example"; allowHttp is for tests)',
    );
    expect(() => oidc({ issuer: "https://idp.example", clientId: "" })).toThrow("oidc: clientId is required");
    expect(() => oidc({ issuer: "https://idp.example", clientId: "x", scopes: ["email"] })).toThrow(
      'oidc: scopes must include "openid"',
    );
    expect(() => oidc({ issuer: "https://idp.example", clientId: "x", callbackPath: "oauth" })).toThrow(
      'oidc: callbackPath must be a path starting with "/"',
    );
  });
});
