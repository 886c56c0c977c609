/**
 * The access tokens the authorization server issues (RFC 9068 JWTs signed by jose) and their local
 * verification: signature with the server's own keys, claims, and whether their grant is still live
 * (a short cache, so a revocation takes effect within it everywhere and at once where it was made).
 */
import { type JWTPayload, jwtVerify, SignJWT } from "jose";
import type { AuthInfo } from "../connection.js";
import { authInfo, refusal } from "./jwt.js";
import { type KeyRing, randomToken } from "./keys.js";
import { InvalidTokenError, type VerifyToken } from "./resource-server.js";
import type { AuthStore, GrantRecord } from "./store.js";

/** The claim that names a token's grant. */
export const GRANT_CLAIM = "gid";

/** Claims a sign-in's `claims` may never set: the token's own. */
const RESERVED = new Set([
  "iss",
  "sub",
  "aud",
  "exp",
  "nbf",
  "iat",
  "jti",
  "client_id",
  "scope",
  "scp",
  "azp",
  "cnf",
  "typ",
  "auth_time",
  "acr",
  "amr",
  GRANT_CLAIM,
]);

/** Where the `AuthInfo` a verifier returns keeps the way to the grant's upstream token (see `upstreamToken`). */
export const UPSTREAM: unique symbol = Symbol("picomcp.upstream");

/** What `AuthInfo[UPSTREAM]` holds. */
export type UpstreamAccess = () => Promise<string>;

/** Signs an access token for `grant` (its scopes, or `scopes` when narrowed); `ttl` in seconds. */
export async function signAccessToken(
  keys: KeyRing,
  issuer: string,
  grant: GrantRecord,
  scopes: readonly string[],
  ttl: number,
): Promise<string> {
  const key = await keys.signing();
  const claims: JWTPayload = {};
  for (const [k, v] of Object.entries(grant.claims ?? {})) if (!RESERVED.has(k)) claims[k] = v;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    ...claims,
    client_id: grant.clientId,
    scope: scopes.join(" "),
    [GRANT_CLAIM]: grant.id,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "at+jwt" })
    .setIssuer(issuer)
    .setSubject(grant.subject)
    .setAudience(grant.resource)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .setJti(randomToken(16))
    .sign(key.key);
}

/**
 * Whether grants are live, as the store says, believed for `ms` after each look (live and revoked
 * alike), in a bounded cache. A revocation made here forgets its grant at once.
 */
export class GrantLiveness {
  readonly #store: AuthStore;
  readonly #ms: number;
  readonly #max: number;
  readonly #seen = new Map<string, { live: boolean; until: number }>();

  constructor(store: AuthStore, ms: number, max = 10_000) {
    this.#store = store;
    this.#ms = ms;
    this.#max = max;
  }

  async live(grantId: string): Promise<boolean> {
    const now = Date.now();
    const seen = this.#seen.get(grantId);
    if (seen && seen.until > now) return seen.live;
    const live = (await this.#store.getGrant(grantId)) !== undefined;
    if (this.#ms > 0) {
      this.#seen.delete(grantId);
      if (this.#seen.size >= this.#max) this.#seen.delete(this.#seen.keys().next().value!);
      this.#seen.set(grantId, { live, until: now + this.#ms });
    }
    return live;
  }

  /** Forgets what was seen of `grantId` (revoked here: the next look asks the store). */
  forget(grantId: string): void {
    this.#seen.delete(grantId);
  }
}

/** What a verifier of this server's own tokens needs. */
export interface OwnVerifier {
  keys: KeyRing;
  issuer: string;
  /** The audiences accepted (canonical resources). */
  audiences: readonly string[];
  liveness: GrantLiveness;
  /** The upstream token of a grant, for `upstreamToken(auth)`. */
  upstream(grantId: string): Promise<string>;
}

/** The claims of one of this server's own access tokens, checked (signature, typ, iss, exp, one of `audiences`), without the grant check. */
export async function ownClaims(
  v: Omit<OwnVerifier, "liveness" | "upstream">,
  token: string,
): Promise<JWTPayload> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(
      token,
      async (header) => {
        const key = await v.keys.verifying(header.kid);
        if (key === undefined) throw new InvalidTokenError("the access token is signed with an unknown key");
        return key;
      },
      {
        algorithms: ["ES256", "RS256", "EdDSA", "Ed25519"],
        issuer: v.issuer,
        typ: "at+jwt",
        clockTolerance: 5,
        requiredClaims: ["exp", "aud", "sub", GRANT_CLAIM],
      },
    ));
  } catch (error) {
    throw error instanceof InvalidTokenError ? error : refusal(error);
  }
  if (typeof payload.aud !== "string" || !v.audiences.includes(payload.aud))
    throw new InvalidTokenError("the access token was not issued for this server (aud)");
  if (typeof payload[GRANT_CLAIM] !== "string" || typeof payload.sub !== "string")
    throw new InvalidTokenError("the access token is malformed");
  return payload;
}

/** A `verifyToken` for this server's own tokens: locally, no network round trip; the grant's liveness from a short cache. */
export function ownVerifier(v: OwnVerifier): VerifyToken {
  return async (token) => {
    const payload = await ownClaims(v, token);
    const grantId = payload[GRANT_CLAIM] as string;
    if (!(await v.liveness.live(grantId))) throw new InvalidTokenError("the access token was revoked");
    const info: AuthInfo & { [UPSTREAM]?: UpstreamAccess } = authInfo(token, payload);
    info[UPSTREAM] = () => v.upstream(grantId);
    return info;
  };
}
