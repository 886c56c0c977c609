/**
 * What the authorization server keeps: the shapes of its records and the `AuthStore` interface that
 * holds them (in memory by default, in Redis with `picomcp/redis` so any replica serves any step).
 * Codes and refresh tokens are kept as digests, never as themselves.
 */

/** A client: registered by RFC 7591, or read from its Client ID Metadata Document (its `client_id` is then that URL). */
export interface ClientRecord {
  /** The client's id: an opaque id for a registered client, the document's https URL for a CIMD client. */
  client_id: string;
  /** How the client came to be known. */
  kind: "registered" | "metadata-document";
  /** The exact redirect URIs it may use (compared as strings, never as prefixes). */
  redirect_uris: string[];
  /** How it authenticates at the token endpoint. */
  token_endpoint_auth_method: "none" | "client_secret_post" | "client_secret_basic";
  /** SHA-256 (base64url) of its secret, for a confidential registered client. */
  client_secret_hash?: string;
  /** Shown on the consent page. */
  client_name?: string;
  /** Shown on the consent page (its host, always). */
  client_uri?: string;
  /** Shown on the consent page. */
  logo_uri?: string;
  /** The scopes it may ask for (space-separated), when it declared them. */
  scope?: string;
  /** `authorization_code`, `refresh_token`. */
  grant_types?: string[];
  /** When it was registered or its document fetched (seconds since the epoch). */
  client_id_issued_at?: number;
  /** More metadata fields, kept as sent. */
  [field: string]: unknown;
}

/** The tokens the upstream identity provider gave for one person (federation only). Never sent to an MCP client. */
export interface UpstreamTokens {
  accessToken: string;
  tokenType?: string;
  refreshToken?: string;
  /** When the access token expires (ms since the epoch); absent when the provider did not say. */
  expiresAt?: number;
  scope?: string;
  idToken?: string;
}

/** Who signed in: what a `SignIn` finds out. */
export interface Identity {
  /** The person's stable id at this server (the token's `sub`). Required, non-empty. */
  subject: string;
  /** Claims to put in the access token and in `ctx.auth.extra` (name, email, …); never reserved JWT claims. */
  claims?: { [claim: string]: unknown };
  /** The upstream provider's tokens, kept in the grant for `upstreamToken(ctx.auth)`. */
  upstream?: UpstreamTokens;
}

/** One authorization in progress: from `/authorize` through consent and sign-in to the code. */
export interface PendingAuthorization {
  /** Random, unguessable; the consent form and the sign-in's own `state` carry it. */
  id: string;
  clientId: string;
  redirectUri: string;
  /** The client's `state`, echoed back to it. */
  state?: string;
  /** PKCE S256 challenge. */
  codeChallenge: string;
  /** The one resource (RFC 8707) the token will be bound to, canonical. */
  resource: string;
  /** Scopes asked for and allowed. */
  scopes: string[];
  /** ms since the epoch. */
  createdAt: number;
  /** Set once the person approved this client on the consent page. */
  consented?: boolean;
  /** Set once the sign-in finished. */
  identity?: Identity;
  /** A `SignIn`'s own data for this authorization (an upstream PKCE verifier, a nonce). */
  signIn?: { [key: string]: unknown };
}

/** An authorization code, kept until redeemed (once) or expired. */
export interface CodeRecord {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scopes: string[];
  identity: Identity;
  /** The grant the code's redemption creates: a replayed code revokes it. */
  grantId: string;
  /** ms since the epoch. */
  expiresAt: number;
}

/** What `takeCode` found. */
export type TakenCode = { code: CodeRecord } | { replayed: CodeRecord };

/** A grant: one person's consent to one client for one resource; its refresh tokens and upstream tokens. */
export interface GrantRecord {
  id: string;
  clientId: string;
  subject: string;
  resource: string;
  scopes: string[];
  claims?: { [claim: string]: unknown };
  upstream?: UpstreamTokens;
  /** Digest of the refresh token that is current; the only one that refreshes. */
  refreshHash: string;
  /** Digests of refresh tokens already rotated out (the latest few): presenting one revokes the grant. */
  usedRefreshHashes: string[];
  /** ms since the epoch. */
  createdAt: number;
  /** When the grant (and its last refresh token) expires, ms since the epoch. */
  expiresAt: number;
  /** The grant's revision (absent: 0): `replaceGrant` writes only over the revision the grant was read at, and bumps it. */
  rev?: number;
}

/** The signing keys every replica shares: private JWKs, newest first. */
export interface StoredKeys {
  /** Bumped on each change; `casKeys` compares it. */
  version: number;
  keys: StoredKey[];
}

/** One signing key. */
export interface StoredKey {
  /** The private JWK, with `kid` and `alg`. */
  jwk: { kid: string; alg: string; [member: string]: unknown };
  /** ms since the epoch. */
  createdAt: number;
  /** Set once rotated out: it still verifies until this time (ms since the epoch), never signs. */
  retiredUntil?: number;
}

/**
 * Where the authorization server keeps its state. Every method is one atomic step: two replicas
 * redeeming the same code, or rotating the same refresh token, see one winner.
 */
export interface AuthStore {
  /** A client by id. */
  getClient(clientId: string): Promise<ClientRecord | undefined>;
  /** Saves a client; with `ttlMs` it is forgotten after that (a cached metadata document). */
  putClient(client: ClientRecord, ttlMs?: number): Promise<void>;
  /** Saves (or replaces) an authorization in progress for `ttlMs`. */
  putPending(pending: PendingAuthorization, ttlMs: number): Promise<void>;
  /** An authorization in progress, left in place. */
  getPending(id: string): Promise<PendingAuthorization | undefined>;
  /** An authorization in progress, removed: only one caller gets it. */
  takePending(id: string): Promise<PendingAuthorization | undefined>;
  /** Saves a code by its digest until `code.expiresAt`. */
  putCode(hash: string, code: CodeRecord): Promise<void>;
  /**
   * Redeems a code: the first call gets `{ code }`; a later call gets `{ replayed }` until the code
   * would have expired; after that, or for an unknown digest, undefined.
   */
  takeCode(hash: string): Promise<TakenCode | undefined>;
  /** Saves a new grant until `grant.expiresAt`. */
  putGrant(grant: GrantRecord): Promise<void>;
  /** A live grant by id. */
  getGrant(id: string): Promise<GrantRecord | undefined>;
  /**
   * Replaces a grant only if its `refreshHash` is still `expectedRefreshHash` and its `rev` still the
   * one `grant` carries (the revision it was read at; absent: 0), writing it with `rev` one more: false
   * when another write won (a rotation, an upstream refresh saved) or the grant is gone.
   */
  replaceGrant(grant: GrantRecord, expectedRefreshHash: string): Promise<boolean>;
  /** Deletes a grant (revocation); its refresh tokens stop at once, its access tokens at their next check. */
  deleteGrant(id: string): Promise<void>;
  /** The ids of a subject's live grants. */
  grantsOf(subject: string): Promise<string[]>;
  /** The signing keys, or undefined before the first were made. */
  getKeys(): Promise<StoredKeys | undefined>;
  /** Writes the keys only if the stored version is still `expectedVersion` (undefined: none stored yet). */
  casKeys(keys: StoredKeys, expectedVersion: number | undefined): Promise<boolean>;
  /** Counts one hit on `key` in a fixed window of `windowMs`; returns the count so far in the window (per-address limits). */
  hit(key: string, windowMs: number): Promise<number>;
  /** Stops timers and connections. */
  close?(): void | Promise<void>;
}
