/** `McpServer`: the registration API and the one seam transports use (`connect` + `handle`). */

import { type ChangeBus, type ChangeEvent, LocalBus } from "./bus.js";
import { Connection, type ConnectionOptions } from "./connection.js";
import { type ErrorInfo, implementationOf, logError, ServerCore } from "./core.js";
import { dispatch, establish, type HandleOptions, handles } from "./dispatch/envelope.js";
import { operationScopes } from "./dispatch/scopes.js";
import { type RequestStateOptions, RequestStateSeal } from "./eras/request-state.js";
import { serverInfoMeta } from "./eras/stateless.js";
import { type AppOptions, addApp, appParts } from "./ext/apps.js";
import { type BuiltIn, builtIns, refuseBuiltIn } from "./ext/builtins.js";
import { addSkill, SKILLS, type SkillOptions, type Skills } from "./ext/skills.js";
import type { TaskRunner } from "./ext/task-runner.js";
import { TASKS, type TaskOptions } from "./ext/tasks.js";
import type { Extension, Observer } from "./extension.js";
import { Governor, type LimitsOptions } from "./limits/governor.js";
import { MountPoint } from "./mount/mount.js";
import {
  createPromptEntry,
  type PromptArgument,
  type PromptEntry,
  type PromptOptions,
} from "./prompts/prompts.js";
import { type Registry, type RegistryOptions, type ServerSettings, settingsOf } from "./registry.js";
import { addResourceTools, type ResourcesAsToolsOptions, ResourceTools } from "./resources/as-tools.js";
import { v1RegisterHint } from "./resources/options.js";
import type { ResourceOptions, ResourceRegistry } from "./resources/resources.js";
import type { SubscriptionLimits } from "./resources/subscriptions.js";
import type { SchemaLike, StandardSchemaV1 } from "./schema/schema.js";
import type { HeaderParam } from "./tools/headers.js";
import { createToolEntry, type ToolEntry, type ToolOptions } from "./tools/tools.js";
import { type Awaitable, type Implementation, isPromiseLike, type JsonRpcResponse } from "./types.js";

const NO_HEADERS: readonly HeaderParam[] = Object.freeze([]);
const TOOLS = "picomcp/tools";
const RESOURCES = "picomcp/resources";

/** Options of `new McpServer(...)`; those its registries read (`pageSize`, `pathSafety`, `uriTemplateLimits`, `jsonSchemaValidator`, `cache`) are {@link RegistryOptions}. */
export interface McpServerOptions extends Implementation, RegistryOptions {
  /** Hints for the model on how to use the server, sent at initialize. */
  instructions?: string;
  /** Milliseconds to wait for the client to answer `elicit`, `sample` or `roots`. Default: 60000. */
  requestTimeoutMs?: number;
  /** Experimental capabilities, declared as given. */
  experimental?: { [key: string]: object };
  /** Receives every unexpected error of a handler (the client only sees "Internal error"). Default: logs to `console.error`. */
  onError?: (error: unknown, info: ErrorInfo) => void;
  /** Carries change events between instances. Default: in-process. */
  bus?: ChangeBus;
  /**
   * 2026-07-28 `requestState` of input-required results: `keys` (the first seals, all open; default:
   * one random key per process, so replicas must share theirs), `ttlMs` (600000), `maxLength` (262144).
   */
  requestState?: RequestStateOptions;
  /** Limits of 2026-07-28 `subscriptions/listen` and of a session's `resources/subscribe`: `maxResourceSubscriptions` (1000 per listen, or per session), `maxUriLength` (8192). */
  subscriptionLimits?: SubscriptionLimits;
  /** Tasks (tools with a `task` option): `store` (in memory), `ttlMs` (3600000), `pollIntervalMs` (1000). */
  tasks?: TaskOptions;
  /** What one caller may hold (requests in flight, tasks, listens, subscriptions, …) and all together; rate limits. Defaults: docs/security.md. */
  limits?: LimitsOptions;
  /**
   * The extensions it starts with, in the order their capabilities are declared: `defaultExtensions`
   * with some left out or replaced, and extensions of your own. Default: `defaultExtensions`.
   */
  extensions?: readonly (Extension | BuiltIn)[];
}

/** The handle a registration returns. */
export interface Registration {
  /** Unregisters it; connected clients get a `list_changed` notification. */
  remove(): void;
}

/**
 * An MCP server: register tools, resources and prompts, then attach a transport.
 * @example
 * const server = new McpServer({ name: "bookshop", version: "1.0.0" });
 * server.tool("hello", { run: () => "Hello!" });
 * await serveStdio(server);
 */
export class McpServer {
  readonly #core: ServerCore;
  readonly #tools: Registry<ToolEntry>;
  readonly #prompts: Registry<PromptEntry>;
  readonly #resources: ResourceRegistry;
  readonly #skills: Skills;
  readonly #tasks: TaskRunner | undefined;
  /** Throws when a registration needs a built-in this server was made without. */
  readonly #need: (call: string, ...ids: string[]) => void;
  /** The options the registries read, checked and defaulted once. */
  readonly #settings: ServerSettings;
  readonly #bus: ChangeBus;
  readonly #pendingKinds = new Set<"tools" | "resources" | "prompts">();
  readonly #onResourcesChanged = new Set<() => void>();
  readonly #mounts: MountPoint;

  constructor(options: McpServerOptions) {
    const info = implementationOf(options);
    this.#bus = options.bus ?? new LocalBus();
    const settings = settingsOf(options);
    this.#settings = settings;
    const core = new ServerCore({
      info,
      instructions: options.instructions,
      requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
      onError: options.onError ?? logError,
      requestState: new RequestStateSeal(options.requestState),
      serverMeta: serverInfoMeta(info),
      governor: new Governor(options.limits),
    });
    this.#core = core;
    const parts = builtIns(
      {
        core,
        settings,
        options,
        publish: (e) => this.#publish(e),
        changed: (kind) => {
          core.changed();
          this.#listChanged(kind);
          this.#mounts.changed(kind);
        },
      },
      options.extensions,
    );
    ({
      tools: this.#tools,
      prompts: this.#prompts,
      resources: this.#resources,
      skills: this.#skills,
      tasks: this.#tasks,
      need: this.#need,
    } = parts);
    core.useAll(parts.extensions);
    this.#bus.subscribe(core.deliver);
    this.#mounts = new MountPoint(this, { ...parts, core, publish: (e) => this.#publish(e) });
  }

  /**
   * Adds an extension: methods and notifications of its own, wrappers around any method, and the
   * capabilities it declares per revision. Every built-in method family is one, through this same
   * seam. Throws when its id, or a method or notification it adds, is taken.
   * @example
   * server.use({
   *   id: "com.example/echo",
   *   settings: (f) => (f.stateless ? {} : undefined),
   *   methods: { "echo/say": { run: (params) => ({ said: params.text }) } },
   * });
   */
  use(extension: Extension): Registration {
    refuseBuiltIn(extension);
    return { remove: this.#core.use(extension) };
  }

  /** The server's name, version and display fields. */
  get info(): Implementation {
    return this.#core.info;
  }

  /**
   * Registers a tool.
   * @example
   * server.tool("add", {
   *   input: z.object({ a: z.number(), b: z.number() }),
   *   run: ({ a, b }) => String(a + b),
   * });
   */
  tool<
    const I extends SchemaLike | undefined = undefined,
    const O extends SchemaLike | undefined = undefined,
  >(name: string, options: ToolOptions<I, O>): Registration {
    this.#need(`server.tool("${name}")`, TOOLS, ...(options?.task ? [TASKS] : []));
    return {
      remove: this.#tools.add(name, createToolEntry(name, options, this.#settings)),
    };
  }

  /**
   * Registers a resource: a URI without `{…}` is static, one with `{…}` a template whose variables
   * `read` receives, typed from the string.
   * @example server.resource("users://{id}", { read: ({ id }) => db.user(id) });
   */
  resource<U extends string>(uri: U, options: ResourceOptions<NoInfer<U>>): Registration {
    this.#need(`server.resource("${uri}")`, RESOURCES);
    return { remove: this.#resources.add(uri, options as unknown as ResourceOptions<string>) };
  }

  /** @deprecated SDK v1's: here {@link resource}. Throws what to write instead. */
  registerResource(...args: never[]): never {
    throw new TypeError(v1RegisterHint("registerResource", args));
  }
  /** @deprecated SDK v1's: here {@link tool}. Throws what to write instead. */
  registerTool(...args: never[]): never {
    throw new TypeError(v1RegisterHint("registerTool", args));
  }
  /** @deprecated SDK v1's: here {@link prompt}. Throws what to write instead. */
  registerPrompt(...args: never[]): never {
    throw new TypeError(v1RegisterHint("registerPrompt", args));
  }

  /**
   * Registers a prompt; a list of `args` keeps its types as written (`required: true` gives `string`).
   * @example server.prompt("greet", { args: [{ name: "who", required: true }], get: ({ who }) => `Greet ${who}` });
   */
  prompt<const A extends StandardSchemaV1 | readonly PromptArgument[] | undefined = undefined>(
    name: string,
    options: PromptOptions<A>,
  ): Registration {
    this.#need(`server.prompt("${name}")`, "picomcp/prompts");
    return { remove: this.#prompts.add(name, createPromptEntry(name, options, this.#settings)) };
  }

  /**
   * Exposes the resources through two tools, for clients that only call tools: `list_resources` and
   * `read_resource` (its description names the templates; kept in sync as resources come and go).
   * @example server.resourcesAsTools();
   */
  resourcesAsTools(options?: ResourcesAsToolsOptions): Registration {
    this.#need("server.resourcesAsTools()", TOOLS, RESOURCES);
    const bridge = new ResourceTools(this.#resources, options);
    return { remove: addResourceTools(this.#tools, bridge, this.#onResourcesChanged) };
  }

  /**
   * Registers a skill: its `SKILL.md` (frontmatter from `description` and `frontmatter`, then
   * `instructions`) and its `files` as `skill://<name>/…` resources, listed by `skills/list`.
   * @example server.skill("code-review", { description: "Reviews a diff", instructions: "# Steps\n…" });
   */
  skill(name: string, options: SkillOptions): Registration {
    this.#need(`server.skill("${name}")`, SKILLS, RESOURCES);
    return { remove: addSkill(this.#skills, this.#resources, name, options) };
  }

  /**
   * Registers an MCP App: the `ui://` page (`text/html;profile=mcp-app`) and the tool linked to it by
   * `_meta.ui.resourceUri`, in one call.
   * @example server.app("show_chart", { ui: { uri: "ui://charts/bar.html", html }, run: () => "Chart shown" });
   */
  app<const I extends SchemaLike | undefined = undefined, const O extends SchemaLike | undefined = undefined>(
    name: string,
    options: AppOptions<I, O>,
  ): Registration {
    this.#need(`server.app("${name}")`, TOOLS, RESOURCES, ...(options?.task ? [TASKS] : []));
    const { uri, resource, tool } = appParts(name, options);
    const entry = createToolEntry(name, tool, this.#settings);
    return { remove: addApp(this.#tools, this.#resources, uri, resource, entry) };
  }

  /**
   * Serves `child`'s tools, prompts, resources and templates here, kept in step with it: its tool
   * `forecast` as `weather_forecast`, its prompts likewise, its resources under their own URIs. Each
   * call runs in the child as a direct one would. Throws when a name is taken (naming both owners),
   * as a later registration in either server that would collide throws. See docs/composition.md.
   * @example
   * const weather = server.mount("weather", weatherServer);
   * weather.remove();
   */
  mount(prefix: string, child: McpServer): Registration {
    return { remove: this.#mounts.mount(prefix, child) };
  }

  /** Tells every client subscribed to `uri` that it changed. */
  resourceUpdated(uri: string): void {
    this.#publish({ type: "resource_updated", uri });
  }

  /**
   * Tells clients that `resources/list` answers differently now: for a template's `list` callback whose
   * entries come and go (registering and removing send this by themselves). Calls in one tick send one.
   */
  resourceListChanged(): void {
    this.#listChanged("resources");
    this.#mounts.published({ type: "list_changed", kind: "resources" });
  }

  /** Opens a connection for a transport; feed it with {@link handle}. */
  connect(options: ConnectionOptions): Connection {
    this.#flushListChanges();
    const observer = this.#core.extensions.observer;
    const conn = new Connection(observer?.connect ? observer.connect(options) : options, this.#core.forget);
    const init = options.initialized;
    if (init) establish(this.#core, conn, init.protocolVersion, init.capabilities, init.clientInfo);
    this.#core.connections.add(conn);
    return conn;
  }

  /**
   * Handles one parsed JSON-RPC message (or batch) from `connection`. Resolves with the answer to
   * send back, or `undefined` for notifications, responses and cancelled requests. Never rejects.
   */
  handle(
    message: unknown,
    connection: Connection,
    options?: HandleOptions,
  ): Promise<JsonRpcResponse | JsonRpcResponse[] | undefined> {
    try {
      const answer = dispatch(this.#core, message, connection, options);
      return isPromiseLike(answer) ? answer : Promise.resolve(answer);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * @internal — {@link handle} for a transport that writes answers itself: a request whose handler
   * answers synchronously gets its answer synchronously, with no promise and no microtask (a
   * 2026-07-28 request too, whose round then opens at once instead of after a tick).
   */
  handleNow(
    message: unknown,
    connection: Connection,
    options?: HandleOptions,
  ): Awaitable<JsonRpcResponse | JsonRpcResponse[] | undefined> {
    return dispatch(this.#core, message, connection, options, true);
  }

  /** @internal — the arguments of a tool that HTTP mirrors into `Mcp-Param-*` headers (read at registration). */
  toolHeaders(name: string): readonly HeaderParam[] {
    return this.#tools.get(name)?.headers ?? NO_HEADERS;
  }

  /** @internal — the scopes the primitives a parsed request names need, for one step-up challenge (`picomcp/auth`). */
  scopesFor(message: unknown): readonly string[] {
    return operationScopes(
      { tools: this.#tools, prompts: this.#prompts, resources: this.#resources },
      message,
    );
  }

  /** @internal — whether this server registered `name` (the core's or an extension's, a tool, a prompt): telemetry names nothing else. */
  knows(what: "method" | "notification" | "tool" | "prompt", name: string): boolean {
    const registry = what === "tool" ? this.#tools : what === "prompt" ? this.#prompts : undefined;
    return registry ? registry.get(name) !== undefined : handles(this.#core, name, what === "notification");
  }

  /** @internal — the observers extensions brought (telemetry, an audit log), as one; undefined for none. */
  get observer(): Observer | undefined {
    return this.#core.extensions.observer;
  }

  /** @internal — a drain's (picomcp/http): waits for this process's tasks until `signal` aborts, then fails those left in the store at once. */
  async settleTasks(signal: AbortSignal): Promise<void> {
    if (!this.#tasks) return;
    await this.#tasks.idle(signal);
    await this.#tasks.abandon();
  }

  /**
   * For transports: ends `connection` gracefully before closing it (its input ended, a drain), once
   * however often it is called: the extensions' `sessionEnd` hooks give its long-lived requests (a
   * 2026-07-28 listen) their final result now. It does not close it; {@link close} closes them all.
   */
  endGracefully(connection: Connection): void {
    this.#core.endGracefully(connection);
  }

  /** Closes every connection, each ended gracefully first (see {@link endGracefully}) unless it was already. */
  close(): void {
    for (const conn of [...this.#core.connections]) {
      if (conn.closed) continue;
      this.endGracefully(conn);
      conn.close();
    }
  }

  #listChanged(kind: "tools" | "resources" | "prompts"): void {
    if (kind === "resources") for (const sync of this.#onResourcesChanged) sync();
    // published even with no client connected: extensions' `change` hooks and other instances on the
    // bus hear every change. Several registrations in one tick make one event per kind.
    if (this.#pendingKinds.size === 0) queueMicrotask(this.#flushListChanges);
    this.#pendingKinds.add(kind);
  }

  /** Publishes the list changes of this tick; `connect` calls it first, so a new session is not told of changes made before it. */
  readonly #flushListChanges = (): void => {
    if (this.#pendingKinds.size === 0) return;
    // an observer (telemetry) hears of it only when a client of this process could be told
    const told = this.#core.connections.size > 1;
    for (const kind of this.#pendingKinds) {
      const event: ChangeEvent = { type: "list_changed", kind };
      if (told) this.#core.extensions.observer?.change?.(event);
      this.#bus.publish(event);
    }
    this.#pendingKinds.clear();
  };

  #publish(event: ChangeEvent): void {
    this.#core.extensions.observer?.change?.(event);
    this.#bus.publish(event);
    this.#mounts.published(event);
  }
}
