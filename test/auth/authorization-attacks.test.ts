// The attacks on an authorization server, over raw HTTP against picomcp's: code replay, PKCE downgrade and
// mismatch, redirect_uri variants, resource swap, refresh replay after rotation, state fixation, mix-up
// (iss), a token for another resource, the consent page driven cross-site, registration floods.
import { describe, expect, it } from "vitest";
import { boundFetch } from "../crowd-helpers.js";
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
  whoami,
} from "./as-helpers.js";

const serve = useAuthServers();

const refresh = (origin: string, clientId: string, token: string, over: { [k: string]: string } = {}) =>
  tokenRequest(origin, { grant_type: "refresh_token", refresh_token: token, client_id: clientId, ...over });

describe("codes", () => {
  it("refuses a replayed code and revokes what its first redemption gave", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const got = await getCode(s, clientId);
    const first = await redeem(s, clientId, got);
    expect(first.status).toBe(200);
    expect((await whoami(s, first.body.access_token as string)).status).toBe(200);
    const second = await redeem(s, clientId, got);
    expect(second).toMatchObject({
      status: 400,
      body: { error: "invalid_grant", error_description: expect.stringMatching(/already used/) },
    });
    expect(second.headers.get("cache-control")).toBe("no-store");
    // the refresh token and the access token of the first redemption are dead
    const r = await refresh(s.origin, clientId, first.body.refresh_token as string);
    expect(r).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect((await whoami(s, first.body.access_token as string)).status).toBe(401);
  });

  it("refuses a code of another client, and spends it", async () => {
    const s = await serve();
    const a = await registerClient(s.origin);
    const b = await registerClient(s.origin);
    const got = await getCode(s, a);
    expect(await redeem(s, b, got)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(await redeem(s, a, got)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });
});

describe("PKCE", () => {
  it("refuses an authorization without S256: missing, plain, or not a challenge", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const { challenge } = pkce();
    for (const over of [
      { code_challenge: undefined, code_challenge_method: undefined },
      { code_challenge_method: undefined },
      { code_challenge_method: "plain" },
      { code_challenge: "short" },
    ]) {
      const res = await fetch(authorizeUrl(s.origin, standard(clientId, challenge, s.resource, over)), {
        redirect: "manual",
      });
      expect(res.status, JSON.stringify(over)).toBe(302);
      const q = locationOf(res).searchParams;
      expect(q.get("error")).toBe("invalid_request");
      expect(q.get("state")).toBe("st-123");
      expect(q.get("iss")).toBe(s.origin);
    }
  });

  it("refuses a missing or wrong verifier at the token endpoint", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const got = await getCode(s, clientId);
    expect(await redeem(s, clientId, { ...got, verifier: "" })).toMatchObject({
      status: 400,
      body: { error: "invalid_request" },
    });
    expect(await redeem(s, clientId, { ...got, verifier: pkce().verifier })).toMatchObject({
      status: 400,
      body: { error: "invalid_grant", error_description: expect.stringMatching(/code_verifier/) },
    });
    // one guess per code: the right verifier now finds it spent
    expect(await redeem(s, clientId, got)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    // the challenge itself is no verifier
    const again = await getCode(s, clientId);
    const { challenge } = pkce();
    expect(await redeem(s, clientId, { ...again, verifier: challenge })).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
  });
});

describe("redirect_uri", () => {
  it("shows a page, never redirects, for a redirect_uri that is not exactly registered", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const { challenge } = pkce();
    const variants = [
      `${REDIRECT}/extra`, // prefix
      `${REDIRECT}x`,
      "http://127.0.0.1:10/callback", // another port
      "http://127.0.0.1:9/other", // another path
      `${REDIRECT}#frag`, // fragment
      `${REDIRECT}?next=1`, // added query
      "https://evil.example/callback", // open redirect
      "http://127.0.0.1:9/callback/../evil",
      "HTTP://127.0.0.1:9/callback",
      "http://localhost:9/callback",
      undefined,
    ];
    for (const redirect_uri of variants) {
      const res = await fetch(
        authorizeUrl(s.origin, standard(clientId, challenge, s.resource, { redirect_uri })),
        {
          redirect: "manual",
        },
      );
      expect(res.status, String(redirect_uri)).toBe(400);
      expect(res.headers.get("location")).toBe(null);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("x-frame-options")).toBe("DENY");
    }
  });

  it("shows a page for an unknown client, and for a repeated parameter", async () => {
    const s = await serve();
    const { challenge } = pkce();
    const res = await fetch(authorizeUrl(s.origin, standard("nobody", challenge, s.resource)), {
      redirect: "manual",
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBe(null);
    expect(await res.text()).toContain("not registered");
    const clientId = await registerClient(s.origin);
    const url = `${authorizeUrl(s.origin, standard(clientId, challenge, s.resource))}&redirect_uri=${encodeURIComponent("https://evil.example/")}`;
    const dup = await fetch(url, { redirect: "manual" });
    expect(dup.status).toBe(400);
    expect(dup.headers.get("location")).toBe(null);
  });

  it("refuses a code redeemed with another redirect_uri", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin, {
      redirect_uris: [REDIRECT, "http://127.0.0.1:9/other"],
    });
    const got = await getCode(s, clientId);
    expect(await redeem(s, clientId, got, { redirect_uri: "http://127.0.0.1:9/other" })).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
  });
});

describe("resources", () => {
  it("requires a resource of its own at /authorize", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const { challenge } = pkce();
    for (const resource of [undefined, "https://other.example/mcp", `${s.origin}/mcp2`, "not a url"]) {
      const res = await fetch(
        authorizeUrl(s.origin, standard(clientId, challenge, s.resource, { resource })),
        {
          redirect: "manual",
        },
      );
      const q = locationOf(res).searchParams;
      expect(q.get("error"), String(resource)).toBe("invalid_target");
      expect(q.get("iss")).toBe(s.origin);
    }
    // the same resource written with an upper-case scheme and host is the same resource
    const upper = s.resource.replace("http://127.0.0.1", "HTTP://127.0.0.1");
    await openConsent(authorizeUrl(s.origin, standard(clientId, challenge, s.resource, { resource: upper })));
  });

  it("refuses a swap of resource at the token endpoint and at refresh", async () => {
    const s = await serve({}, {}, ["/other"]);
    const other = `${s.origin}/other`;
    const clientId = await registerClient(s.origin);
    const got = await getCode(s, clientId);
    expect(await redeem(s, clientId, got, { resource: other })).toMatchObject({
      status: 400,
      body: { error: "invalid_target" },
    });
    const again = await signedIn(s);
    expect(await refresh(s.origin, again.clientId, again.refresh, { resource: other })).toMatchObject({
      status: 400,
      body: { error: "invalid_target" },
    });
    // the refused swap did not rotate: the token still refreshes, for its own resource
    const ok = await refresh(s.origin, again.clientId, again.refresh, { resource: s.resource });
    expect(ok.status).toBe(200);
  });

  it("refuses at the MCP server a token for another of the authorization server's resources", async () => {
    const s = await serve({}, {}, ["/other"]);
    const clientId = await registerClient(s.origin);
    const got = await getCode(s, clientId, { resource: `${s.origin}/other` });
    const { status, body } = await redeem(s, clientId, got, { resource: undefined });
    expect(status).toBe(200);
    const res = await fetch(`${s.origin}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${body.access_token}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(res.headers.get("www-authenticate")).toContain("(aud)");
    // the authorization server's own verifyToken takes any of its resources; verifierFor one only
    await expect(
      s.as.verifierFor(s.resource)(body.access_token as string, new Request(s.resource)),
    ).rejects.toThrow(/aud/);
  });
});

describe("refresh tokens", () => {
  it("rotates on every use; a rotated-out token presented again revokes the grant", async () => {
    const s = await serve();
    const { clientId, refresh: first } = await signedIn(s);
    const r1 = await refresh(s.origin, clientId, first);
    expect(r1.status).toBe(200);
    const second = r1.body.refresh_token as string;
    expect(second).not.toBe(first);
    expect((await whoami(s, r1.body.access_token as string)).status).toBe(200);
    const replay = await refresh(s.origin, clientId, first);
    expect(replay).toMatchObject({
      status: 400,
      body: { error: "invalid_grant", error_description: expect.stringMatching(/revoked/) },
    });
    // the whole grant ended: the newest refresh token and the access token too
    expect(await refresh(s.origin, clientId, second)).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
    expect((await whoami(s, r1.body.access_token as string)).status).toBe(401);
  });

  it("lets exactly one of two concurrent uses of one refresh token win, and ends the grant", async () => {
    const s = await serve();
    const { clientId, refresh: token } = await signedIn(s);
    const results = await Promise.all([
      refresh(s.origin, clientId, token),
      refresh(s.origin, clientId, token),
    ]);
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(results.filter((r) => r.body.error === "invalid_grant")).toHaveLength(1);
    for (const r of ok)
      expect(await refresh(s.origin, clientId, r.body.refresh_token as string)).toMatchObject({
        status: 400,
      });
  });

  it("refuses another client's refresh token, an unknown one, and a wider scope", async () => {
    const s = await serve({ scopes: ["a", "b"] });
    const alice = await signedIn(s);
    const other = await registerClient(s.origin);
    expect(await refresh(s.origin, other, alice.refresh)).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
    expect(await refresh(s.origin, alice.clientId, "nope.nope")).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
    const clientId = await registerClient(s.origin);
    const got = await getCode(s, clientId, { scope: "a" });
    const t = await redeem(s, clientId, got);
    expect(await refresh(s.origin, clientId, t.body.refresh_token as string, { scope: "a b" })).toMatchObject(
      {
        status: 400,
        body: { error: "invalid_scope" },
      },
    );
  });
});

describe("state, iss and the consent page", () => {
  it("echoes state exactly and names itself with iss on every redirect", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const state = "a b+c/=&?#é\u0000";
    const got = await getCode(s, clientId, { state });
    expect(got.location.searchParams.get("state")).toBe(state);
    expect(got.location.searchParams.get("iss")).toBe(s.origin);
    // no state asked, none sent
    const none = await getCode(s, clientId, { state: undefined });
    expect(none.location.searchParams.has("state")).toBe(false);
    expect(none.location.searchParams.get("iss")).toBe(s.origin);
    const err = await fetch(
      authorizeUrl(s.origin, standard(clientId, "x", s.resource, { response_type: "token" })),
      {
        redirect: "manual",
      },
    );
    expect(Object.fromEntries(locationOf(err).searchParams)).toMatchObject({
      error: "unsupported_response_type",
      state: "st-123",
      iss: s.origin,
    });
  });

  it("refuses prompt=none: the person always sees the consent page", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const res = await fetch(
      authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource, { prompt: "none" })),
      { redirect: "manual" },
    );
    expect(Object.fromEntries(locationOf(res).searchParams)).toMatchObject({
      error: "consent_required",
      state: "st-123",
      iss: s.origin,
    });
  });

  it("approves only in the browser that opened the page: no fixation of another's authorization", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const { challenge } = pkce();
    const url = authorizeUrl(s.origin, standard(clientId, challenge, s.resource));
    // the attacker opens an authorization and hands its form to the victim's browser (no cookie of it)
    const attacker = await openConsent(url);
    const victim = await openConsent(url);
    const noCookie = await submitConsent(s.origin, attacker, "approve", { headers: { cookie: "" } });
    expect(noCookie.status).toBe(403);
    expect(noCookie.headers.get("location")).toBe(null);
    const wrongCookie = await submitConsent(s.origin, attacker, "approve", {
      headers: { cookie: victim.cookie },
    });
    expect(wrongCookie.status).toBe(403);
    // each page approves once, in its own browser
    expect((await submitConsent(s.origin, victim)).status).toBe(303);
    expect((await submitConsent(s.origin, victim)).status).toBe(400);
    expect((await submitConsent(s.origin, attacker)).status).toBe(303);
  });

  it("refuses the consent POST from another origin, another site, or without the CSRF token", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const form = await openConsent(authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource)));
    const refused = [
      await submitConsent(s.origin, form, "approve", { headers: { origin: "https://evil.example" } }),
      await submitConsent(s.origin, form, "approve", {
        headers: { origin: "null", "sec-fetch-site": "cross-site" },
      }),
      await submitConsent(s.origin, form, "approve", { headers: { origin: "null", "sec-fetch-site": "" } }),
      await submitConsent(s.origin, form, "approve", { headers: { "sec-fetch-site": "cross-site" } }),
      await submitConsent(s.origin, form, "approve", { headers: { "sec-fetch-site": "same-site" } }),
      await submitConsent(s.origin, form, "approve", { body: "decision=approve" }),
      await submitConsent(s.origin, form, "approve", { body: `csrf=${form.csrf.slice(1)}&decision=approve` }),
    ];
    for (const r of refused) {
      expect(r.status).toBe(403);
      expect(r.headers.get("location")).toBe(null);
    }
    expect((await fetch(`${s.origin}/consent`, { redirect: "manual" })).status).toBe(405);
    // the page itself still approves
    expect((await submitConsent(s.origin, form)).status).toBe(303);
  });
});

describe("registration", () => {
  it("limits registrations per address before the total: 127.0.0.2 and 127.0.0.3 have budgets of their own", async () => {
    const s = await serve({ registration: { perAddress: 3, total: 5, windowMs: 3_600_000 } });
    const two = boundFetch("127.0.0.2");
    const three = boundFetch("127.0.0.3");
    const four = boundFetch("127.0.0.4");
    for (let i = 0; i < 3; i++) await registerClient(s.origin, {}, two);
    const over = await two(`${s.origin}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
    });
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("3600");
    expect(over.headers.get("cache-control")).toBe("no-store");
    expect(await over.json()).toMatchObject({ error: "temporarily_unavailable" });
    // another address is not held back by the first one's flood
    await registerClient(s.origin, {}, three);
    await registerClient(s.origin, {}, three);
    // the total then holds for everyone
    await expect(registerClient(s.origin, {}, four)).rejects.toThrow(/429/);
    two.agent.destroy();
    three.agent.destroy();
    four.agent.destroy();
  });
});
