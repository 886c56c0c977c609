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
  /** Opens the consent page from `send`'s address: the form, as `openConsent` reads it. */
  async function openFrom(send: typeof fetch, url: string) {
    const response = await send(url, { redirect: "manual" });
    const html = await response.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    const cookie = response.headers.get("set-cookie")?.split(";")[0];
    if (response.status !== 200 || !csrf || !cookie) throw new Error(`no consent page: ${response.status}`);
    return { response, html, csrf, cookie };
  }

  it("a crowd from 127.0.0.2..41 cannot make 127.0.0.200's sign-in in progress fail: refused, never evicting", async () => {
    const store = new MemoryAuthStore({ maxPending: 20 });
    // the crowd shares one /24: its network tier set out of the way, each address is held to its own
    const s = await serve({ store, authorizations: { perAddress: 3, perNetwork: 1000, total: 1000 } });
    const clientId = await registerClient(s.origin);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    const victim = boundFetch("127.0.0.200");
    const form = await openFrom(victim, url);
    const crowd = Array.from({ length: 40 }, (_, i) => boundFetch(`127.0.0.${i + 2}`));
    const statuses = await Promise.all(
      crowd.flatMap((send) =>
        Array.from({ length: 5 }, () =>
          send(url, { redirect: "manual" }).then((r) => r.text().then(() => r.status)),
        ),
      ),
    );
    // every request answered: a consent page, the store full (503), or the address over its share (429)
    expect(new Set(statuses).size).toBeLessThanOrEqual(3);
    for (const st of statuses) expect([200, 429, 503]).toContain(st);
    expect(statuses.filter((st) => st === 429).length).toBe(40 * 2);
    expect(statuses.filter((st) => st === 200).length).toBe(19);
    expect(store.size.pending).toBe(20);
    const over = await crowd[0]!(url, { redirect: "manual" });
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("600");
    expect(over.headers.get("location")).toBe(null);
    expect(await over.text()).toMatch(/Too many sign-ins/);
    // the victim's sign-in, started before the crowd, still approves
    const approved = await submitConsent(s.origin, form);
    expect(approved.status).toBe(303);
    expect(locationOf(approved).searchParams.get("code")).toBeTruthy();
    for (const send of [victim, ...crowd]) send.agent.destroy();
  });

  it("at the total, everyone is refused (429) and the sign-ins already started go on", async () => {
    const s = await serve({ authorizations: { perAddress: 100, total: 10 } });
    const clientId = await registerClient(s.origin);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    const victim = boundFetch("127.0.0.200");
    const form = await openFrom(victim, url);
    const crowd = Array.from({ length: 5 }, (_, i) => boundFetch(`127.0.0.${i + 2}`));
    const statuses = await Promise.all(
      crowd.flatMap((send) =>
        Array.from({ length: 4 }, () =>
          send(url, { redirect: "manual" }).then((r) => r.text().then(() => r.status)),
        ),
      ),
    );
    expect(statuses.filter((st) => st === 200).length).toBe(9);
    expect(statuses.filter((st) => st === 429).length).toBe(11);
    expect((await victim(url, { redirect: "manual" })).status).toBe(429);
    expect((await submitConsent(s.origin, form)).status).toBe(303);
    for (const send of [victim, ...crowd]) send.agent.destroy();
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
