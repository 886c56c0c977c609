/**
 * `requestState` of 2026-07-28 input-required results, sealed with AES-256-GCM (Web Crypto, so it
 * runs wherever the core runs). The client echoes it unchanged; it is attacker-controlled, so it
 * is encrypted and authenticated, expires, and names the method, a digest of the request's params
 * and the caller it was issued to. Keys form a ring: the first seals, every one opens, so a key
 * can rotate without failing the rounds in flight.
 */
import { fromBase64Url, toBase64Url } from "../bytes.js";
import { ErrorCode, McpError } from "../errors.js";

/** Options of the request-state seal (the server's `requestState` option). */
export interface RequestStateOptions {
  /**
   * Secrets of at least 32 bytes; the first seals, all open. Replicas behind one endpoint must share
   * them. Default: one random key per process (a state only opens in the process that made it).
   */
  keys?: readonly (string | Uint8Array)[];
  /** Milliseconds a state stays valid after it was issued. Default: 600000 (10 minutes). */
  ttlMs?: number;
  /** Longest accepted `requestState` in characters. Default: 262144. */
  maxLength?: number;
}

/** What a sealed state carries. */
export interface StatePayload {
  /** The answers of earlier rounds, by input key. */
  readonly answers: { readonly [key: string]: unknown };
  /** The handler's own value. */
  readonly state: unknown;
}

const PREFIX = "rs1.";
const AAD = new TextEncoder().encode("picomcp request-state v1");
const INFO = new TextEncoder().encode("picomcp request-state AES-256-GCM");

/** The error of a state that does not open: tampered, expired, or issued for another request or caller. */
export function invalidState(): McpError {
  return new McpError(ErrorCode.InvalidParams, "Invalid or expired requestState", {
    reason: "invalid_request_state",
  });
}

/** Seals and opens request states under one key ring. */
export class RequestStateSeal {
  // undefined: a random key, made on first use (Workers forbid random values at startup)
  readonly #secrets: Uint8Array<ArrayBuffer>[] | undefined;
  readonly #ttlMs: number;
  readonly #maxLength: number;
  #keys: Promise<CryptoKey[]> | undefined;

  constructor(options: RequestStateOptions = {}) {
    const keys = options.keys;
    if (keys?.length === 0) throw new TypeError("requestState.keys needs at least one key");
    this.#secrets = keys?.map((k) => {
      const bytes = typeof k === "string" ? new TextEncoder().encode(k) : k;
      if (!(bytes instanceof Uint8Array) || bytes.length < 32)
        throw new TypeError("Every requestState key needs at least 32 bytes (use 32 random bytes)");
      return bytes.slice();
    });
    this.#ttlMs = options.ttlMs ?? 600_000;
    if (!Number.isSafeInteger(this.#ttlMs) || this.#ttlMs <= 0)
      throw new RangeError("requestState.ttlMs must be a positive integer");
    this.#maxLength = options.maxLength ?? 262_144;
  }

  #ring(): Promise<CryptoKey[]> {
    this.#keys ??= Promise.all(
      (this.#secrets ?? [crypto.getRandomValues(new Uint8Array(32))]).map(async (secret) => {
        const base = await crypto.subtle.importKey("raw", secret, "HKDF", false, ["deriveKey"]);
        return crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: INFO },
          base,
          { name: "AES-GCM", length: 256 },
          false,
          ["encrypt", "decrypt"],
        );
      }),
    );
    return this.#keys;
  }

  /** A state for a retry of `method` with `params` by `principal`. */
  async seal(payload: StatePayload, method: string, params: object, principal: string | undefined) {
    const [key] = await this.#ring();
    const body = {
      e: Date.now() + this.#ttlMs,
      m: method,
      d: await digest(params),
      p: principal ?? null,
      a: payload.answers,
      s: payload.state,
    };
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const plain = new TextEncoder().encode(JSON.stringify(body));
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: AAD }, key!, plain),
    );
    const out = new Uint8Array(iv.length + sealed.length);
    out.set(iv);
    out.set(sealed, iv.length);
    return PREFIX + toBase64Url(out);
  }

  /** The payload of `token`; throws {@link invalidState} unless it opens, is fresh, and matches the request. */
  async open(
    token: unknown,
    method: string,
    params: object,
    principal: string | undefined,
  ): Promise<StatePayload> {
    if (typeof token !== "string" || token.length > this.#maxLength || !token.startsWith(PREFIX))
      throw invalidState();
    const bytes = fromBase64Url(token.slice(PREFIX.length));
    if (!bytes || bytes.length < 12 + 16) throw invalidState();
    const iv = bytes.subarray(0, 12);
    const data = bytes.subarray(12);
    let plain: ArrayBuffer | undefined;
    for (const key of await this.#ring()) {
      try {
        plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: AAD }, key, data);
        break;
      } catch {
        // not sealed with this key: try the next one of the ring
      }
    }
    if (!plain) throw invalidState();
    const body = JSON.parse(new TextDecoder().decode(plain)) as {
      e: number;
      m: string;
      d: string;
      p: string | null;
      a: { [key: string]: unknown };
      s: unknown;
    };
    if (!(body.e > Date.now()) || body.m !== method || body.p !== (principal ?? null)) throw invalidState();
    if (body.d !== (await digest(params))) throw invalidState();
    return { answers: Object.assign(Object.create(null), body.a), state: body.s };
  }
}

/** SHA-256 of the request's params without the fields that change between rounds. */
async function digest(params: object): Promise<string> {
  const salient: { [key: string]: unknown } = {};
  for (const [k, v] of Object.entries(params)) {
    if (k !== "_meta" && k !== "inputResponses" && k !== "requestState") salient[k] = v;
  }
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical(salient)));
  return toBase64Url(new Uint8Array(hash));
}

/** JSON with object keys sorted, so that equal params give equal digests. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const obj = value as { [key: string]: unknown };
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
