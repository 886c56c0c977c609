/**
 * `resources/subscribe` and `resources/unsubscribe` (the `initialize` era): a session's subscribed
 * URIs, in a session slot of this extension; its `change` hook sends `notifications/resources/updated`
 * to the sessions whose slot holds the URI, found through the host its `attach` is given.
 */

import { type Connection, sessionSlot } from "../connection.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Extension } from "../extension.js";
import { requireScopes } from "../registry.js";
import { EMPTY, type Params } from "../types.js";
import type { CallerLimits, ExtensionHost } from "../views/host.js";
import type { ResourceRegistry } from "./resources.js";

/** Limits of resource subscriptions: a 2026-07-28 listen's, and a 2025 session's `resources/subscribe`s (the server's `subscriptionLimits` option). */
export interface SubscriptionLimits {
  /** Most URIs in one listen's `resourceSubscriptions`, and in one session's `resources/subscribe`s. Default: 1000. */
  maxResourceSubscriptions?: number;
  /** Longest subscribed URI in characters, in both eras. Default: 8192. */
  maxUriLength?: number;
}

/** The URIs one session subscribed to, and the bytes they count for against its caller's share. */
interface Subscribed {
  readonly uris: Set<string>;
  /** URIs another instance subscribed to and counted (a shared session's, see `restoreSubscriptions`). */
  readonly restored: Set<string>;
  bytes: number;
  key: string;
  limits: CallerLimits | undefined;
}

const SUBSCRIBED = sessionSlot<Subscribed>(
  "resources/subscribe",
  () => ({ uris: new Set(), restored: new Set(), bytes: 0, key: "", limits: undefined }),
  // a session that ends gives its subscriptions' bytes back
  (s) => s.limits?.give("subscriptionBytes", s.key, s.bytes),
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
  s.limits?.give("subscriptionBytes", s.key, 2 * uri.length + 64);
}

/** What the subscriptions extension is made with. */
export interface SubscriptionsOptions {
  readonly resources: ResourceRegistry;
  readonly limits: SubscriptionLimits;
}

/**
 * Subscriptions to the resources of `reg`, within `limits`: `maxResourceSubscriptions` (1000) URIs a
 * session, each at most `maxUriLength` (8192), and within the caller's share of `subscriptionBytes`.
 */
export function subscriptionsExtension(o: SubscriptionsOptions): Extension {
  const { resources: reg, limits } = o;
  /** The server this extension was added to: its sessions, whose slots hold their subscriptions, and its caller limits. */
  let host: ExtensionHost | undefined;
  const maxUri = limits.maxUriLength ?? 8192;
  const max = limits.maxResourceSubscriptions ?? 1000;
  const when = (caps: { resources?: { subscribe?: boolean } }) => caps.resources?.subscribe === true;
  const method = "notifications/resources/updated";
  return {
    id: "picomcp/subscriptions",
    requires: ["picomcp/resources"],
    attach: (h) => {
      host = h;
    },
    change: (event) => {
      if (event.type !== "resource_updated" || host === undefined) return;
      for (const session of host.sessions())
        if (session.peek(SUBSCRIBED)?.uris.has(event.uri)) session.notify(method, { uri: event.uri });
    },
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
          s.limits = host!.limits;
          s.limits.take("subscriptionBytes", s.key, bytes);
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
