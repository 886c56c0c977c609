// The attacks on an authorization server, over raw HTTP against picomcp's (2/2): refresh replay after
// rotation, state fixation, mix-up (iss), the consent page driven cross-site, registration floods.
import { describe, expect, it } from "vitest";
import { MemoryAuthStore } from "../../src/auth/index.js";
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

describe("a crowd", () => {
  it("opening authorizations it never finishes holds at most maxPending of them; every request is answered", async () => {
    const store = new MemoryAuthStore({ maxPending: 20 });
    const s = await serve({ store });
    const clientId = await registerClient(s.origin);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    const statuses = await Promise.all(
      Array.from({ length: 100 }, () =>
        fetch(url, { redirect: "manual" }).then((r) => r.text().then(() => r.status)),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(store.size.pending).toBe(20);
    // the newest still approves
    expect((await submitConsent(s.origin, await openConsent(url))).status).toBe(303);
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

  it("counts behind trusted proxies by the client they name", async () => {
    const s = await serve({ registration: { perAddress: 1 } }, { trustProxy: ["loopback"] });
    const from = (client: string) =>
      fetch(`${s.origin}/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": client },
        body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
      }).then((r) => r.status);
    expect(await from("203.0.113.7")).toBe(201);
    expect(await from("203.0.113.7")).toBe(429);
    expect(await from("203.0.113.8")).toBe(201);
  });
});
