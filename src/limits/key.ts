/**
 * Who a caller is, for the limits: its principal when it has verified credentials, else the key a
 * transport gave its connection (an HTTP client's address, or what the handler's `limits.key` says),
 * else the one anonymous caller that every caller without either is.
 */
import { type AuthInfo, type Connection, principalOf } from "../connection.js";

/**
 * The principal of verified credentials as the limits count it; undefined when there is none.
 * Everything the governor counts per principal takes its key from here, and from nowhere else.
 */
export function principalKey(auth: AuthInfo | undefined): string | undefined {
  return principalOf(auth);
}

/** The key every anonymous caller without a key of its own shares. */
export const ANONYMOUS = "anonymous";

/**
 * Counts the anonymous callers of `conn` under `key` (their address, say) rather than as the one
 * anonymous caller. A caller with credentials is counted as its principal whatever this says.
 */
export function setCallerKey(conn: Connection, key: string | undefined, address?: string): void {
  // kept on the connection itself, not in a slot: a stateless HTTP request's connection is made for it alone
  if (key !== undefined) conn.callerKey = key;
  if (address !== undefined) conn.callerAddress = address;
}

/** The address of the client a connection's caller came from, as its transport resolved it; undefined when unknown. */
export function callerAddress(conn: Connection): string | undefined {
  return conn.callerAddress;
}

/**
 * The key a caller's shares and rates are counted under: `principal:<p>` for a principal,
 * `anonymous:<key>` for an anonymous caller a transport named, `anonymous` for every other one.
 * The prefixes keep a principal from ever sharing a count with an address.
 */
export function callerKey(auth: AuthInfo | undefined, conn: Connection): string {
  const p = principalKey(auth);
  return p === undefined ? anonymousKey(conn.callerKey) : `principal:${p}`;
}

/** The key of an anonymous caller named `key` by its transport (undefined: the one shared anonymous caller). */
export function anonymousKey(key: string | undefined): string {
  return key === undefined ? ANONYMOUS : `anonymous:${key}`;
}
