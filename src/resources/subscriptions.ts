/**
 * `resources/subscribe` and `resources/unsubscribe` (the `initialize` era): a session's subscribed
 * URIs, in a session slot of this extension; `notifications/resources/updated` goes to the sessions
 * whose slot holds the URI.
 */

import type { ChangeEvent } from "../bus.js";
import { type Connection, sessionSlot } from "../connection.js";
import type { SubscriptionLimits } from "../eras/listen.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Extension } from "../extension.js";
import type { Governor } from "../limits/governor.js";
import { requireScopes } from "../registry.js";
import { EMPTY, type Params } from "../types.js";
import type { ResourceRegistry } from "./resources.js";

/** The URIs one session subscribed to, and the bytes they count for against its caller's share. */
interface Subscribed {
  readonly uris: Set<string>;
  /** URIs another instance subscribed to and counted (a shared session's, see `restoreSubscriptions`). */
  readonly restored: Set<string>;
  bytes: number;
  key: string;
  governor: Governor | undefined;
}

const SUBSCRIBED = sessionSlot<Subscribed>(
  "resources/subscribe",
  () => ({ uris: new Set(), restored: new Set(), bytes: 0, key: "", governor: undefined }),
  // a session that ends gives its subscriptions' bytes back
  (s) => s.governor?.give("subscriptionBytes", s.key, s.bytes),
);

/** Whether the session `conn` subscribed to `uri` (without making its set). */
export function subscribed(conn: Connection, uri: string): boolean {
  return conn.peek(SUBSCRIBED)?.uris.has(uri) === true;
}

/** @internal — the URIs session `conn` subscribed to (a shared HTTP session keeps them in its store). */
export function subscribedUris(conn: Connection): readonly string[] {
  const s = conn.peek(SUBSCRIBED);
  return s ? [...s.uris] : [];
}

/**
 * @internal — makes the subscriptions of `conn` exactly `uris`: a shared session's copy on another
 * instance, from its store. The instance that took a subscription counted it; here it is not counted.
 */
export function restoreSubscriptions(conn: Connection, uris: readonly string[]): void {
  const s = conn.peek(SUBSCRIBED);
  if (!s && uris.length === 0) return;
  const slot = s ?? conn.slot(SUBSCRIBED);
  const want = new Set(uris);
  for (const uri of slot.uris) if (!want.has(uri)) forget(slot, uri);
  for (const uri of want) {
    if (slot.uris.has(uri)) continue;
    slot.uris.add(uri);
    slot.restored.add(uri);
  }
}

/** Drops one subscription, giving its bytes back when this instance counted them. */
function forget(s: Subscribed, uri: string): void {
  if (!s.uris.delete(uri) || s.restored.delete(uri)) return;
  s.bytes -= 2 * uri.length + 64;
  s.governor?.give("subscriptionBytes", s.key, 2 * uri.length + 64);
}

/**
 * Delivers a change event to `connections`: every open `subscriptions/listen` stream (2026-07-28)
 * decides for itself; sessions get `notifications/resources/updated` for a URI they subscribed to,
 * and a list's `list_changed` when they were told it can change.
 */
export function deliverChange(event: ChangeEvent, connections: Iterable<Connection>): void {
  for (const conn of connections) {
    if (conn.listening) for (const stream of conn.listens.values()) stream.deliver(event);
  }
  // task changes go to listen streams only: the initialize era has no such notification
  if (event.type === "task") return;
  if (event.type === "resource_updated") {
    const method = "notifications/resources/updated";
    for (const conn of connections) {
      if (conn.state === "ready" && subscribed(conn, event.uri))
        conn.send({ jsonrpc: "2.0", method, params: { uri: event.uri } });
    }
    return;
  }
  const method = `notifications/${event.kind}/list_changed`;
  for (const conn of connections) {
    if (conn.state === "ready" && conn.serverCapabilities[event.kind]?.listChanged)
      conn.send({ jsonrpc: "2.0", method });
  }
}

/**
 * Subscriptions to the resources of `reg`, within `limits`: `maxResourceSubscriptions` (1000) URIs a
 * session, each at most `maxUriLength` (8192), and within the caller's share of `subscriptionBytes`.
 */
export function subscriptionsExtension(
  reg: ResourceRegistry,
  limits: SubscriptionLimits,
  governor: Governor,
): Extension {
  const maxUri = limits.maxUriLength ?? 8192;
  const max = limits.maxResourceSubscriptions ?? 1000;
  const when = (caps: { resources?: { subscribe?: boolean } }) => caps.resources?.subscribe === true;
  return {
    id: "picomcp/subscriptions",
    methods: {
      "resources/subscribe": {
        era: "session",
        when,
        run: (p, ctx) => {
          const uri = subscribedUri(p);
          if (uri.length > maxUri)
            throw new McpError(ErrorCode.InvalidParams, `The uri is longer than ${maxUri} characters`, {
              maxUriLength: maxUri,
            });
          // its updates tell what the resource is doing: only to a caller that may read it
          const hit = reg.resolve(uri);
          if (hit) requireScopes(`resource ${uri}`, hit.entry, ctx);
          // a URI that names no resource yet may still get one: it is kept, within the same count
          const s = ctx.sessionState(SUBSCRIBED);
          if (s.uris.has(uri)) return EMPTY;
          if (s.uris.size >= max)
            throw new McpError(ErrorCode.InvalidParams, `At most ${max} resource subscriptions per session`, {
              max,
            });
          const bytes = 2 * uri.length + 64;
          s.key = ctx.caller;
          s.governor = governor;
          governor.take("subscriptionBytes", s.key, bytes);
          s.bytes += bytes;
          s.uris.add(uri);
          return EMPTY;
        },
      },
      "resources/unsubscribe": {
        era: "session",
        when,
        run: (p, ctx) => {
          const s = ctx.sessionState(SUBSCRIBED);
          forget(s, subscribedUri(p));
          return EMPTY;
        },
      },
    },
  };
}

function subscribedUri(p: Params): string {
  if (typeof p.uri !== "string") throw new McpError(ErrorCode.InvalidParams, "The uri must be a string");
  return p.uri;
}
