/**
 * Who may use a session (only the principal that opened it, with credentials when it was opened
 * with them), room for one more, credentials frozen for every request, and session ids.
 */
import { type AuthInfo, principalOf } from "../connection.js";
import type { Features } from "../eras/versions.js";
import { isSessionVersion } from "../eras/versions.js";
import {
  httpError,
  limitReply,
  SERVER_ERROR,
  sessionNotFound,
  unauthorized,
  unsupportedVersion,
  versionFeatures,
} from "./answers.js";
import type { Reply } from "./reply.js";
import { header } from "./request.js";
import type { Session, SessionTable } from "./session.js";

/** Who opened a session: a live one, or one a store keeps. */
export interface Opened {
  readonly principal?: string | undefined;
  readonly authenticated: boolean;
}

/**
 * Whether a request may use a session: only the principal that opened it, with credentials when
 * it was opened with them. Another principal gets the same 404 as an unknown id, so that a session
 * id tells nobody else that it exists; missing credentials get 401. A session is never rebound.
 */
export function refuseSession(
  session: Opened,
  auth: AuthInfo | undefined,
  features: Features,
): Reply | undefined {
  if (mayUse(session, auth)) return undefined;
  return auth === undefined ? unauthorized(features) : sessionNotFound(features);
}

/** Whether a caller with `auth` may use `session` (see {@link refuseSession}). */
export function mayUse(session: Opened, auth: AuthInfo | undefined): boolean {
  if (auth === undefined) return !session.authenticated;
  return session.authenticated && principalOf(auth) === session.principal;
}

/** The session a GET or DELETE names, or the error answer (400 without one, 404 unknown or another's, 400 bad version). */
export function namedSession(
  request: Request,
  table: SessionTable,
  auth: AuthInfo | undefined,
): Session | Reply {
  const sid = header(request, "mcp-session-id");
  const version = header(request, "mcp-protocol-version");
  if (version !== null && !isSessionVersion(version)) return unsupportedVersion(version);
  if (sid === null) return httpError(400, SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required");
  const session = table.find(sid);
  const features = versionFeatures(version);
  if (!session) return sessionNotFound(features);
  const refused = refuseSession(session, auth, features);
  if (refused) return refused;
  table.touch(session);
  return session;
}

/** Makes room in `table` for one more session of `caller`, or the 429 (its share) or 503 (the total) that says why there is none. */
export function noRoom(table: SessionTable, caller: string): Reply | undefined {
  const refused = table.makeRoom(caller);
  return refused ? limitReply(refused) : undefined;
}

/** Freezes verified credentials in place, nested objects too, so no request can change another's. */
export function freezeAuth(auth: AuthInfo): AuthInfo {
  deepFreeze(auth, 8);
  return auth;
}

function deepFreeze(value: object, depth: number): void {
  if (Object.isFrozen(value)) return;
  Object.freeze(value);
  if (depth === 0) return;
  for (const key in value) {
    const v = (value as { [key: string]: unknown })[key];
    if (typeof v === "object" && v !== null) deepFreeze(v, depth - 1);
  }
}

/** Bytes of a session id: {@link isSessionId} knows its form, 32 lower-case hex digits. */
export const SESSION_ID_BYTES = 16;

/**
 * Whether a client's `Mcp-Session-Id` has the form of the ids this handler makes: what has not is
 * no session, and never reaches a store (where it could name another key).
 */
export function isSessionId(sid: string): boolean {
  if (sid.length !== 2 * SESSION_ID_BYTES) return false;
  for (let i = 0; i < sid.length; i++) {
    const c = sid.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** A random id of visible ASCII (lower-case hex) from Web Crypto. */
export function randomId(bytes: number): string {
  // one call to Web Crypto per 4 KiB of ids: a call costs far more than the bytes it returns
  if (poolAt + bytes > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  let s = "";
  for (let i = poolAt; i < poolAt + bytes; i++) s += HEX[pool[i]!]!;
  poolAt += bytes;
  return s;
}

const pool = new Uint8Array(4096);

let poolAt = pool.length;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
