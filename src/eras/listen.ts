/**
 * `subscriptions/listen` (2026-07-28): one long-lived request per subscription. Its stream opens with
 * `notifications/subscriptions/acknowledged` naming the kinds the server honours, then carries only
 * those kinds, each notification tagged with the listen request's id as its subscription id.
 */
import type { ChangeEvent } from "../bus.js";
import { ErrorCode, McpError } from "../errors.js";
import { isObject, type JsonRpcMessage, type RequestId, type ServerCapabilities } from "../types.js";
import { META, missingCapability } from "./stateless.js";

const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** Limits of `subscriptions/listen` (the server's `subscriptionLimits` option). */
export interface SubscriptionLimits {
  /** Most URIs in one listen's `resourceSubscriptions`, and in one session's `resources/subscribe`s. Default: 1000. */
  maxResourceSubscriptions?: number;
  /** Longest subscribed URI in characters, in both eras. Default: 8192. */
  maxUriLength?: number;
}

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
    if (!tasks) throw missingCapability({ extensions: { [TASKS_EXTENSION]: {} } });
    if (caps.extensions?.[TASKS_EXTENSION]) out.taskIds = [...new Set(ids as string[])];
  }
  return out;
}

const LIST_KIND = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
} as const;

/** One open listen: what it honours and where its stream goes. */
export class ListenStream {
  /** The listen request's id: the subscription id. */
  readonly id: RequestId;
  readonly #filter: SubscriptionFilter;
  readonly #uris: ReadonlySet<string>;
  readonly #tasks: ReadonlySet<string>;
  readonly #principal: string | undefined;
  readonly #send: (message: JsonRpcMessage) => void;
  readonly #meta: { readonly [key: string]: unknown };
  readonly #serverMeta: { readonly [key: string]: unknown };
  /** Set once the stream ended; later events are dropped. */
  ended = false;
  /** Called once the server ended the stream with its result. */
  onEnd: () => void = () => {};

  constructor(
    id: RequestId,
    filter: SubscriptionFilter,
    send: (message: JsonRpcMessage) => void,
    serverMeta: { readonly [key: string]: unknown },
    principal?: string,
  ) {
    this.id = id;
    this.#filter = filter;
    this.#uris = new Set(filter.resourceSubscriptions ?? []);
    this.#tasks = new Set(filter.taskIds ?? []);
    this.#principal = principal;
    this.#send = send;
    this.#meta = Object.freeze({ [META.subscriptionId]: id });
    this.#serverMeta = serverMeta;
  }

  /** Sends on the stream; a stream that cannot take it is gone, and hears nothing more. */
  #post(message: JsonRpcMessage): void {
    try {
      this.#send(message);
    } catch {
      this.ended = true;
    }
  }

  /** Sends the acknowledgement: the first message of the stream. */
  acknowledge(): void {
    this.#post({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: this.#meta, notifications: this.#filter },
    });
  }

  /** Forwards `event` if this stream asked for its kind. */
  deliver(event: ChangeEvent): void {
    if (this.ended) return;
    if (event.type === "task") {
      // another principal's task is never told, whatever ids the listen names
      if (this.#tasks.has(event.task.taskId) && event.owner === this.#principal)
        this.#post({
          jsonrpc: "2.0",
          method: "notifications/tasks",
          params: { ...event.task, _meta: this.#meta },
        });
    } else if (event.type === "resource_updated") {
      if (this.#uris.has(event.uri))
        this.#post({
          jsonrpc: "2.0",
          method: "notifications/resources/updated",
          params: { uri: event.uri, _meta: this.#meta },
        });
    } else if (this.#filter[LIST_KIND[event.kind]]) {
      this.#post({
        jsonrpc: "2.0",
        method: `notifications/${event.kind}/list_changed`,
        params: { _meta: this.#meta },
      });
    }
  }

  /** Ends the stream gracefully: the listen request's answer, sent on the stream itself. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.#post({
      jsonrpc: "2.0",
      id: this.id,
      result: { resultType: "complete", _meta: { ...this.#serverMeta, ...this.#meta } },
    });
    this.onEnd();
  }
}
