/**
 * The host an extension reaches the server through outside a request (`Extension.attach`): the open
 * sessions, `onError`, and the caller limits. The built-ins hold nothing more than this.
 */

import type { Connection, SessionSlot } from "../connection.js";
import type { Features } from "../eras/versions.js";
import { DEFAULT_SHARES } from "../limits/shares.js";
import type { Params, RequestId } from "../types.js";

/** One open session, as an extension sees it outside a request (and in its `sessionEnd` hook). */
export interface SessionHandle {
  /** The session's id (the HTTP `Mcp-Session-Id`; a random UUID on stdio). */
  readonly sessionId: string;
  /** The revision the session negotiated, and what it implies. */
  readonly features: Features;
  /** This session's value of `slot`, made on first use (as `ctx.sessionState(slot)`). */
  sessionState<T>(slot: SessionSlot<T>): T;
  /** This session's value of `slot`, or undefined when it was never made (nothing is made). */
  peek<T>(slot: SessionSlot<T>): T | undefined;
  /** Sends the notification `method` to this session's client (nothing once it is closed). */
  notify(method: string, params?: object): void;
}

/**
 * The shares of the server's `limits` (docs/security.md), counted per caller key (`ctx.caller`):
 * what an extension counts of the state it keeps for each caller.
 */
export type ShareName =
  | "requests"
  | "inputRounds"
  | "tasks"
  | "runningTasks"
  | "listens"
  | "subscriptionBytes";

/** Counts what each caller holds against its share and the server's total; a refusal is an `McpError` (-32029 shaped, `429`/`503` over HTTP). */
export interface CallerLimits {
  /** Takes `units` (1) of `share` for `caller`, or throws the refusal. */
  take(share: ShareName, caller: string, units?: number): void;
  /** Gives back `units` (1) of `share` that `caller` took. */
  give(share: ShareName, caller: string, units?: number): void;
  /** Takes `units` (1) and returns what gives them back (once, however often it is called); or throws the refusal. */
  claim(share: ShareName, caller: string, units?: number): () => void;
  /** Takes one unit of `share` for `caller` until `until` (ms since the epoch), or throws; it comes back by itself then. */
  lease(share: ShareName, caller: string, until: number): void;
  /** Gives back a unit {@link lease} took until `until`, before its time. */
  unlease(share: ShareName, caller: string, until: number): void;
}

/** What an extension's `attach` hook is given: the server, as far as an extension may reach it. */
export interface ExtensionHost {
  /** The open sessions now (a 2026-07-28 request is one while it runs), each as a {@link SessionHandle}. */
  sessions(): IterableIterator<SessionHandle>;
  /** Hands an unexpected error to the server's `onError`. */
  report(error: unknown, info: { method: string; requestId?: RequestId; name?: string }): void;
  /** The caller limits of the server's `limits` option. */
  readonly limits: CallerLimits;
}

/** What the host is made of: the core's connections, its `onError`, its governor (structurally). */
export interface HostParts {
  readonly connections: Iterable<Connection>;
  readonly report: (error: unknown, info: { method: string; requestId: RequestId; name?: string }) => void;
  readonly governor: {
    take(r: string, k: string, n?: number): void;
    give(r: string, k: string, n?: number): void;
    claim(r: string, k: string, n?: number): (() => void) | Error;
    lease(r: string, k: string, until: number): void;
    unlease(r: string, k: string, until: number): void;
  };
}

const handles = new WeakMap<Connection, SessionHandle>();

/** The handle of `conn`, made once per connection. */
export function sessionHandle(conn: Connection): SessionHandle {
  let h = handles.get(conn);
  if (h === undefined) {
    h = Object.freeze({
      get sessionId() {
        return conn.id;
      },
      get features() {
        return conn.features;
      },
      sessionState: <T>(slot: SessionSlot<T>) => conn.slot(slot),
      peek: <T>(slot: SessionSlot<T>) => conn.peek(slot),
      notify: (method: string, params?: object) => {
        if (typeof method !== "string")
          throw new TypeError("notify(method, params?): method must be a string");
        conn.send(
          params === undefined
            ? { jsonrpc: "2.0", method }
            : { jsonrpc: "2.0", method, params: params as Params },
        );
      },
    });
    handles.set(conn, h);
  }
  return h;
}

function share(name: string): string {
  if (!Object.hasOwn(DEFAULT_SHARES, name))
    throw new TypeError(`Unknown share ${String(name)}: one of ${Object.keys(DEFAULT_SHARES).join(", ")}`);
  return name;
}

/** The host of one server. */
export function extensionHost(p: HostParts): ExtensionHost {
  const g = p.governor;
  const limits: CallerLimits = Object.freeze({
    take: (s: ShareName, k: string, n = 1) => g.take(share(s), k, n),
    give: (s: ShareName, k: string, n = 1) => g.give(share(s), k, n),
    claim: (s: ShareName, k: string, n = 1) => {
      const kept = g.claim(share(s), k, n);
      if (typeof kept !== "function") throw kept;
      return kept;
    },
    lease: (s: ShareName, k: string, until: number) => g.lease(share(s), k, until),
    unlease: (s: ShareName, k: string, until: number) => g.unlease(share(s), k, until),
  });
  return Object.freeze({
    *sessions() {
      for (const conn of p.connections)
        if (conn.protocolVersion !== undefined && !conn.closed) yield sessionHandle(conn);
    },
    report: (error: unknown, info: { method: string; requestId?: RequestId; name?: string }) =>
      p.report(error, { ...info, requestId: info.requestId ?? "host" }),
    limits,
  });
}
