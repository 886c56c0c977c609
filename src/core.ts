/** The server's state behind the registration API: registries, options, capabilities, method bodies. */

import type { ChangeEvent } from "./bus.js";
import { type Connection, principalOf } from "./connection.js";
import type { RequestContext } from "./context.js";
import { honouredFilter, ListenStream, type SubscriptionLimits } from "./eras/listen.js";
import { type CacheHint, logLevelOf, SUPPORTED_VERSIONS, serverInfoMeta } from "./eras/modern.js";
import type { RequestStateSeal } from "./eras/request-state.js";
import { type Features, featuresOf, MODERN_VERSION } from "./eras/versions.js";
import { ErrorCode, McpError } from "./errors.js";
import { clientDeclares, Extensions } from "./ext/extension.js";
import { Skills } from "./ext/skills.js";
import { TASKS, type TaskOptions, tasksExtension } from "./ext/tasks.js";
import { complete } from "./prompts/completion.js";
import { getPrompt, type PromptEntry } from "./prompts/prompts.js";
import { listPage, Registry, requireScopes } from "./registry.js";
import {
  listResources,
  listResourceTemplates,
  ResourceRegistry,
  readResource,
} from "./resources/resources.js";
import type { UriTemplateLimits } from "./resources/template.js";
import { callTool, type ToolEntry } from "./tools/tools.js";
import type { Implementation, RequestId, ServerCapabilities } from "./types.js";

type Params = { [key: string]: unknown };

/** Where a handler's unexpected error happened, for the `onError` hook. */
export interface ErrorInfo {
  method: string;
  requestId: RequestId;
}

/** @internal */
export interface CoreOptions {
  info: Implementation;
  instructions: string | undefined;
  pageSize: number;
  requestTimeoutMs: number;
  experimental: { [key: string]: object } | undefined;
  pathSafety: boolean;
  uriTemplateLimits: UriTemplateLimits;
  onError: (error: unknown, info: ErrorInfo) => void;
  onListChanged: (kind: "tools" | "resources" | "prompts") => void;
  cache: CacheHint;
  requestState: RequestStateSeal;
  subscriptionLimits: SubscriptionLimits;
  tasks: TaskOptions;
  /** Publishes a change event on the server's bus. */
  publish: (event: ChangeEvent) => void;
}

const MODERN = featuresOf(MODERN_VERSION);
const TASK_ERROR: ErrorInfo = { method: "tools/call (task)", requestId: "task" };

/** What a connection is told at its handshake (see {@link ServerCore.declared}). */
export interface Declared {
  readonly capabilities: ServerCapabilities;
  readonly extensions: ReadonlySet<string>;
}

/** @internal */
export class ServerCore {
  readonly info: Implementation;
  readonly instructions: string | undefined;
  readonly pageSize: number;
  readonly requestTimeoutMs: number;
  readonly tools: Registry<ToolEntry>;
  readonly prompts: Registry<PromptEntry>;
  readonly resources: ResourceRegistry;
  /** 2026-07-28: the `_meta` of every result (the server's name and version). */
  readonly serverMeta: { readonly [key: string]: unknown };
  /** 2026-07-28: the server's caching default (`server/discover`, and registrations without their own). */
  readonly cache: CacheHint;
  /** Bounds of `subscriptions/listen` and of a session's `resources/subscribe`. */
  readonly subscriptionLimits: SubscriptionLimits;
  /** 2026-07-28: seals and opens `requestState`. */
  readonly requestState: RequestStateSeal;
  /** The extensions: their capabilities, methods and wrappers. */
  readonly extensions = new Extensions();
  /** The skills extension's registry. */
  readonly skills: Skills;
  readonly #options: CoreOptions;
  #modernCaps: ServerCapabilities | undefined;
  #discover: { [key: string]: unknown } | undefined;
  readonly #declared = new Map<Features, Declared>();

  constructor(options: CoreOptions) {
    this.#options = options;
    this.info = options.info;
    this.instructions = options.instructions;
    this.pageSize = options.pageSize;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.serverMeta = serverInfoMeta(options.info);
    this.cache = options.cache;
    this.subscriptionLimits = options.subscriptionLimits;
    this.requestState = options.requestState;
    const changed = (kind: "tools" | "resources" | "prompts") => {
      // what registrations imply is derived once per change, not once per request
      this.#modernCaps = this.#discover = undefined;
      this.#declared.clear();
      options.onListChanged(kind);
    };
    this.tools = new Registry("tool", () => changed("tools"));
    this.prompts = new Registry("prompt", () => changed("prompts"));
    this.resources = new ResourceRegistry(
      () => changed("resources"),
      options.pathSafety,
      options.uriTemplateLimits,
      options.cache,
    );
    this.skills = new Skills(options.pageSize, options.cache);
    this.extensions.add(
      tasksExtension(this.tools, options.tasks, options.publish, (e) => this.reportError(e, TASK_ERROR)),
    );
    this.extensions.add(this.skills.extension());
  }

  /** The capabilities a 2026-07-28 request sees (cached until a registration changes). */
  get modernCapabilities(): ServerCapabilities {
    this.#modernCaps ??= this.capabilities(MODERN);
    return this.#modernCaps;
  }

  /**
   * What a connection of revision `f` is told at its handshake: the capabilities and the ids of the
   * extensions served (cached until a registration changes; shared by the connections, never changed).
   */
  declared(f: Features): Declared {
    let d = this.#declared.get(f);
    if (!d) {
      d = { capabilities: this.capabilities(f), extensions: this.extensions.served(f) };
      this.#declared.set(f, d);
    }
    return d;
  }

  /** `server/discover` (cached until a registration changes). */
  discover(ctx: RequestContext): { [key: string]: unknown } {
    ctx.cacheHint = this.cache;
    if (!this.#discover) {
      const d: { [key: string]: unknown } = {
        supportedVersions: SUPPORTED_VERSIONS,
        capabilities: this.modernCapabilities,
      };
      if (this.instructions !== undefined) d.instructions = this.instructions;
      this.#discover = d;
    }
    return this.#discover;
  }

  /**
   * `subscriptions/listen`: acknowledges on the request's stream, forwards what it asked for, and
   * stays pending until the client cancels it or the server ends it (then it has been answered).
   */
  async listen(p: Params, ctx: RequestContext, conn: Connection): Promise<undefined> {
    const limits = this.#options.subscriptionLimits;
    const filter = honouredFilter(
      p.notifications,
      this.modernCapabilities,
      limits,
      clientDeclares(ctx, TASKS),
    );
    // a resource's updates go only to a caller that may read it
    for (const uri of filter.resourceSubscriptions ?? []) {
      const hit = this.resources.resolve(uri);
      if (hit) requireScopes(`resource ${uri}`, hit.entry, ctx);
    }
    const principal = principalOf(ctx.auth);
    const stream = new ListenStream(ctx.requestId, filter, (m) => ctx.notify(m), this.serverMeta, principal);
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
    }
    return undefined;
  }

  /** `resources/subscribe`: a session holds at most `maxResourceSubscriptions` URIs, none too long. */
  subscribe(p: Params, ctx: RequestContext, conn: Connection) {
    const uri = subscribedUri(p);
    const maxUri = this.subscriptionLimits.maxUriLength ?? 8192;
    if (uri.length > maxUri)
      throw new McpError(ErrorCode.InvalidParams, `The uri is longer than ${maxUri} characters`, {
        maxUriLength: maxUri,
      });
    // its updates tell what the resource is doing: only to a caller that may read it
    const hit = this.resources.resolve(uri);
    if (hit) requireScopes(`resource ${uri}`, hit.entry, ctx);
    // a URI that names no resource yet may still get one: it is kept, within the same count
    const max = this.subscriptionLimits.maxResourceSubscriptions ?? 1000;
    if (!conn.subscriptions.has(uri) && conn.subscriptions.size >= max)
      throw new McpError(ErrorCode.InvalidParams, `At most ${max} resource subscriptions per session`, {
        max,
      });
    conn.subscriptions.add(uri);
    return EMPTY;
  }

  /** `resources/unsubscribe`. */
  unsubscribe(p: Params, conn: Connection) {
    conn.subscriptions.delete(subscribedUri(p));
    return EMPTY;
  }

  /** `logging/setLevel`: the session's least severe level to send. */
  setLevel(p: Params, conn: Connection) {
    conn.logLevel = logLevelOf(p.level);
    return EMPTY;
  }

  /** The capabilities to declare: derived from what is registered. */
  capabilities(f: Features): ServerCapabilities {
    const caps: ServerCapabilities = {};
    if (this.#options.experimental) caps.experimental = this.#options.experimental;
    caps.logging = {};
    const completable = this.prompts.size > 0 || this.resources.templates.length > 0;
    if (completable && f.completionsCapability) caps.completions = {};
    if (this.prompts.size > 0) caps.prompts = { listChanged: true };
    if (this.resources.size > 0) caps.resources = { subscribe: true, listChanged: true };
    if (this.tools.size > 0) caps.tools = { listChanged: true };
    this.extensions.declare(f, caps as { [key: string]: unknown });
    return caps;
  }

  reportError(error: unknown, info: ErrorInfo): void {
    try {
      this.#options.onError(error, info);
    } catch {
      // an onError hook that throws must not turn one failure into two
    }
  }

  listTools(p: Params, ctx: RequestContext) {
    return listPage("tools", this.tools.values(), p, ctx, this.pageSize, this.cache);
  }
  callTool(p: Params, ctx: RequestContext) {
    return callTool(this.tools, p, ctx, (e) =>
      this.reportError(e, { method: "tools/call", requestId: ctx.requestId }),
    );
  }
  listPrompts(p: Params, ctx: RequestContext) {
    return listPage("prompts", this.prompts.values(), p, ctx, this.pageSize, this.cache);
  }
  getPrompt(p: Params, ctx: RequestContext) {
    return getPrompt(this.prompts, p, ctx);
  }
  listResources(p: Params, ctx: RequestContext) {
    return listResources(this.resources, p, ctx, this.pageSize);
  }
  listResourceTemplates(p: Params, ctx: RequestContext) {
    return listResourceTemplates(this.resources, p, ctx, this.pageSize);
  }
  readResource(p: Params, ctx: RequestContext) {
    return readResource(this.resources, p, ctx);
  }
  complete(p: Params, ctx: RequestContext) {
    return complete(this.prompts, this.resources, p, ctx);
  }
}

const EMPTY = Object.freeze({});

function subscribedUri(p: Params): string {
  if (typeof p.uri !== "string") throw new McpError(ErrorCode.InvalidParams, "The uri must be a string");
  return p.uri;
}
