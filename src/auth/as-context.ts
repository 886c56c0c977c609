/**
 * What every endpoint of the authorization server shares: its settings once checked, its store and
 * keys, and the rules every endpoint applies the same way (which client, which scopes, which resource).
 */

import { addressKey } from "../http/client-address.js";
import type { GrantLiveness } from "./access-tokens.js";
import { type ClientMetadataOptions, fetchClientMetadata } from "./client-metadata.js";
import type { KeyRing } from "./keys.js";
import { AuthStoreFullError } from "./memory-store.js";
import { canonicalResource } from "./resource-server.js";
import type { SignIn } from "./sign-in.js";
import type { AuthStore, ClientRecord, Identity } from "./store.js";

/**
 * A team's own sign-in: who the person behind the browser's request is (their session cookie, say),
 * a `Response` to answer with instead (a redirect to a login page that comes back to the request's
 * URL), or undefined to refuse (the client gets `access_denied`).
 */
export type AuthenticateHook = (
  request: Request,
) => Identity | Response | undefined | Promise<Identity | Response | undefined>;

/** Limits of RFC 7591 dynamic registration. */
export interface RegistrationLimits {
  /** Registrations one address may make per window. Default: 10. */
  perAddress?: number;
  /** Registrations one network (an IPv4 /24, an IPv6 /48) may make per window, however many addresses it holds. Default: 4 × `perAddress`. */
  perNetwork?: number;
  /** Registrations all addresses together may make per window. Default: 1000. */
  total?: number;
  /** The window, in milliseconds. Default: 3600000 (an hour). */
  windowMs?: number;
  /** Milliseconds a registered client is kept until its first code is redeemed (then the store keeps it while used, 90 days unused by default), so a crowd of registrations that never sign in does not fill the store for long. Default: 86400000 (a day). */
  unredeemedTtlMs?: number;
}

/** Limits of the authorization endpoint: how many sign-ins one address and all together may start per window. */
export interface AuthorizationLimits {
  /** `/authorize` requests one address may make per window. Default: 60. */
  perAddress?: number;
  /** `/authorize` requests one network (an IPv4 /24, an IPv6 /48) may make per window, however many addresses it holds. Default: 4 × `perAddress`. */
  perNetwork?: number;
  /** `/authorize` requests all addresses together may make per window. Default: 10000. */
  total?: number;
  /** The window, in milliseconds. Default: 600000 (ten minutes). */
  windowMs?: number;
}

/** Limits of Client ID Metadata Document fetches made for callers (a document cached in the store is not fetched). */
export interface ClientMetadataFetchLimits {
  /** Fetches one address may cause per window. Default: 30. */
  perAddress?: number;
  /** Fetches one network (an IPv4 /24, an IPv6 /48) may cause per window. Default: 4 × `perAddress`. */
  perNetwork?: number;
  /** Fetches all callers together may cause per window (callers with no known address included). Default: 1000. */
  total?: number;
  /** The window, in milliseconds. Default: 600000 (ten minutes). */
  windowMs?: number;
}

/** What {@link findClient} answers when a metadata document may not be fetched now: too many were. */
export const FETCHES_BUSY = Symbol("too many metadata documents fetched");

/** @internal — the authorization server's shared state. */
export interface AsContext {
  /** The issuer URL exactly as configured (the `iss` of every token and response). */
  readonly issuer: string;
  /** The issuer without a trailing slash: every route is under it. */
  readonly base: string;
  /** The path of `base` (empty at the root). */
  readonly basePath: string;
  readonly origin: string;
  readonly secure: boolean;
  readonly resources: readonly string[];
  /** Scopes a client may ask for; undefined: any. */
  readonly scopes: readonly string[] | undefined;
  readonly store: AuthStore;
  readonly keys: KeyRing;
  /** The sign-in run after consent (federation); undefined with the `authenticate` hook. */
  readonly signIn: SignIn | undefined;
  /** The `authenticate` hook, run before the consent page; undefined with a `SignIn`. */
  readonly authenticate: AuthenticateHook | undefined;
  readonly ttl: {
    readonly access: number;
    readonly refresh: number;
    readonly code: number;
    readonly pending: number;
  };
  readonly cimd: ClientMetadataOptions | false;
  readonly cimdFetches: Tiers;
  readonly registration: (Tiers & { unredeemedTtlMs: number }) | false;
  readonly authorizations: Tiers;
  readonly liveness: GrantLiveness;
  report(error: unknown): void;
}

/** What `store.hit` answers when it could not keep a counter (a full `MemoryAuthStore`): not counted, not over. */
export const UNCOUNTED = Number.MAX_SAFE_INTEGER;

/** The limits `overLimit` applies: per address, per network, in all, per window. */
export interface Tiers {
  perAddress: number;
  perNetwork: number;
  total: number;
  windowMs: number;
}

/**
 * The network an address is counted in beside its own key: its IPv4 /24 or IPv6 /48 (one holder of a
 * /48 has 65536 /64s to choose keys from). Undefined when `address` is no IP address.
 */
export function networkKey(address: string | undefined): string | undefined {
  const key = addressKey(address);
  if (key === undefined) return undefined;
  return /^\d+\.\d+\.\d+\.\d+$/.test(key) ? key.replace(/\.\d+$/, ".0/24") : addressKey(address, 48);
}

/**
 * Counts one request of `kind` from `address` through `store.hit` — per address, then per network
 * (IPv4 /24, IPv6 /48), then in all — and says whether it is over a limit. A caller with no known
 * address is counted in the total only: one shared "unknown" bucket would let one caller shut out
 * every other (pass `info.address` to `handle`). A hit the store could not count (a full
 * `MemoryAuthStore`) falls through to the next tier: not counted is not over.
 */
export async function overLimit(
  ctx: AsContext,
  kind: string,
  address: string | undefined,
  limits: Tiers,
): Promise<boolean> {
  if (await overAddress(ctx, kind, address, limits)) return true;
  return overTotal(ctx, kind, limits);
}

/** The per-address and per-network tiers of {@link overLimit}. */
export async function overAddress(
  ctx: AsContext,
  kind: string,
  address: string | undefined,
  limits: Tiers,
): Promise<boolean> {
  const key = addressKey(address);
  if (key === undefined) return false;
  const n = await ctx.store.hit(`${kind}:address:${key}`, limits.windowMs);
  if (n !== UNCOUNTED && n > limits.perAddress) return true;
  const net = networkKey(address)!;
  const m = await ctx.store.hit(`${kind}:network:${net}`, limits.windowMs);
  return m !== UNCOUNTED && m > limits.perNetwork;
}

/** The total tier of {@link overLimit}. */
export async function overTotal(ctx: AsContext, kind: string, limits: Tiers): Promise<boolean> {
  return (await ctx.store.hit(`${kind}:all`, limits.windowMs)) > limits.total;
}

/** Whether `clientId` names a metadata document (an http(s) URL with a path); the fetcher decides the rest. */
export function isDocumentUrl(clientId: string): boolean {
  if (!/^https?:\/\//i.test(clientId)) return false;
  try {
    return new URL(clientId).pathname.length > 1;
  } catch {
    return false;
  }
}

/** How long a document that could not be used is not fetched again, and how many such failures are remembered. */
const FAILURE_MS = 60_000;
const MAX_FAILURES = 1000;
const failures = new WeakMap<AsContext, Map<string, { why: string; until: number }>>();

/**
 * The client `clientId` names: stored, or fetched from its metadata document (then cached); a string
 * says why none, {@link FETCHES_BUSY} that too many documents were fetched (per address, network or in
 * all). A document that could not be used is not fetched again for a minute (in this process).
 */
export async function findClient(
  ctx: AsContext,
  clientId: string,
  address: string | undefined,
): Promise<ClientRecord | string | typeof FETCHES_BUSY> {
  if (clientId.length > 2048) return "The client_id is too long";
  const known = await ctx.store.getClient(clientId);
  if (known) return known;
  if (!isDocumentUrl(clientId)) return "The client is not registered here";
  if (ctx.cimd === false) return "Client metadata documents are not accepted here";
  const failed = failures.get(ctx) ?? new Map<string, { why: string; until: number }>();
  failures.set(ctx, failed);
  const before = failed.get(clientId);
  if (before !== undefined && before.until > Date.now()) return before.why;
  if (await overLimit(ctx, "cimd", address, ctx.cimdFetches)) return FETCHES_BUSY;
  let fetched: { client: ClientRecord; ttlMs: number };
  try {
    fetched = await fetchClientMetadata(clientId, ctx.cimd);
  } catch (error) {
    // the client's document is the client's matter: a page for the person, never a server error
    const said = error instanceof Error && error.name === "ClientMetadataError" ? `: ${error.message}` : "";
    const why = `The client's metadata document cannot be used${said || " (it could not be fetched)"}`;
    failed.delete(clientId);
    if (failed.size >= MAX_FAILURES) failed.delete(failed.keys().next().value!);
    failed.set(clientId, { why, until: Date.now() + FAILURE_MS });
    return why;
  }
  failed.delete(clientId);
  if (fetched.ttlMs > 0) {
    try {
      await ctx.store.putClient(fetched.client, fetched.ttlMs);
    } catch (error) {
      // a store full of registered clients: the document is used uncached, fetched again next time
      if (!(error instanceof AuthStoreFullError)) throw error;
    }
  }
  return fetched.client;
}

/** The resource asked for, canonical and served here; undefined when it is not one of this server's. */
export function ourResource(ctx: AsContext, asked: string): string | undefined {
  try {
    const r = canonicalResource(asked);
    return ctx.resources.includes(r) ? r : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The scopes granted for a request of `asked` (space-separated, or undefined): each must be one of
 * the server's (when it lists them) and of the client's (when it declared them); none asked is all of
 * the server's. `offline_access` passes and is dropped (refresh tokens are always issued). A string says why not.
 */
export function grantScopes(
  ctx: AsContext,
  client: ClientRecord,
  asked: string | undefined,
): string[] | string {
  const wanted =
    asked === undefined ? [...(ctx.scopes ?? [])] : [...new Set(asked.split(" ").filter((s) => s !== ""))];
  const own = typeof client.scope === "string" ? client.scope.split(" ") : undefined;
  const out: string[] = [];
  for (const s of wanted) {
    if (s === "offline_access") continue;
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(s)) return `${JSON.stringify(s)} is not a scope`;
    if (ctx.scopes && !ctx.scopes.includes(s)) return `The scope ${s} is not offered here`;
    if (asked !== undefined && own && !own.includes(s)) return `The client did not register the scope ${s}`;
    if (own && !own.includes(s)) continue;
    out.push(s);
  }
  return out;
}
