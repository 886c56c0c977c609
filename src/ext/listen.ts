/**
 * `subscriptions/listen` (2026-07-28) as one extension: one long-lived request per subscription. Its
 * stream opens with `notifications/subscriptions/acknowledged` naming the kinds the server honours,
 * then carries only those kinds (from the extension's `change` hook), each tagged with the listen
 * request's id as its subscription id; its `sessionEnd` hook gives it its final result.
 */
import type { ChangeEvent } from "../bus.js";
import { principalOf } from "../connection.js";
import type { Context } from "../context.js";
import { META, missingCapability } from "../eras/stateless.js";
import type { Features } from "../eras/versions.js";
import { ErrorCode, McpError } from "../errors.js";
import { clientDeclares, type Extension } from "../extension.js";
import { listBytes } from "../limits/shares.js";
import { requireScopes } from "../registry.js";
import type { ResourceRegistry } from "../resources/resources.js";
import type { SubscriptionLimits } from "../resources/subscriptions.js";
import { isObject, type ServerCapabilities } from "../types.js";
import type { CallerLimits } from "../views/host.js";
import { TASKS } from "./tasks.js";

/** The kinds of notification a listen asks for (the `notifications` param). */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** The tasks extension: the tasks whose changes to send (`notifications/tasks`). */
  taskIds?: string[];
}

/**
 * The subset of `requested` that `caps` lets the server honour; malformed or over-limit input is
 * -32602, `taskIds` from a client without the tasks extension (`tasks` false) -32021.
 */
export function honouredFilter(
  requested: unknown,
  caps: ServerCapabilities,
  limits: SubscriptionLimits,
  tasks = false,
): SubscriptionFilter {
  if (!isObject(requested))
    throw new McpError(ErrorCode.InvalidParams, "subscriptions/listen needs a notifications object");
  const out: SubscriptionFilter = {};
  const flag = (name: "toolsListChanged" | "promptsListChanged" | "resourcesListChanged") => {
    const v = Object.hasOwn(requested, name) ? requested[name] : undefined;
    if (v !== undefined && typeof v !== "boolean")
      throw new McpError(ErrorCode.InvalidParams, `notifications.${name} must be a boolean`);
    return v === true;
  };
  if (flag("toolsListChanged") && caps.tools?.listChanged) out.toolsListChanged = true;
  if (flag("promptsListChanged") && caps.prompts?.listChanged) out.promptsListChanged = true;
  if (flag("resourcesListChanged") && caps.resources?.listChanged) out.resourcesListChanged = true;
  const uris = Object.hasOwn(requested, "resourceSubscriptions")
    ? requested.resourceSubscriptions
    : undefined;
  if (uris !== undefined) {
    const max = limits.maxResourceSubscriptions ?? 1000;
    const maxUri = limits.maxUriLength ?? 8192;
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === "string" && u.length > 0))
      throw new McpError(
        ErrorCode.InvalidParams,
        "notifications.resourceSubscriptions must be a list of URIs",
      );
    if (uris.length > max)
      throw new McpError(ErrorCode.InvalidParams, `At most ${max} resourceSubscriptions per listen`, { max });
    if (uris.some((u: string) => u.length > maxUri))
      throw new McpError(ErrorCode.InvalidParams, `A subscribed URI is longer than ${maxUri} characters`, {
        maxUriLength: maxUri,
      });
    if (caps.resources?.subscribe) out.resourceSubscriptions = [...new Set(uris as string[])];
  }
  const ids = Object.hasOwn(requested, "taskIds") ? requested.taskIds : undefined;
  if (ids !== undefined) {
    if (!Array.isArray(ids) || !ids.every((u) => typeof u === "string"))
      throw new McpError(ErrorCode.InvalidParams, "notifications.taskIds must be a list of task ids");
    const max = limits.maxResourceSubscriptions ?? 1000;
    if (ids.length > max)
      throw new McpError(ErrorCode.InvalidParams, `At most ${max} taskIds per listen`, { max });
    if (!tasks) throw missingCapability({ extensions: { [TASKS]: {} } });
    if (caps.extensions?.[TASKS]) out.taskIds = [...new Set(ids as string[])];
  }
  return out;
}

const LIST_KIND = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
} as const;

/** One open listen: what it honours, and its request, whose stream carries what it hears. */
class ListenStream {
  readonly #ctx: Context;
  readonly #filter: SubscriptionFilter;
  readonly #uris: ReadonlySet<string>;
  readonly #tasks: ReadonlySet<string>;
  readonly #principal: string | undefined;
  readonly #meta: { readonly [key: string]: unknown };
  /** Set once the stream ended; later events are dropped. */
  ended = false;

  constructor(ctx: Context, filter: SubscriptionFilter) {
    this.#ctx = ctx;
    this.#filter = filter;
    this.#uris = new Set(filter.resourceSubscriptions ?? []);
    this.#tasks = new Set(filter.taskIds ?? []);
    this.#principal = principalOf(ctx.auth);
    this.#meta = Object.freeze({ [META.subscriptionId]: ctx.requestId });
  }

  /** Sends on the stream; a stream that cannot take it is gone, and hears nothing more. */
  #post(method: string, params: object): void {
    try {
      this.#ctx.notify(method, params);
    } catch {
      this.ended = true;
    }
  }

  /** Sends the acknowledgement: the first message of the stream. */
  acknowledge(): void {
    this.#post("notifications/subscriptions/acknowledged", {
      _meta: this.#meta,
      notifications: this.#filter,
    });
  }

  /** Forwards `event` if this stream asked for its kind. */
  deliver(event: ChangeEvent): void {
    if (this.ended) return;
    if (event.type === "task") {
      // another principal's task is never told, whatever ids the listen names
      if (this.#tasks.has(event.task.taskId) && event.owner === this.#principal)
        this.#post("notifications/tasks", { ...event.task, _meta: this.#meta });
    } else if (event.type === "resource_updated") {
      if (this.#uris.has(event.uri))
        this.#post("notifications/resources/updated", { uri: event.uri, _meta: this.#meta });
    } else if (this.#filter[LIST_KIND[event.kind]]) {
      this.#post(`notifications/${event.kind}/list_changed`, { _meta: this.#meta });
    }
  }

  /** Ends the stream gracefully: the listen request's final result, at once. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.#ctx.end({ _meta: this.#meta });
  }
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

/** What the listen extension is made with. */
export interface ListenOptions {
  /** The resources, whose scopes a subscribed URI needs. */
  readonly resources: ResourceRegistry;
  readonly limits: SubscriptionLimits;
  /** The capabilities declared to revision `f` now: what a listen may hear. */
  readonly capabilities: (f: Features) => ServerCapabilities;
}

/**
 * `subscriptions/listen` (2026-07-28): acknowledges on the request's stream, forwards what it asked
 * for, and stays pending until the client cancels it or the server ends it with its final result.
 */
export function listenExtension(o: ListenOptions): Extension {
  const { resources, limits, capabilities } = o;
  /** Counts each caller's listens and the bytes they hold: the host's, given at `attach`. */
  let counts: CallerLimits | undefined;
  /** The open streams of this server, by session (each 2026-07-28 HTTP request is a session of its own). */
  const open = new Map<string, Set<ListenStream>>();
  return {
    id: "picomcp/listen",
    change: (event) => {
      for (const streams of open.values()) for (const stream of streams) stream.deliver(event);
    },
    attach: (host) => {
      counts = host.limits;
    },
    sessionEnd: (session) => {
      // no listen open anywhere: nothing to end, and a session that never needed its id is not made one
      if (open.size === 0) return;
      const streams = open.get(session.sessionId);
      if (streams) for (const stream of [...streams]) stream.end();
    },
    methods: {
      "subscriptions/listen": {
        era: "stateless",
        when: listenable,
        run: async (p, ctx) => {
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
          // what the request holds while it is open: its URIs and task ids as sent, in bytes
          const n = p.notifications as { resourceSubscriptions?: unknown; taskIds?: unknown };
          const bytes = listBytes(n.resourceSubscriptions) + listBytes(n.taskIds);
          const key = ctx.caller;
          const governor = counts!;
          governor.take("listens", key);
          let kept: () => void;
          try {
            kept = governor.claim("subscriptionBytes", key, bytes);
          } catch (refused) {
            governor.give("listens", key);
            throw refused;
          }
          const stream = new ListenStream(ctx, filter);
          const session = ctx.sessionId;
          const streams = open.get(session) ?? new Set<ListenStream>();
          open.set(session, streams);
          streams.add(stream);
          try {
            stream.acknowledge();
            // until the client cancels it, the connection closes, or `end` gave it its result
            await new Promise<void>((resolve) => {
              const stop = () => {
                stream.ended = true;
                resolve();
              };
              if (ctx.signal.aborted) stop();
              else ctx.signal.addEventListener("abort", stop, { once: true });
            });
          } finally {
            streams.delete(stream);
            if (streams.size === 0 && open.get(session) === streams) open.delete(session);
            governor.give("listens", key);
            kept();
          }
          return undefined;
        },
      },
    },
  };
}
