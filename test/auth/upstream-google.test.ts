// google() against a small stand-in of Google's OpenID endpoints on 127.0.0.1 (discovery, authorize, token,
// keys), answering as Google documents; the browser's part (redirects, cookies) done by fetch.
import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { google } from "../../src/auth/index.js";
import { bodyOf, browse, last, listenLater, relyingParty, type Seen, s256 } from "../upstream-helpers.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const GOOGLE_SUB = "110169484474386276334";

/**
 * Google's OpenID endpoints as its discovery document names them: authorize (which adds `authuser`,
 * `prompt` and `iss` to the callback), token (Basic client authentication; an RS256 id_token;
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
      // Google now names itself in the callback too, without saying so in its metadata
      back.searchParams.set("iss", at.origin);
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
