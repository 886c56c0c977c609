/**
 * The protocol's own methods that belong to no primitive, as extensions: experimental capabilities,
 * logging (`logging/setLevel`), `server/discover` and `subscriptions/listen` (2026-07-28).
 */
import { principalOf } from "../connection.js";
import type { RequestContext } from "../context.js";
import { honouredFilter, ListenStream, type SubscriptionLimits } from "../eras/listen.js";
import { shapeImplementation } from "../eras/serialize.js";
import { type CacheHint, logLevelOf, META } from "../eras/stateless.js";
import { type Features, SUPPORTED_VERSIONS } from "../eras/versions.js";
import { clientDeclares, type Extension } from "../extension.js";
import type { Governor } from "../limits/governor.js";
import { callerKey } from "../limits/key.js";
import { listBytes } from "../limits/shares.js";
import { requireScopes } from "../registry.js";
import type { ResourceRegistry } from "../resources/resources.js";
import { EMPTY, type Implementation, type ServerCapabilities } from "../types.js";
import { TASKS } from "./tasks.js";

const LOGGING = Object.freeze({ logging: Object.freeze({}) });

/** The `experimental` capabilities the server's options declare, as given. */
export function experimentalExtension(experimental: { [key: string]: object }): Extension {
  const caps = Object.freeze({ experimental });
  return { id: "picomcp/experimental", capabilities: () => caps };
}

/** Logging: the `logging` capability, and a session's `logging/setLevel` (a 2026-07-28 request names its level in `_meta`). */
export function loggingExtension(): Extension {
  return {
    id: "picomcp/logging",
    capabilities: () => LOGGING,
    methods: {
      "logging/setLevel": {
        era: "session",
        run: (p, ctx) => {
          ctx.setLogLevel(logLevelOf(p.level));
          return EMPTY;
        },
      },
    },
  };
}

/** What `server/discover` tells. */
export interface DiscoverOptions {
  /** The server's name, version and display fields. */
  readonly info: Implementation;
  readonly instructions: string | undefined;
  /** The caching hint of the answer. */
  readonly cache: CacheHint;
  /** The capabilities declared to revision `f` now. */
  readonly capabilities: (f: Features) => ServerCapabilities;
}

/** `server/discover` (2026-07-28): the revisions, capabilities and instructions, made once per registration change. */
export function discoverExtension(o: DiscoverOptions): Extension {
  let made: { caps: ServerCapabilities; result: { [key: string]: unknown } } | undefined;
  return {
    id: "picomcp/discover",
    methods: {
      "server/discover": {
        era: "stateless",
        run: (_p, ctx) => {
          ctx.cache(o.cache);
          const caps = o.capabilities(ctx.features);
          if (made?.caps !== caps) {
            const result: { [key: string]: unknown } = {
              supportedVersions: SUPPORTED_VERSIONS,
              capabilities: caps,
            };
            if (o.instructions !== undefined) result.instructions = o.instructions;
            // the one answer that tells a stateless client the server's title, description, icons, website
            result._meta = { [META.serverInfo]: shapeImplementation(o.info, ctx.features) };
            made = { caps, result };
          }
          return made.result;
        },
      },
    },
  };
}

/** Whether `caps` lets a listen hear anything: some list changes, or resource updates. */
function listenable(caps: ServerCapabilities): boolean {
  return !!(
    caps.tools?.listChanged ||
    caps.prompts?.listChanged ||
    caps.resources?.listChanged ||
    caps.resources?.subscribe
  );
}

/**
 * `subscriptions/listen` (2026-07-28): acknowledges on the request's stream, forwards what it asked
 * for, and stays pending until the client cancels it or the server ends it (then it has been answered).
 */
export function listenExtension(
  resources: ResourceRegistry,
  limits: SubscriptionLimits,
  capabilities: (f: Features) => ServerCapabilities,
  serverMeta: { readonly [key: string]: unknown },
  governor: Governor,
): Extension {
  return {
    id: "picomcp/listen",
    methods: {
      "subscriptions/listen": {
        era: "stateless",
        when: listenable,
        // the listen branch makes this an extension of its own, on the public seam
        run: async (p, context) => {
          const ctx = context as RequestContext;
          const filter = honouredFilter(
            p.notifications,
            capabilities(ctx.features),
            limits,
            clientDeclares(ctx, TASKS),
          );
          // a resource's updates go only to a caller that may read it; one refusal names what they all need
          const scoped = (filter.resourceSubscriptions ?? []).filter(
            (u) => resources.resolve(u)?.entry.scopes,
          );
          const scopes = [...new Set(scoped.flatMap((u) => resources.resolve(u)!.entry.scopes!))];
          const what = scoped.length === 1 ? `resource ${scoped[0]}` : `a listen of ${scoped.join(", ")}`;
          if (scoped.length) requireScopes(what, { scopes }, ctx);
          const conn = ctx.connection;
          // what the request holds while it is open: its URIs and task ids as sent, in bytes
          const n = p.notifications as { resourceSubscriptions?: unknown; taskIds?: unknown };
          const bytes = listBytes(n.resourceSubscriptions) + listBytes(n.taskIds);
          const key = callerKey(ctx.auth, conn);
          governor.take("listens", key);
          const kept = governor.claim("subscriptionBytes", key, bytes);
          if (typeof kept !== "function") {
            governor.give("listens", key);
            throw kept;
          }
          const stream = new ListenStream(
            ctx.requestId,
            filter,
            (m) => ctx.emit(m),
            serverMeta,
            principalOf(ctx.auth),
          );
          // the server's own result ends it: nothing more is sent for this request
          stream.onEnd = () => ctx.abort(new Error("The subscription ended"));
          conn.listens.set(ctx.requestId, stream);
          try {
            stream.acknowledge();
            await new Promise<void>((resolve) => {
              const stop = () => {
                stream.ended = true;
                resolve();
              };
              if (ctx.signal.aborted) stop();
              else ctx.signal.addEventListener("abort", stop, { once: true });
            });
          } finally {
            if (conn.listens.get(ctx.requestId) === stream) conn.listens.delete(ctx.requestId);
            governor.give("listens", key);
            kept();
          }
          return undefined;
        },
      },
    },
  };
}
