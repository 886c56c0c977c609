// The JWT access-token verifier against real signed tokens, with the key set served on 127.0.0.1.
import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { InvalidTokenError, type JwtVerifierOptions, jwtVerifier } from "../../src/auth/index.js";
import { principalFrom } from "../../src/index.js";
import { b64url, jwksServer, makeKey, now, sign, type TestKey, useHttpServers } from "../auth-helpers.js";

const ISSUER = "https://auth.example.test";
const AUDIENCE = "https://mcp.example.test/mcp";
const base = { iss: ISSUER, aud: AUDIENCE, sub: "alice", client_id: "app-1", scope: "files:read" };

const listen = useHttpServers();
let rsa: TestKey;
let ec: TestKey;
let ed: TestKey;
let other: TestKey;
beforeAll(async () => {
  [rsa, ec, ed, other] = await Promise.all([
    makeKey("RS256", "rsa-1"),
    makeKey("ES256", "ec-1"),
    makeKey("EdDSA", "ed-1"),
    makeKey("RS256", "other"),
  ]);
});

async function verifier(options: Partial<JwtVerifierOptions> = {}, keys = [rsa, ec, ed]) {
  const jwks = await jwksServer(listen, keys);
  const verify = jwtVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: jwks.url, ...options });
  return { jwks, verify: (token: string) => verify(token, new Request(AUDIENCE)) };
}

/** The refusal's message, or "accepted". */
async function outcome(p: unknown): Promise<string> {
  try {
    await p;
    return "accepted";
  } catch (e) {
    return e instanceof InvalidTokenError ? e.message : `other: ${(e as Error).name}`;
  }
}

describe("jwtVerifier", () => {
  it.each(["RS256", "ES256", "EdDSA"] as const)(
    "accepts a valid %s token and maps its claims",
    async (alg) => {
      const { verify } = await verifier();
      const key = { RS256: rsa, ES256: ec, EdDSA: ed }[alg];
      const token = await sign(key, { ...base, jti: "j1" });
      const info = await verify(token);
      expect(info).toEqual({
        token,
        clientId: "app-1",
        scopes: ["files:read"],
        subject: "alice",
        issuer: ISSUER,
        expiresAt: expect.any(Number),
        extra: {
          ...base,
          jti: "j1",
          iat: expect.any(Number),
          exp: expect.any(Number),
        },
      });
    },
  );

  it("fetches the key set lazily, once, and serves later tokens from the cache", async () => {
    const { verify, jwks } = await verifier();
    expect(jwks.fetches).toBe(0);
    await verify(await sign(rsa, base));
    await verify(await sign(ec, base));
    expect(jwks.fetches).toBe(1);
  });

  it("reads scopes from scp (array) and the client from azp", async () => {
    const { verify } = await verifier({ requireSubject: false });
    const info = await verify(
      await sign(rsa, { iss: ISSUER, aud: [AUDIENCE, "https://other"], azp: "app-2", scp: ["a", "b"] }),
    );
    expect([info?.clientId, info?.scopes, info?.subject]).toEqual(["app-2", ["a", "b"], undefined]);
  });

  it("refuses expired, not-yet-valid, wrong-audience and wrong-issuer tokens", async () => {
    const { verify } = await verifier();
    const cases = {
      expired: await sign(rsa, { ...base, exp: now() - 120 }),
      "expired within the skew": await sign(rsa, { ...base, exp: now() - 30 }),
      "not yet valid": await sign(rsa, { ...base, nbf: now() + 120 }),
      "valid within the skew": await sign(rsa, { ...base, nbf: now() + 30 }),
      "wrong audience": await sign(rsa, { ...base, aud: "https://mcp.example.test/other" }),
      "no audience": await sign(rsa, { ...base, aud: undefined }),
      "audience with upper-case host": await sign(rsa, { ...base, aud: "HTTPS://MCP.EXAMPLE.TEST/mcp" }),
      "wrong issuer": await sign(rsa, { ...base, iss: "https://evil.example.test" }),
      "no expiry": await sign(rsa, { ...base, exp: undefined }),
    };
    const got: { [k: string]: string } = {};
    for (const [name, token] of Object.entries(cases)) got[name] = await outcome(verify(token));
    expect(got).toEqual({
      expired: "the access token has expired",
      "expired within the skew": "accepted",
      "not yet valid": "the access token is not valid yet",
      "valid within the skew": "accepted",
      "wrong audience": "the access token was not issued for this server (aud)",
      "no audience": "the access token was not issued for this server (aud)",
      "audience with upper-case host": "accepted",
      "wrong issuer": "the access token was not issued by a trusted issuer (iss)",
      "no expiry": "the access token has an invalid exp claim",
    });
  });

  it("requires sub (RFC 9068), unless told that the issuer omits it: then the principal is the client", async () => {
    const { sub: _, ...noSub } = base;
    const strict = (await verifier()).verify;
    expect(await outcome(strict(await sign(rsa, noSub)))).toBe(
      "the access token does not name its subject (sub)",
    );
    expect(await outcome(strict(await sign(rsa, { ...base, sub: "" })))).toBe(
      "the access token does not name its subject (sub)",
    );
    expect(await outcome(strict(await sign(rsa, { ...base, sub: 42 })))).toBe(
      "the access token has an invalid sub claim",
    );
    const lenient = (await verifier({ requireSubject: false })).verify;
    const info = await lenient(await sign(rsa, noSub));
    expect(principalFrom(info)).toEqual({
      kind: "client",
      issuer: ISSUER,
      id: "app-1",
      key: "client:https%3A//auth.example.test:app-1",
    });
    const { client_id: _c, ...nobody } = noSub;
    expect(await outcome(lenient(await sign(rsa, nobody)))).toBe(
      "the access token names neither a subject (sub) nor a client (client_id)",
    );
  });

  it("refuses a token issued in the future, beyond the clock skew", async () => {
    const { verify } = await verifier();
    expect(await outcome(verify(await sign(rsa, { ...base, iat: now() + 3600 })))).toBe(
      "the access token was issued in the future",
    );
    expect(await outcome(verify(await sign(rsa, { ...base, iat: now() + 30 })))).toBe("accepted");
    expect(await outcome(verify(await sign(rsa, { ...base, iat: "yesterday" })))).toBe(
      "the access token has an invalid iat claim",
    );
    const tight = (await verifier({ clockSkewSeconds: 0 })).verify;
    expect(await outcome(tight(await sign(rsa, { ...base, iat: now() + 30 })))).toBe(
      "the access token was issued in the future",
    );
  });

  it("requires typ at+jwt (application/at+jwt is the same), unless turned off", async () => {
    const { verify } = await verifier();
    const loose = (await verifier({ typ: false })).verify;
    const jwt = await sign(rsa, base, { typ: "JWT" });
    expect(await outcome(verify(await sign(rsa, base, { typ: "application/at+jwt" })))).toBe("accepted");
    expect(await outcome(verify(await sign(rsa, base, { typ: "AT+JWT" })))).toBe("accepted");
    expect(await outcome(verify(jwt))).toBe("the token is not an access token (typ must be at+jwt)");
    expect(await outcome(verify(await sign(rsa, base, { typ: undefined })))).toBe(
      "the token is not an access token (typ must be at+jwt)",
    );
    expect(await outcome(loose(jwt))).toBe("accepted");
  });

  it("refuses a token signed by a key the issuer does not publish", async () => {
    const { verify } = await verifier();
    expect(await outcome(verify(await sign(other, base)))).toBe(
      "the access token is signed with an unknown key",
    );
    // a known kid does not help a foreign key: the signature is checked with the published one
    expect(await outcome(verify(await sign(other, base, { kid: "rsa-1" })))).toBe(
      "the access token's signature is invalid",
    );
  });

  it("follows a key rotation: an unknown kid fetches the key set again", async () => {
    const { verify, jwks } = await verifier({ jwksCooldownMs: 0 }, [rsa]);
    expect(await outcome(verify(await sign(rsa, base)))).toBe("accepted");
    jwks.keys = [other];
    expect(await outcome(verify(await sign(other, base)))).toBe("accepted");
    expect(jwks.fetches).toBe(2);
    // the old key is gone from the set it now holds
    expect(await outcome(verify(await sign(rsa, base)))).toBe(
      "the access token is signed with an unknown key",
    );
  });

  it("fetches again for unknown kids at most once per cooldown", async () => {
    const { verify, jwks } = await verifier({ jwksCooldownMs: 60_000 }, [rsa]);
    await verify(await sign(rsa, base));
    const forged = await sign(other, base, { kid: "unknown" });
    const results = await Promise.all(Array.from({ length: 20 }, () => outcome(verify(forged))));
    expect(new Set(results)).toEqual(new Set(["the access token is signed with an unknown key"]));
    expect(jwks.fetches).toBe(1);
  });

  it('refuses alg "none"', async () => {
    const { verify } = await verifier();
    const header = b64url(JSON.stringify({ alg: "none", typ: "at+jwt" }));
    const payload = b64url(JSON.stringify({ ...base, exp: now() + 60 }));
    expect(await outcome(verify(`${header}.${payload}.`))).toBe(
      "the access token is signed with an algorithm that is not allowed",
    );
  });

  it("refuses HMAC tokens keyed with the public key (algorithm confusion)", async () => {
    const { verify } = await verifier();
    const pair = await generateKeyPair("RS256", { extractable: true });
    const spki = await exportSPKI(pair.publicKey);
    const secrets = [new TextEncoder().encode(spki), new TextEncoder().encode(JSON.stringify(rsa.jwk))];
    for (const alg of ["HS256", "HS512"]) {
      for (const secret of secrets) {
        const token = await new SignJWT({ ...base, exp: now() + 60 })
          .setProtectedHeader({ alg, typ: "at+jwt", kid: "rsa-1" })
          .sign(secret);
        expect(await outcome(verify(token))).toBe(
          "the access token is signed with an algorithm that is not allowed",
        );
      }
    }
  });

  it("refuses an allowed algorithm on a key of another type", async () => {
    const { verify } = await verifier({ algorithms: ["RS256"] });
    expect(await outcome(verify(await sign(ec, base)))).toBe(
      "the access token is signed with an algorithm that is not allowed",
    );
  });

  it("calls malformed tokens malformed", async () => {
    const { verify } = await verifier();
    for (const token of ["abc", "a.b.c", `${b64url("{}")}.${b64url("{}")}.sig`]) {
      expect(await outcome(verify(token))).toBe("the access token is malformed");
    }
  });

  it("rethrows a key set that cannot be loaded (not the token's fault)", async () => {
    const { origin } = await listen((_req, res) => res.writeHead(500).end());
    const verify = jwtVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: `${origin}/jwks` });
    expect(await outcome(verify(await sign(rsa, base), new Request(AUDIENCE)))).toMatch(/^other: /);
  });

  it("throws at creation for HMAC, none, or no issuer or audience", () => {
    const ok = { issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [] } };
    for (const alg of ["HS256", "none"]) {
      expect(() => jwtVerifier({ ...ok, algorithms: [alg as "RS256"] })).toThrow(
        `Algorithm "${alg}" is not allowed: use asymmetric ones`,
      );
    }
    expect(() => jwtVerifier({ ...ok, issuer: [] })).toThrow("issuer must be");
    expect(() => jwtVerifier({ ...ok, audience: "mcp" })).toThrow("resource must be an absolute URL");
    expect(() => jwtVerifier({ ...ok, jwks: {} as never })).toThrow("jwks must be a URL or a key set");
  });

  it("verifies against a local key set too", async () => {
    const verify = jwtVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [ed.jwk] } });
    expect(await outcome(verify(await sign(ed, base), new Request(AUDIENCE)))).toBe("accepted");
    expect(await outcome(verify(await sign(rsa, base), new Request(AUDIENCE)))).toBe(
      "the access token is signed with an unknown key",
    );
  });

  it("finds the key set through the issuer's metadata (RFC 8414), once", async () => {
    const jwks = await jwksServer(listen, [rsa]);
    const seen: string[] = [];
    let issuer = "";
    const { origin } = await listen((req, res) => {
      seen.push(req.url ?? "");
      if (req.url !== "/.well-known/oauth-authorization-server") return res.writeHead(404).end();
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ issuer, jwks_uri: jwks.url }));
    });
    issuer = origin;
    const verify = jwtVerifier({ issuer, audience: AUDIENCE });
    expect(seen).toEqual([]);
    for (let i = 0; i < 3; i++) {
      expect(await outcome(verify(await sign(rsa, { ...base, iss: issuer }), new Request(AUDIENCE)))).toBe(
        "accepted",
      );
    }
    expect([seen, jwks.fetches]).toEqual([["/.well-known/oauth-authorization-server"], 1]);
  });

  it("falls back to OpenID discovery, and trusts no metadata that names another issuer", async () => {
    const jwks = await jwksServer(listen, [ec]);
    let named = "";
    const seen: string[] = [];
    const { origin } = await listen((req, res) => {
      seen.push(req.url ?? "");
      if (req.url !== "/tenant/.well-known/openid-configuration") return res.writeHead(404).end();
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ issuer: named, jwks_uri: jwks.url }));
    });
    const issuer = `${origin}/tenant`;
    named = issuer;
    const verify = jwtVerifier({ issuer, audience: AUDIENCE });
    expect(await outcome(verify(await sign(ec, { ...base, iss: issuer }), new Request(AUDIENCE)))).toBe(
      "accepted",
    );
    expect(seen).toEqual([
      "/.well-known/oauth-authorization-server/tenant",
      "/tenant/.well-known/openid-configuration",
    ]);
    named = "https://evil.example.test";
    const strict = jwtVerifier({ issuer, audience: AUDIENCE, jwksCooldownMs: 60_000 });
    const token = await sign(ec, { ...base, iss: issuer });
    expect(await outcome(strict(token, new Request(AUDIENCE)))).toBe("other: Error");
    const before = seen.length;
    expect(await outcome(strict(token, new Request(AUDIENCE)))).toBe("other: Error");
    // a failed lookup is not repeated within the cooldown
    expect(seen.length).toBe(before);
  });
});
