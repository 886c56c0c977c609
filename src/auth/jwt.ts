/**
 * The JWT access-token verifier (RFC 9068) on `jose`: signatures, key sets and claims are jose's;
 * the policy (which algorithms, which audience, what a refusal says) is picomcp's.
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import type { AuthInfo } from "../connection.js";
import { discoverJwksUri } from "./discovery.js";
import { canonicalResource, InvalidTokenError, type VerifyToken } from "./resource-server.js";

/** The asymmetric signature algorithms a verifier may accept (never `none`, never HMAC). */
export type JwtAlgorithm =
  | "RS256"
  | "RS384"
  | "RS512"
  | "PS256"
  | "PS384"
  | "PS512"
  | "ES256"
  | "ES384"
  | "ES512"
  | "EdDSA"
  | "Ed25519";

const ASYMMETRIC: ReadonlySet<string> = new Set<JwtAlgorithm>([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
]);

/** Options of {@link jwtVerifier}. */
export interface JwtVerifierOptions {
  /** The issuer (`iss`) tokens must carry: the authorization server's issuer URL, or several. Required. */
  issuer: string | readonly string[];
  /** This server's canonical URI; `aud` must name it (RFC 8707; scheme and host compared case-insensitively). Required. */
  audience: string;
  /** The issuer's keys: the `jwks_uri` (fetched on first use, cached, fetched again for an unknown `kid`), or the key set itself. Default: the `jwks_uri` of the issuer's metadata (RFC 8414, then OpenID discovery). */
  jwks?: string | URL | JSONWebKeySet;
  /** Signature algorithms accepted; only asymmetric ones are allowed. Default: RS256, ES256, EdDSA (and Ed25519). */
  algorithms?: readonly JwtAlgorithm[];
  /** The `typ` header required (`at+jwt` also matches `application/at+jwt`); `false` accepts any, for issuers that do not follow RFC 9068. Default: "at+jwt". */
  typ?: string | false;
  /** Seconds of clock difference tolerated on `exp`, `nbf` and `iat`. Default: 60. */
  clockSkewSeconds?: number;
  /** Milliseconds a fetched key set is used before it is fetched again. Default: 600000 (10 min). */
  jwksCacheMs?: number;
  /** Least milliseconds between two fetches of the key set (an unknown `kid` fetches again at most this often). Default: 30000. */
  jwksCooldownMs?: number;
  /** Milliseconds to wait for the key set. Default: 5000. */
  jwksTimeoutMs?: number;
  /**
   * Whether a token must name its user in `sub` (RFC 9068 §2.2). `false` is for issuers of
   * client-credentials tokens that omit it: such a token's principal is then its client (`client_id`,
   * else `azp`), and a token naming neither is refused. Default: true.
   */
  requireSubject?: boolean;
}

const DEFAULT_ALGORITHMS: readonly JwtAlgorithm[] = ["RS256", "ES256", "EdDSA", "Ed25519"];

/**
 * A `verifyToken` for JWT access tokens: checks the signature against the issuer's JWKS, `alg`
 * against the allow-list, `typ`, `iss`, `aud`, `sub`, `exp`, `nbf` and `iat`; maps the claims to `AuthInfo`.
 * @example
 * const verifyToken = jwtVerifier({
 *   issuer: "https://auth.example.com",
 *   audience: "https://mcp.example.com/mcp",
 *   jwks: "https://auth.example.com/.well-known/jwks.json",
 * });
 */
export function jwtVerifier(options: JwtVerifierOptions): VerifyToken {
  const audience = canonicalResource(options.audience);
  const issuers = typeof options.issuer === "string" ? [options.issuer] : [...(options.issuer ?? [])];
  if (issuers.length === 0 || issuers.some((i) => typeof i !== "string" || i === ""))
    throw new TypeError("issuer must be the authorization server's issuer URL");
  const algorithms = [...(options.algorithms ?? DEFAULT_ALGORITHMS)];
  if (algorithms.length === 0) throw new TypeError("algorithms must list at least one algorithm");
  for (const alg of algorithms) {
    if (!ASYMMETRIC.has(alg))
      throw new TypeError(
        `Algorithm ${JSON.stringify(alg)} is not allowed: use asymmetric ones (${[...ASYMMETRIC].join(", ")})`,
      );
  }
  const typ = options.typ ?? "at+jwt";
  const skew = options.clockSkewSeconds ?? 60;
  if (!(skew >= 0) || !Number.isFinite(skew)) throw new RangeError("clockSkewSeconds must be 0 or more");
  const keys = keySet(options, issuers);
  const requireSubject = options.requireSubject ?? true;
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        algorithms,
        issuer: issuers,
        clockTolerance: skew,
        requiredClaims: ["exp", "aud"],
        ...(typ === false ? {} : { typ }),
      }));
    } catch (error) {
      throw refusal(error);
    }
    if (!audiences(payload.aud).some((a) => sameResource(a, audience)))
      throw new InvalidTokenError("the access token was not issued for this server (aud)");
    // jose looks at iat only when a maximum age is asked for: a token from the future is refused here
    if (typeof payload.iat === "number" && payload.iat > Date.now() / 1000 + skew)
      throw new InvalidTokenError("the access token was issued in the future");
    const info = authInfo(token, payload);
    if (payload.sub !== undefined && typeof payload.sub !== "string")
      throw new InvalidTokenError("the access token has an invalid sub claim");
    if (info.subject === undefined && requireSubject)
      throw new InvalidTokenError("the access token does not name its subject (sub)");
    if (info.subject === undefined && info.clientId === undefined)
      throw new InvalidTokenError("the access token names neither a subject (sub) nor a client (client_id)");
    return info;
  };
}

function keySet(options: JwtVerifierOptions, issuers: readonly string[]): JWTVerifyGetKey {
  const { jwks } = options;
  const remote = (url: URL) =>
    createRemoteJWKSet(url, {
      cacheMaxAge: options.jwksCacheMs ?? 600_000,
      cooldownDuration: options.jwksCooldownMs ?? 30_000,
      timeoutDuration: options.jwksTimeoutMs ?? 5_000,
    });
  if (typeof jwks === "string" || jwks instanceof URL) return remote(new URL(jwks));
  if (jwks === undefined) {
    if (issuers.length !== 1) throw new TypeError("jwks is required with more than one issuer");
    return discovered(issuers[0]!, options, remote);
  }
  if (!Array.isArray(jwks.keys)) throw new TypeError("jwks must be a URL or a key set { keys: [...] }");
  return createLocalJWKSet(jwks);
}

/** The key set behind the issuer's metadata, looked up on first use; a failed lookup is retried after the cooldown. */
function discovered(
  issuer: string,
  options: JwtVerifierOptions,
  remote: (url: URL) => JWTVerifyGetKey,
): JWTVerifyGetKey {
  let keys: Promise<JWTVerifyGetKey> | undefined;
  let failed: { at: number; error: unknown } | undefined;
  const cooldown = options.jwksCooldownMs ?? 30_000;
  return async (header, token) => {
    if (!keys) {
      if (failed && Date.now() - failed.at < cooldown) throw failed.error;
      keys = discoverJwksUri(issuer, options.jwksTimeoutMs ?? 5_000).then(remote);
      keys.catch((error: unknown) => {
        keys = undefined;
        failed = { at: Date.now(), error };
      });
    }
    return (await keys)(header, token);
  };
}

function audiences(aud: unknown): string[] {
  if (typeof aud === "string") return [aud];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === "string") : [];
}

function sameResource(candidate: string, canonical: string): boolean {
  try {
    return canonicalResource(candidate) === canonical;
  } catch {
    return false;
  }
}

/** @internal — what a refused token's challenge says; a failure that is not the token's is returned as it is. */
export function refusal(error: unknown): unknown {
  if (error instanceof errors.JWTExpired) return new InvalidTokenError("the access token has expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    const what: { [claim: string]: string } = {
      nbf: "the access token is not valid yet",
      iss: "the access token was not issued by a trusted issuer (iss)",
      aud: "the access token was not issued for this server (aud)",
      typ: "the token is not an access token (typ must be at+jwt)",
    };
    return new InvalidTokenError(what[error.claim] ?? `the access token has an invalid ${error.claim} claim`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return new InvalidTokenError("the access token is signed with an algorithm that is not allowed");
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return new InvalidTokenError("the access token is signed with an unknown key");
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return new InvalidTokenError("the access token's signature is invalid");
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  )
    return new InvalidTokenError("the access token is malformed");
  return error;
}

/** The claims as `AuthInfo`: `client_id` (or `azp`), scopes from `scope` (or `scp`), `sub`, `iss`, and every claim in `extra`. */
export function authInfo(token: string, claims: JWTPayload): AuthInfo {
  const info: AuthInfo = { token, scopes: scopesOf(claims), extra: { ...claims } };
  const client = typeof claims.client_id === "string" ? claims.client_id : claims.azp;
  if (typeof client === "string" && client !== "") info.clientId = client;
  if (typeof claims.sub === "string" && claims.sub !== "") info.subject = claims.sub;
  if (typeof claims.iss === "string" && claims.iss !== "") info.issuer = claims.iss;
  if (typeof claims.exp === "number") info.expiresAt = claims.exp;
  return info;
}

function scopesOf(claims: JWTPayload): string[] {
  const raw = claims.scope ?? claims.scp;
  if (typeof raw === "string") return raw.split(" ").filter((s) => s !== "");
  return Array.isArray(raw) ? raw.filter((s): s is string => typeof s === "string") : [];
}
