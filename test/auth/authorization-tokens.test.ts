// picomcp's authorization server: revocation (endpoint and method, across replicas), key rotation shared
// through the store, replicas serving one sign-in, and each signing algorithm.
import { decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { createAuthorizationServer, MemoryAuthStore, type VerifyToken } from "../../src/auth/index.js";
import {
  authorizeUrl,
  locationOf,
  pkce,
  REDIRECT,
  registerClient,
  signedIn,
  standard,
  tokenRequest,
  useAuthServers,
  whoami,
} from "./as-helpers.js";

const serve = useAuthServers();

/** What a verifier says of a token: its AuthInfo, or the message of its refusal. */
const outcome = (verify: VerifyToken, token: string) =>
  Promise.resolve()
    .then(() => verify(token, new Request("http://127.0.0.1/")))
    .catch((e: Error) => e.message);

const revoke = (origin: string, form: { [k: string]: string }) =>
  fetch(`${origin}/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });

describe("revocation", () => {
  it("ends a grant by its refresh token or its access token (RFC 7009), only for its own client", async () => {
    const s = await serve();
    const a = await signedIn(s);
    const other = await registerClient(s.origin);
    // another client's token: answered 200, and nothing ends
    expect((await revoke(s.origin, { token: a.refresh, client_id: other })).status).toBe(200);
    expect((await whoami(s, a.access)).status).toBe(200);
    const res = await revoke(s.origin, { token: a.refresh, client_id: a.clientId });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect((await whoami(s, a.access)).status).toBe(401);
    const b = await signedIn(s);
    expect(
      (await revoke(s.origin, { token: b.access, client_id: b.clientId, token_type_hint: "access_token" }))
        .status,
    ).toBe(200);
    expect(
      await tokenRequest(s.origin, {
        grant_type: "refresh_token",
        refresh_token: b.refresh,
        client_id: b.clientId,
      }),
    ).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    // unknown tokens are no error; a request without a token or a client is
    expect((await revoke(s.origin, { token: "whatever", client_id: b.clientId })).status).toBe(200);
    const noToken = await revoke(s.origin, { client_id: b.clientId });
    expect(noToken.status).toBe(400);
    expect(await noToken.json()).toMatchObject({ error: "invalid_request" });
    const noClient = await revoke(s.origin, { token: "x" });
    expect(noClient.status).toBe(400);
    expect(noClient.headers.get("www-authenticate")).toBe(null);
    expect(await noClient.json()).toMatchObject({ error: "invalid_client" });
  });

  it("revokes every grant of a subject, and one grant by its id", async () => {
    const s = await serve();
    const one = await signedIn(s);
    const two = await signedIn(s);
    await s.as.revoke({ subject: "alice" });
    expect((await whoami(s, one.access)).status).toBe(401);
    expect((await whoami(s, two.access)).status).toBe(401);
    const three = await signedIn(s);
    const info = await s.as.verifyToken(three.access, new Request(s.resource));
    await s.as.revoke({ grant: info!.extra!.gid as string });
    expect((await whoami(s, three.access)).status).toBe(401);
  });

  it("reaches another replica within revocationDelayMs", async () => {
    const store = new MemoryAuthStore();
    const s = await serve({ store, revocationDelayMs: 300 });
    const replica = createAuthorizationServer({
      issuer: s.origin,
      resources: [s.resource],
      authenticate: () => undefined,
      store,
      revocationDelayMs: 300,
    });
    const a = await signedIn(s);
    const request = new Request(s.resource);
    expect(await replica.verifyToken(a.access, request)).toMatchObject({ subject: "alice" });
    await s.as.revoke({ subject: "alice" });
    await expect(s.as.verifyToken(a.access, request)).rejects.toThrow(/revoked/);
    await expect.poll(() => outcome(replica.verifyToken, a.access), { timeout: 10_000 }).toMatch(/revoked/);
  });
});

describe("keys", () => {
  it("rotates: the new key signs, the old one still verifies, replicas on the same store agree", async () => {
    const store = new MemoryAuthStore();
    const s = await serve({ store });
    const replica = createAuthorizationServer({
      issuer: s.origin,
      resources: [s.resource],
      authenticate: () => undefined,
      store,
    });
    const before = await signedIn(s);
    const request = new Request(s.resource);
    expect(await replica.verifyToken(before.access, request)).toMatchObject({ subject: "alice" });
    const oldKid = decodeProtectedHeader(before.access).kid;
    const kid = await s.as.rotateKeys();
    expect(kid).not.toBe(oldKid);
    const after = await signedIn(s);
    expect(decodeProtectedHeader(after.access).kid).toBe(kid);
    const { keys } = await (await fetch(`${s.origin}/jwks`)).json();
    expect(keys.map((k: { kid: string }) => k.kid)).toEqual([kid, oldKid]);
    expect((await whoami(s, before.access)).status).toBe(200);
    expect((await whoami(s, after.access)).status).toBe(200);
    // the replica finds the new key in the store when a token names it (reading the store at most once a second)
    await expect
      .poll(() => outcome(replica.verifyToken, after.access), {
        timeout: 10_000,
      })
      .toMatchObject({ subject: "alice" });
    await replica.close();
  });
});

describe("replicas", () => {
  it("serve the steps of one sign-in alternately when they share a store", async () => {
    const store = new MemoryAuthStore();
    const origin = "http://127.0.0.1:1";
    const make = () =>
      createAuthorizationServer({
        issuer: origin,
        resources: [`${origin}/mcp`],
        authenticate: () => ({ subject: "erin" }),
        store,
      });
    const [a, b] = [make(), make()];
    const reg = await b.handle(
      new Request(`${origin}/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
      }),
    );
    const { client_id } = await reg!.json();
    const { verifier, challenge } = pkce();
    const page = (await a.handle(
      new Request(authorizeUrl(origin, standard(client_id, challenge, `${origin}/mcp`))),
    ))!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const approved = await b.handle(
      new Request(`${origin}/consent`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie: page.headers.get("set-cookie")!.split(";")[0]!,
          origin,
        },
        body: new URLSearchParams({ csrf, decision: "approve" }).toString(),
      }),
    );
    const code = locationOf(approved!).searchParams.get("code")!;
    const token = await a.handle(
      new Request(`${origin}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          code_verifier: verifier,
          redirect_uri: REDIRECT,
          client_id,
        }).toString(),
      }),
    );
    const { access_token } = await token!.json();
    // b verifies what a signed: the keys are the store's
    expect(await outcome(b.verifyToken, access_token)).toMatchObject({
      subject: "erin",
      clientId: client_id,
    });
  });
});

describe("algorithms", () => {
  it.each(["RS256", "EdDSA"] as const)("signs with %s when asked", async (algorithm) => {
    const s = await serve({ algorithm });
    const { access } = await signedIn(s);
    expect(decodeProtectedHeader(access).alg).toBe(algorithm);
    expect((await whoami(s, access)).status).toBe(200);
  });
});
