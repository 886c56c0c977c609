/**
 * The authorization server's signing keys: made on first use, shared by every replica through the
 * store (`getKeys`/`casKeys`), rotated so that the newest signs and a retired one still verifies
 * until the tokens it signed have expired. Key generation, import and export are jose's.
 */
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JSONWebKeySet, type JWK } from "jose";
import { toBase64Url } from "../bytes.js";
import type { AuthStore, StoredKey, StoredKeys } from "./store.js";

/** The algorithms the authorization server can sign access tokens with. */
export type SigningAlgorithm = "ES256" | "RS256" | "EdDSA";

/** Public members of a JWK, by key type: nothing else leaves the server. */
const PUBLIC = ["kty", "crv", "x", "y", "n", "e", "kid", "alg"] as const;

interface Loaded {
  version: number;
  /** Keys still valid (active, or retired but still verifying), newest first. */
  keys: StoredKey[];
  signing: { kid: string; alg: string; key: CryptoKey };
  verify: Map<string, CryptoKey>;
  jwks: JSONWebKeySet;
  loadedAt: number;
}

function random(bytes: number): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function publicJwk(jwk: StoredKey["jwk"]): JWK {
  const out: { [member: string]: unknown } = { use: "sig" };
  for (const m of PUBLIC) if (jwk[m] !== undefined) out[m] = jwk[m];
  return out as JWK;
}

/** @internal — the key ring one authorization server instance reads its keys through. */
export class KeyRing {
  readonly #store: AuthStore;
  readonly #alg: SigningAlgorithm;
  readonly #retireMs: number;
  readonly #cacheMs: number;
  #loaded: Loaded | undefined;
  #loading: Promise<Loaded> | undefined;

  /**
   * `retireMs`: how long a rotated-out key keeps verifying (the access tokens' lifetime and some
   * slack); `cacheMs`: how long keys read from the store are used before they are read again.
   */
  constructor(store: AuthStore, alg: SigningAlgorithm, retireMs: number, cacheMs: number) {
    this.#store = store;
    this.#alg = alg;
    this.#retireMs = retireMs;
    this.#cacheMs = cacheMs;
  }

  /** The keys as they are now: read from the store when the copy here is older than `cacheMs` (or `fresh`). */
  async #get(fresh = false): Promise<Loaded> {
    const l = this.#loaded;
    if (l && !fresh && Date.now() - l.loadedAt < this.#cacheMs) return l;
    if (!this.#loading) {
      this.#loading = this.#load().finally(() => {
        this.#loading = undefined;
      });
    }
    return this.#loading;
  }

  async #load(): Promise<Loaded> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await this.#store.getKeys();
      const now = Date.now();
      const live = stored?.keys.filter((k) => k.retiredUntil === undefined || k.retiredUntil > now) ?? [];
      if (stored && live.some((k) => k.retiredUntil === undefined)) {
        if (this.#loaded?.version === stored.version) {
          this.#loaded.loadedAt = now;
          return this.#loaded;
        }
        this.#loaded = await this.#import(stored.version, live, now);
        return this.#loaded;
      }
      // no key yet (or only retired ones): make one; another replica doing the same wins or loses the CAS
      await this.#write(stored, await this.#make(), live);
    }
    throw new Error("The signing keys could not be written to the store (it kept changing)");
  }

  async #make(): Promise<StoredKey> {
    const alg = this.#alg;
    const { privateKey } = await generateKeyPair(alg, {
      extractable: true,
      ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}),
    });
    const jwk = { ...(await exportJWK(privateKey)), kid: random(12), alg };
    return { jwk: jwk as StoredKey["jwk"], createdAt: Date.now() };
  }

  /** Writes `fresh` in front of the live keys (the others retired now); false when another write won. */
  async #write(stored: StoredKeys | undefined, fresh: StoredKey, live: StoredKey[]): Promise<boolean> {
    const until = Date.now() + this.#retireMs;
    const keys = [
      fresh,
      ...live.map((k) => (k.retiredUntil === undefined ? { ...k, retiredUntil: until } : k)),
    ];
    return this.#store.casKeys({ version: (stored?.version ?? 0) + 1, keys }, stored?.version);
  }

  async #import(version: number, keys: StoredKey[], now: number): Promise<Loaded> {
    const verify = new Map<string, CryptoKey>();
    let signing: Loaded["signing"] | undefined;
    for (const k of keys) {
      const { kid, alg } = k.jwk;
      verify.set(kid, (await importJWK(publicJwk(k.jwk), alg)) as CryptoKey);
      if (!signing && k.retiredUntil === undefined)
        signing = { kid, alg, key: (await importJWK(k.jwk as JWK, alg)) as CryptoKey };
    }
    const jwks = { keys: keys.map((k) => publicJwk(k.jwk)) };
    return { version, keys, signing: signing!, verify, jwks, loadedAt: now };
  }

  /** The key that signs now. */
  async signing(): Promise<Loaded["signing"]> {
    return (await this.#get()).signing;
  }

  /** The public key set (JWKS): every key that still verifies. */
  async jwks(): Promise<JSONWebKeySet> {
    return (await this.#get()).jwks;
  }

  /** The public key of `kid`; an unknown one reads the store again (another replica may have rotated), at most once per second. */
  async verifying(kid: string | undefined): Promise<CryptoKey | undefined> {
    if (kid === undefined) return undefined;
    let l = await this.#get();
    const key = l.verify.get(kid);
    if (key !== undefined || Date.now() - l.loadedAt < 1000) return key;
    l = await this.#get(true);
    return l.verify.get(kid);
  }

  /** Makes a new signing key; the one before keeps verifying for `retireMs`. Returns the new key's `kid`. */
  async rotate(): Promise<string> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await this.#store.getKeys();
      const now = Date.now();
      const live = stored?.keys.filter((k) => k.retiredUntil === undefined || k.retiredUntil > now) ?? [];
      const fresh = await this.#make();
      if (await this.#write(stored, fresh, live)) {
        await this.#get(true);
        return fresh.jwk.kid;
      }
    }
    throw new Error("The signing keys could not be rotated (the store kept changing)");
  }
}

/** Random bytes as base64url: ids, codes and secrets. */
export function randomToken(bytes = 32): string {
  return random(bytes);
}

/** SHA-256 of `text`, as base64url: how codes, refresh tokens and secrets are stored. */
export async function digest(text: string): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

/** Compares two strings in time that depends on their length only (digests, never secrets themselves). */
export function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
