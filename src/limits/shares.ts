/**
 * What the governor counts: every resource's default share and total, and the one refusal all of
 * them answer with (`-32000`, its `data` naming the limit), which HTTP sends as 429 or 503.
 */
import { McpError } from "../errors.js";

/** How much of one resource a caller may hold, and all callers together. */
export interface Share {
  /** Units one caller (one principal; every anonymous caller without a key is one) may hold. */
  perPrincipal?: number;
  /** Units all callers together may hold. */
  total?: number;
}

/** The JSON-RPC code of every refusal of the governor (with `data.limit` naming what was refused). */
export const LIMIT_CODE = -32000;

/**
 * Every resource's default share and total, and the wait a refused caller is told. A share is what
 * one caller (a principal, or an anonymous address) may hold; the totals let a crowd of 10000
 * callers each hold what a client holds (a session and its GET stream, or a listen, and a request in
 * flight) and bound the heap of all of them together (docs/security.md).
 */
export const DEFAULT_SHARES: {
  readonly [resource: string]: { perPrincipal: number; total: number; retryAfterMs: number; what: string };
} = {
  requests: { perPrincipal: 64, total: 20_000, retryAfterMs: 1000, what: "requests in flight" },
  inputRounds: { perPrincipal: 32, total: 2000, retryAfterMs: 1000, what: "open requests to the client" },
  tasks: { perPrincipal: 100, total: 10_000, retryAfterMs: 5000, what: "tasks" },
  runningTasks: { perPrincipal: 32, total: 1000, retryAfterMs: 5000, what: "running tasks" },
  listens: { perPrincipal: 16, total: 10_000, retryAfterMs: 5000, what: "listen streams" },
  subscriptionBytes: {
    perPrincipal: 1024 * 1024,
    total: 64 * 1024 * 1024,
    retryAfterMs: 5000,
    what: "bytes of subscriptions",
  },
  sessions: { perPrincipal: 32, total: 10_000, retryAfterMs: 5000, what: "sessions" },
  sseStreams: { perPrincipal: 32, total: 10_000, retryAfterMs: 5000, what: "GET streams" },
  sseBytes: {
    perPrincipal: 16 * 1024 * 1024,
    total: 128 * 1024 * 1024,
    retryAfterMs: 5000,
    what: "bytes queued for SSE clients",
  },
  requestBytes: {
    perPrincipal: 16 * 1024 * 1024,
    total: 128 * 1024 * 1024,
    retryAfterMs: 1000,
    what: "bytes of request bodies in flight",
  },
};

/**
 * What a refusal's `data` says: the limit (a resource, or `rate`), whose it is (`principal`: the
 * caller's share; `server`: the total of all callers), its size and how long to wait.
 */
export interface LimitData {
  readonly limit: string;
  readonly scope: "principal" | "server";
  readonly max: number;
  readonly retryAfterMs: number;
  /** A rate's refusal: the rules the request takes from (`tools/call`, `tools/call:search`). */
  readonly rules?: readonly string[];
}

/** The refusal of a resource for one caller: `-32000`, its `data` naming the limit (HTTP: 429, or 503 for the total). */
export function limitError(data: LimitData, message?: string): McpError {
  const what = DEFAULT_SHARES[data.limit]?.what ?? data.limit;
  const text =
    message ??
    (data.scope === "principal"
      ? `Too Many Requests: this caller holds its share of ${what} (${data.max})`
      : `Service Unavailable: the server holds as many ${what} as it may (${data.max})`);
  return new McpError(LIMIT_CODE, text, { ...data, retryAfterMs: Math.max(0, Math.ceil(data.retryAfterMs)) });
}

/** The HTTP status and `Retry-After` a refusal of the governor goes out with; undefined for any other error. */
export function limitStatus(error: {
  code: number;
  data?: unknown;
}): { status: number; headers: { "retry-after": string } } | undefined {
  const d = error.data as Partial<LimitData> | undefined;
  if (error.code !== LIMIT_CODE || typeof d !== "object" || d === null || typeof d.limit !== "string")
    return undefined;
  if (typeof d.retryAfterMs !== "number" || (d.scope !== "principal" && d.scope !== "server"))
    return undefined;
  const seconds = String(Math.max(1, Math.ceil(d.retryAfterMs / 1000)));
  return { status: d.scope === "principal" ? 429 : 503, headers: { "retry-after": seconds } };
}

/** What a list of strings a caller keeps with the server counts as (`subscriptionBytes`): two bytes a character, 64 an entry. */
export function listBytes(list: unknown): number {
  if (!Array.isArray(list)) return 0;
  let n = 0;
  for (const s of list) n += typeof s === "string" ? 2 * s.length + 64 : 64;
  return n;
}
