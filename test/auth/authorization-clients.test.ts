// picomcp's authorization server: confidential clients, registration and token-endpoint errors, scopes,
// a SignIn that leaves for its provider and comes back with upstream tokens refreshed, and a failing store.
import { describe, expect, it, vi } from "vitest";
import {
  type AuthStore,
  createAuthorizationServer,
  MemoryAuthStore,
  type SignIn,
  SignInError,
  upstreamToken,
} from "../../src/auth/index.js";
import { withPeer } from "../../src/http/index.js";
import {
  authorizeUrl,
  getCode,
  locationOf,
  openConsent,
  pkce,
  REDIRECT,
  redeem,
  registerClient,
  signedIn,
  standard,
  submitConsent,
  tokenRequest,
  useAuthServers,
} from "./as-helpers.js";

const serve = useAuthServers();

describe("clients", () => {
  it("takes a confidential client's secret by Basic, and refuses a wrong or missing one", async () => {
    const s = await serve();
    const res = await fetch(`${s.origin}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: "Server app" }),
    });
    expect(res.status).toBe(201);
    const reg = await res.json();
    expect(reg).toMatchObject({
      client_id: expect.any(String),
      client_secret: expect.any(String),
      client_secret_expires_at: 0,
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
    });
    expect(reg.client_secret_hash).toBeUndefined();
    const basic = (id: string, secret: string) => ({
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`,
    });
    const got = await getCode(s, reg.client_id);
    const form = {
      grant_type: "authorization_code",
      code: got.code,
      code_verifier: got.verifier,
      redirect_uri: REDIRECT,
    };
    const wrong = await tokenRequest(s.origin, form, basic(reg.client_id, "nope"));
    expect(wrong).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    expect(wrong.headers.get("www-authenticate")).toBe('Basic realm="token"');
    const badHeader = await tokenRequest(s.origin, form, { authorization: "Basic !!" });
    expect(badHeader).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    expect(badHeader.headers.get("www-authenticate")).toBe('Basic realm="token"');
    // a client that did not use the Authorization header: 400 (RFC 6749 §5.2), no challenge
    const noSecret = await tokenRequest(s.origin, { ...form, client_id: reg.client_id });
    expect(noSecret).toMatchObject({ status: 400, body: { error: "invalid_client" } });
    expect(noSecret.headers.get("www-authenticate")).toBe(null);
    const posted = await tokenRequest(s.origin, {
      ...form,
      client_id: reg.client_id,
      client_secret: reg.client_secret,
    });
    expect(posted).toMatchObject({ status: 400, body: { error: "invalid_client" } });
    expect(posted.headers.get("www-authenticate")).toBe(null);
    const ok = await tokenRequest(s.origin, form, basic(reg.client_id, reg.client_secret));
    expect(ok.status).toBe(200);
  });

  it("shows a registered client's website as what it says of itself, not as a fact", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin, { client_uri: "https://bank.example/" });
    const { html } = await openConsent(
      authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource)),
    );
    expect(html).toContain("<dt>Says its website is</dt><dd>bank.example</dd>");
    expect(html).not.toContain("<dt>Its website</dt>");
  });

  it("refuses registrations whose metadata is wrong, with RFC 7591's errors", async () => {
    // every attempt counts against the address's budget, a refused one too
    const s = await serve({ registration: { perAddress: 100 } });
    const cases: [unknown, string][] = [
      [{}, "invalid_redirect_uri"],
      [{ redirect_uris: [] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["http://example.com/cb"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://a.example/cb#x"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["cb"] }, "invalid_redirect_uri"],
      [{ redirect_uris: [REDIRECT], grant_types: ["implicit"] }, "invalid_client_metadata"],
      [
        { redirect_uris: [REDIRECT], token_endpoint_auth_method: "private_key_jwt" },
        "invalid_client_metadata",
      ],
      [{ redirect_uris: [REDIRECT], response_types: ["token"] }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT], client_uri: "javascript:x" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT], client_name: "x".repeat(500) }, "invalid_client_metadata"],
      // control and text-direction characters, refused as in a metadata document
      [{ redirect_uris: [REDIRECT], client_name: "Notes\u202egpj.exe" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT], client_name: "Notes\u0000" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT], client_name: "Notes\u2067" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT], software_id: "a\u200fb" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT], client_uri: "https://a.example/\u202e" }, "invalid_client_metadata"],
      [{ redirect_uris: [REDIRECT], logo_uri: "https://a.example/\u0007" }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://a.example/cb\u202e"] }, "invalid_redirect_uri"],
      [[1, 2], "invalid_client_metadata"],
    ];
    for (const [body, error] of cases) {
      const res = await fetch(`${s.origin}/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect((await res.json()).error, JSON.stringify(body)).toBe(error);
    }
    const form = await fetch(`${s.origin}/register`, { method: "POST", body: "redirect_uris=x" });
    expect(form.status).toBe(400);
    // native apps: loopback http and a reverse-domain scheme
    await registerClient(s.origin, { redirect_uris: ["http://[::1]:8080/cb", "com.example.app:/cb"] });
  });
});

describe("the token endpoint's errors", () => {
  it("answers each bad request with its RFC 6749 error, never cached", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const cases: [{ [k: string]: string }, number, string][] = [
      [{ client_id: clientId }, 400, "invalid_request"],
      [{ client_id: clientId, grant_type: "password" }, 400, "unsupported_grant_type"],
      [{ client_id: clientId, grant_type: "client_credentials" }, 400, "unsupported_grant_type"],
      [{ grant_type: "authorization_code" }, 400, "invalid_client"],
      [{ client_id: "unknown", grant_type: "authorization_code" }, 400, "invalid_client"],
      [{ client_id: clientId, grant_type: "authorization_code" }, 400, "invalid_request"],
      [{ client_id: clientId, grant_type: "refresh_token" }, 400, "invalid_request"],
    ];
    for (const [form, status, error] of cases) {
      const r = await tokenRequest(s.origin, form);
      expect([r.status, r.body.error], JSON.stringify(form)).toEqual([status, error]);
      expect(r.headers.get("cache-control")).toBe("no-store");
    }
    const dup = await fetch(`${s.origin}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=authorization_code&client_id=${clientId}&client_id=${clientId}`,
    });
    expect([dup.status, (await dup.json()).error]).toEqual([400, "invalid_request"]);
    const json = await fetch(`${s.origin}/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect([json.status, (await json.json()).error]).toEqual([400, "invalid_request"]);
    const get = await fetch(`${s.origin}/token`);
    expect([get.status, get.headers.get("allow")]).toEqual([405, "POST"]);
    const pre = await fetch(`${s.origin}/token`, { method: "OPTIONS" });
    expect([pre.status, pre.headers.get("access-control-allow-origin")]).toEqual([204, "*"]);
  });

  it("grants the scopes asked among those offered, all of them when none is asked", async () => {
    const s = await serve({ scopes: ["notes:read", "notes:write"] });
    const clientId = await registerClient(s.origin);
    const all = await redeem(s, clientId, await getCode(s, clientId, {}));
    expect(all.body.scope).toBe("notes:read notes:write");
    const some = await redeem(
      s,
      clientId,
      await getCode(s, clientId, { scope: "notes:read offline_access" }),
    );
    expect(some.body.scope).toBe("notes:read");
    const res = await fetch(
      authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource, { scope: "admin" })),
      { redirect: "manual" },
    );
    expect(locationOf(res).searchParams.get("error")).toBe("invalid_scope");
  });
});

describe("a SignIn that leaves for its provider", () => {
  function fakeProvider() {
    const refreshed: string[] = [];
    const signIn: SignIn = {
      name: "Example IdP",
      callbackPath: "/oauth/callback",
      async begin({ pending, callbackUrl }) {
        pending.signIn = { nonce: "n-1" };
        const to = new URL("https://idp.example/authorize");
        to.searchParams.set("state", pending.id);
        to.searchParams.set("redirect_uri", callbackUrl);
        return new Response(null, { status: 303, headers: { location: to.href } });
      },
      async finish({ request, load }) {
        const url = new URL(request.url);
        if (url.searchParams.get("error")) throw new SignInError("The provider said no");
        const pending = await load(url.searchParams.get("state") ?? "");
        if (pending === undefined) throw new SignInError("Unknown sign-in");
        if (pending.signIn?.nonce !== "n-1") throw new SignInError("Not this browser's sign-in");
        return {
          pending,
          identity: {
            subject: "dave",
            upstream: { accessToken: "up-1", refreshToken: "ur-1", expiresAt: Date.now() - 1000 },
          },
        };
      },
      async refresh(tokens) {
        refreshed.push(tokens.refreshToken!);
        return { accessToken: `up-${refreshed.length + 1}`, expiresAt: Date.now() + 3600_000 };
      },
    };
    return { signIn, refreshed };
  }

  it("consents, leaves, comes back to the callback, and a tool gets the upstream token refreshed", async () => {
    const { signIn, refreshed } = fakeProvider();
    const s = await serve({ signIn, authenticate: undefined });
    const clientId = await registerClient(s.origin);
    const { verifier, challenge } = pkce();
    const form = await openConsent(authorizeUrl(s.origin, standard(clientId, challenge, s.resource)));
    expect(form.html).toContain("Example IdP");
    const away = locationOf(await submitConsent(s.origin, form));
    expect(away.origin).toBe("https://idp.example");
    expect(away.searchParams.get("redirect_uri")).toBe(`${s.origin}/oauth/callback`);
    const back = await fetch(`${s.origin}/oauth/callback?state=${away.searchParams.get("state")}`, {
      redirect: "manual",
    });
    expect(back.status).toBe(302);
    const loc = locationOf(back);
    expect(loc.searchParams.get("iss")).toBe(s.origin);
    expect(loc.searchParams.get("state")).toBe("st-123");
    // the callback once only
    const again = await fetch(`${s.origin}/oauth/callback?state=${away.searchParams.get("state")}`, {
      redirect: "manual",
    });
    expect(again.status).toBe(400);
    const t = await redeem(s, clientId, { code: loc.searchParams.get("code")!, verifier });
    expect(t.status).toBe(200);
    expect(JSON.stringify(t.body)).not.toContain("up-1");
    const info = await s.as.verifyToken(t.body.access_token as string, new Request(s.resource));
    expect(info?.subject).toBe("dave");
    expect(await Promise.all([upstreamToken(info), upstreamToken(info)])).toEqual(["up-2", "up-2"]);
    expect(await upstreamToken(info)).toBe("up-2");
    expect(refreshed).toEqual(["ur-1"]);
    // the refreshed upstream token is saved in the grant, and the grant still refreshes for the client
    const r = await tokenRequest(s.origin, {
      grant_type: "refresh_token",
      refresh_token: t.body.refresh_token as string,
      client_id: clientId,
    });
    expect(r.status).toBe(200);
    expect(
      await upstreamToken(await s.as.verifyToken(r.body.access_token as string, new Request(s.resource))),
    ).toBe("up-2");
  });

  it("shows the provider's refusal on a page", async () => {
    const { signIn } = fakeProvider();
    const s = await serve({ signIn, authenticate: undefined });
    const res = await fetch(`${s.origin}/oauth/callback?error=access_denied`, { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("The provider said no");
  });
});

describe("failures", () => {
  it("answers 503 temporarily_unavailable when the store holds as many grants as it may", async () => {
    const s = await serve({ store: new MemoryAuthStore({ maxGrants: 1 }) });
    await signedIn(s);
    const clientId = await registerClient(s.origin);
    const r = await redeem(s, clientId, await getCode(s, clientId));
    expect(r).toMatchObject({ status: 503, body: { error: "temporarily_unavailable" } });
    expect(r.headers.get("retry-after")).toBe("60");
  });

  it("counts registrations by the peer withPeer tells when handle is given no address", async () => {
    const as = createAuthorizationServer({
      issuer: "http://127.0.0.1:1",
      resources: ["http://127.0.0.1:1/mcp"],
      authenticate: () => undefined,
      registration: { perAddress: 1 },
    });
    const reg = (peer: string) =>
      as.handle(
        withPeer(
          new Request("http://127.0.0.1:1/register", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
          }),
          peer,
        ),
      );
    expect((await reg("127.0.0.5"))?.status).toBe(201);
    expect((await reg("127.0.0.5"))?.status).toBe(429);
    expect((await reg("::ffff:127.0.0.6"))?.status).toBe(201);
    expect((await reg("127.0.0.6"))?.status).toBe(429);
  });

  it("never throws out of handle: a failing store gets a 500 with the error JSON or page, and onError hears it", async () => {
    const broken = new Proxy(new MemoryAuthStore(), {
      get(target, name) {
        if (name === "getClient" || name === "hit") return () => Promise.reject(new Error("store down"));
        const v = Reflect.get(target, name);
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) as AuthStore;
    const onError = vi.fn();
    const as = createAuthorizationServer({
      issuer: "http://127.0.0.1:1",
      resources: ["http://127.0.0.1:1/mcp"],
      authenticate: () => ({ subject: "x" }),
      store: broken,
      onError,
    });
    const token = await as.handle(
      new Request("http://127.0.0.1:1/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=authorization_code&client_id=a",
      }),
    );
    expect(token?.status).toBe(500);
    expect(token?.headers.get("cache-control")).toBe("no-store");
    expect(await token?.json()).toEqual({
      error: "server_error",
      error_description: "The authorization server failed; try again",
    });
    const page = await as.handle(new Request("http://127.0.0.1:1/authorize?client_id=a"));
    expect(page?.status).toBe(500);
    expect(page?.headers.get("content-type")).toMatch(/^text\/html/);
    expect(onError).toHaveBeenCalledTimes(2);
    const meta = await as.handle(new Request("http://127.0.0.1:1/.well-known/oauth-authorization-server"));
    expect(meta?.status).toBe(200);
  });
});
