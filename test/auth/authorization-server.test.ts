// picomcp's authorization server over raw HTTP: metadata, JWKS, authorize → consent → code → token, the
// token accepted by the protected MCP server on the same handler, and local verification.
import { decodeJwt, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import {
  type AuthorizationServerOptions,
  createAuthorizationServer,
  MemoryAuthStore,
} from "../../src/auth/index.js";
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
  useAuthServers,
  whoami,
} from "./as-helpers.js";

const serve = useAuthServers();

describe("metadata and keys", () => {
  it("serves RFC 8414 metadata at its well-known path and at OpenID discovery's", async () => {
    const s = await serve({ scopes: ["notes:read"] });
    const expected = {
      issuer: s.origin,
      authorization_endpoint: `${s.origin}/authorize`,
      token_endpoint: `${s.origin}/token`,
      jwks_uri: `${s.origin}/jwks`,
      revocation_endpoint: `${s.origin}/revoke`,
      registration_endpoint: `${s.origin}/register`,
      scopes_supported: ["notes:read"],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
      revocation_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    };
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
      const res = await fetch(`${s.origin}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(await res.json()).toEqual(expected);
    }
    // the protected resource metadata names it, by default
    const prm = await (await fetch(`${s.origin}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(prm.authorization_servers).toEqual([s.origin]);
  });

  it("inserts the issuer's path into the well-known paths", async () => {
    const as = createAuthorizationServer({
      issuer: "https://auth.example.com/tenant/",
      resources: ["https://mcp.example.com/mcp"],
      authenticate: () => undefined,
    });
    expect(as.issuer).toBe("https://auth.example.com/tenant");
    for (const path of [
      "/.well-known/oauth-authorization-server/tenant",
      "/.well-known/openid-configuration/tenant",
      "/tenant/.well-known/openid-configuration",
    ]) {
      const res = await as.handle(new Request(`https://auth.example.com${path}`));
      expect(res?.status, path).toBe(200);
      expect((await res!.json()).token_endpoint).toBe("https://auth.example.com/tenant/token");
    }
    expect(
      await as.handle(new Request("https://auth.example.com/.well-known/oauth-authorization-server")),
    ).toBe(undefined);
    expect(await as.handle(new Request("https://auth.example.com/token"))).toBe(undefined);
    await as.close();
  });

  it("publishes public keys only", async () => {
    const s = await serve();
    const { keys } = await (await fetch(`${s.origin}/jwks`)).json();
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0]).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x", "y"]);
    expect(keys[0]).toMatchObject({ alg: "ES256", kty: "EC", crv: "P-256", use: "sig" });
  });

  it("refuses an http issuer off loopback, a missing resource, and both or neither sign-in", () => {
    const base = { resources: ["https://mcp.example.com/mcp"], authenticate: () => undefined };
    expect(() => createAuthorizationServer({ ...base, issuer: "http://auth.example.com" })).toThrow(/https/);
    expect(() => createAuthorizationServer({ ...base, issuer: "https://a.example", resources: [] })).toThrow(
      /resources/,
    );
    expect(() =>
      createAuthorizationServer({
        issuer: "https://a.example",
        resources: ["https://mcp.example.com/mcp"],
      }),
    ).toThrow(/exactly one/);
  });

  it("refuses limits that are not positive whole numbers, naming the option", () => {
    const base = {
      issuer: "https://a.example",
      resources: ["https://mcp.example.com/mcp"],
      authenticate: () => undefined,
    };
    const bad: [Partial<AuthorizationServerOptions>, RegExp][] = [
      [{ authorizations: { perAddress: 0 } }, /authorizations\.perAddress/],
      [{ authorizations: { total: Number.NaN } }, /authorizations\.total/],
      [{ authorizations: { windowMs: Number.POSITIVE_INFINITY } }, /authorizations\.windowMs/],
      [{ authorizations: { perNetwork: 2.5 } }, /authorizations\.perNetwork/],
      [{ registration: { perAddress: -1 } }, /registration\.perAddress/],
      [{ registration: { total: 1e300 } }, /registration\.total/],
      [{ clientMetadataFetches: { windowMs: 0 } }, /clientMetadataFetches\.windowMs/],
    ];
    for (const [options, name] of bad)
      expect(() => createAuthorizationServer({ ...base, ...options })).toThrow(name);
    expect(() =>
      createAuthorizationServer({ ...base, authorizations: { perAddress: 1, total: 1 } }),
    ).not.toThrow();
  });
});

describe("authorize → consent → token", () => {
  it("signs a person in and the MCP server takes the token", async () => {
    const s = await serve({ scopes: ["notes:read"] });
    const clientId = await registerClient(s.origin);
    const { verifier, challenge } = pkce();
    const form = await openConsent(authorizeUrl(s.origin, standard(clientId, challenge, s.resource)));
    // the page names the client, where it sends the person, the resource and the scopes
    expect(form.html).toContain("Test client");
    expect(form.html).toContain("http://127.0.0.1:9");
    expect(form.html).toContain(s.resource);
    expect(form.html).toContain("notes:read");
    expect(form.html).toContain("alice");
    expect(form.html).not.toContain("<script");
    const res = await submitConsent(s.origin, form);
    expect(res.status).toBe(303);
    const location = locationOf(res);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get("state")).toBe("st-123");
    expect(location.searchParams.get("iss")).toBe(s.origin);
    // the cookie that bound the page to this browser is cleared
    expect(res.headers.get("set-cookie")).toMatch(/Max-Age=0/);

    const token = await redeem(s, clientId, { code: location.searchParams.get("code")!, verifier });
    expect(token.status).toBe(200);
    expect(token.headers.get("cache-control")).toBe("no-store");
    expect(token.body).toEqual({
      access_token: expect.any(String),
      token_type: "Bearer",
      expires_in: 3600,
      scope: "notes:read",
      refresh_token: expect.stringMatching(/^[\w-]+\.[\w-]+$/),
    });
    const access = token.body.access_token as string;
    expect(decodeProtectedHeader(access)).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    expect(decodeJwt(access)).toMatchObject({
      iss: s.origin,
      aud: s.resource,
      sub: "alice",
      client_id: clientId,
      scope: "notes:read",
      name: "Alice",
      gid: expect.any(String),
      jti: expect.any(String),
    });
    expect(await whoami(s, access)).toEqual({
      status: 200,
      text: JSON.stringify({ subject: "alice", client: clientId }),
    });
    const info = await s.as.verifyToken(access, new Request(s.resource));
    expect(info).toMatchObject({ subject: "alice", clientId, issuer: s.origin, scopes: ["notes:read"] });
  });

  it("serves the consent page hardened: no script, no framing, no caching, no referrer", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const form = await openConsent(authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource)));
    const h = form.response.headers;
    const csp = h.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src|unsafe-inline/);
    expect(h.get("x-frame-options")).toBe("DENY");
    expect(h.get("cache-control")).toBe("no-store");
    expect(h.get("referrer-policy")).toBe("no-referrer");
    expect(h.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict/);
  });

  it("sends a denial back as access_denied with state and iss", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const form = await openConsent(authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource)));
    const location = locationOf(await submitConsent(s.origin, form, "deny"));
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: "access_denied",
      error_description: "The person denied the request",
      state: "st-123",
      iss: s.origin,
    });
  });

  it("passes the authenticate hook's own response (a login page) as it is", async () => {
    const s = await serve({
      authenticate: (request) =>
        request.headers.get("cookie")?.includes("session=ok")
          ? { subject: "bob" }
          : new Response(null, { status: 302, headers: { location: "/login" } }),
    });
    const clientId = await registerClient(s.origin);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login");
    const signed = await fetch(url, { redirect: "manual", headers: { cookie: "session=ok" } });
    expect(signed.status).toBe(200);
    expect(await signed.text()).toContain("bob");
  });

  it("verifies its tokens locally and keeps upstream tokens for upstreamToken", async () => {
    const s = await serve({
      authenticate: () => ({
        subject: "carol",
        upstream: { accessToken: "up-1", expiresAt: Date.now() + 3600_000 },
      }),
    });
    const { access } = await signedIn(s);
    const { upstreamToken } = await import("../../src/auth/index.js");
    const info = await s.as.verifyToken(access, new Request(s.resource));
    expect(await upstreamToken(info)).toBe("up-1");
    // the upstream token is nowhere in what the client holds
    expect(JSON.stringify(decodeJwt(access))).not.toContain("up-1");
    await expect(upstreamToken({ subject: "x" })).rejects.toThrow(/verifyToken/);
    // and a tool reaches it through ctx.auth
    expect(await whoami(s, access, "upstream")).toEqual({ status: 200, text: "up-1" });
  });

  it("uses the upstream token another replica refreshed meanwhile, and writes nothing over it", async () => {
    const store = new MemoryAuthStore();
    let refreshed = 0;
    const s = await serve({
      store,
      authenticate: undefined,
      signIn: {
        name: "Upstream",
        begin: async () => ({
          subject: "dave",
          upstream: { accessToken: "up-old", refreshToken: "r-1", expiresAt: Date.now() - 1 },
        }),
        // while this refresh is under way, another replica refreshes and saves its own token
        refresh: async () => {
          refreshed++;
          const [id] = await store.grantsOf("dave");
          const grant = (await store.getGrant(id!))!;
          const other = { accessToken: "up-other", refreshToken: "r-2", expiresAt: Date.now() + 3600_000 };
          expect(await store.replaceGrant({ ...grant, upstream: other }, grant.refreshHash)).toBe(true);
          return { accessToken: "up-mine", refreshToken: "r-3", expiresAt: Date.now() + 3600_000 };
        },
      },
    });
    const { access } = await signedIn(s);
    const { upstreamToken } = await import("../../src/auth/index.js");
    const info = await s.as.verifyToken(access, new Request(s.resource));
    expect(await upstreamToken(info)).toBe("up-other");
    expect(refreshed).toBe(1);
    const [id] = await store.grantsOf("dave");
    expect((await store.getGrant(id!))!.upstream).toMatchObject({
      accessToken: "up-other",
      refreshToken: "r-2",
    });
  });

  it("gets a code through getCode for other tests", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const got = await getCode(s, clientId);
    expect(got.code).toMatch(/^[\w-]{43}$/);
  });
});
