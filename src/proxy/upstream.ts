/**
 * The proxy's one connection to the remote server: made with the official client (HTTP, or a stdio
 * command loaded only when one is given), its lists kept, reconnected with backoff when it drops, and
 * the remote's requests during a call (elicitation, sampling, roots) and its log messages routed to
 * the downstream request that is calling.
 */

import type {
  Client,
  ClientOptions,
  FetchLike,
  RequestOptions,
  Transport,
} from "@modelcontextprotocol/client";
import type { Context } from "../context.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Params } from "../types.js";
import { askDownstream, FromDownstream, requestWithRounds } from "./asking.js";
import { asMcpError, connectionLost } from "./failures.js";
import type { RemotePrompt, RemoteResource, RemoteTool } from "./filters.js";
import { Relister } from "./relist.js";
import { Routes } from "./routes.js";
import { RemoteSubscriptions } from "./subscriptions.js";

/** A remote server over Streamable HTTP. */
export interface HttpUpstream {
  readonly url: string | URL;
  /** Headers sent with every request (a service token, say). Never a downstream caller's. */
  readonly headers?: { readonly [name: string]: string };
  /** The fetch to use. Default: the global one. */
  readonly fetch?: FetchLike;
}

/** A local server started as a child process, spoken to over stdio (Node only). */
export interface StdioUpstream {
  readonly command: string;
  readonly args?: readonly string[];
  /** Its environment. Default: the client library's safe subset of this process's (PATH, HOME, …). */
  readonly env?: { readonly [name: string]: string };
  readonly cwd?: string;
  /** Its stderr: `"inherit"` (the default) or `"ignore"`. */
  readonly stderr?: "inherit" | "ignore";
}

/** The remote server a proxy stands in front of. */
export type UpstreamTarget = HttpUpstream | StdioUpstream;

/** How the proxy reconnects: the wait doubles from `initialDelayMs` up to `maxDelayMs`. */
export interface ReconnectOptions {
  /** Default: 250. */
  initialDelayMs?: number;
  /** Default: 30000. */
  maxDelayMs?: number;
}

/** The remote's primitives, as last listed. */
export interface RemoteLists {
  tools: RemoteTool[];
  prompts: RemotePrompt[];
  resources: RemoteResource[];
  templates: RemoteResource[];
}

/** What the upstream tells the proxy. */
export interface UpstreamEvents {
  /** A list changed (heard from the remote, or found on reconnecting). */
  listed(kind: keyof RemoteLists): void;
  /** The remote says `uri` changed. */
  updated(uri: string): void;
  /** Something went wrong that no request is waiting for (a dropped connection, a failed re-list). */
  error(error: unknown): void;
}

const STDIO = "@modelcontextprotocol/client/stdio";
const CLIENT = "@modelcontextprotocol/client";
const LOG_LEVEL = "io.modelcontextprotocol/logLevel";

/** The official client, the optional peer of picomcp/proxy; a clear error when it is not installed. */
async function load<T = typeof import("@modelcontextprotocol/client")>(spec: string): Promise<T> {
  try {
    return await import(spec);
  } catch (error) {
    throw new Error(
      `picomcp/proxy needs ${spec} (npm install @modelcontextprotocol/client): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
const LEVELS = new Set(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]);

/** The connection to the remote server; reconnects by itself until {@link close}. */
export class Upstream {
  readonly #target: UpstreamTarget;
  readonly #events: UpstreamEvents;
  readonly #reconnect: Required<ReconnectOptions>;
  readonly #info: { name: string; version: string };
  #client: Client | undefined;
  #down: string | undefined = "not connected yet";
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  readonly #routes: Routes;
  /** The remote's subscriptions, renewed after a reconnect. */
  readonly subscriptions = new RemoteSubscriptions();
  lists: RemoteLists = { tools: [], prompts: [], resources: [], templates: [] };
  capabilities: { [key: string]: unknown } = {};
  serverInfo: { name: string; version: string; [key: string]: unknown } | undefined;
  instructions: string | undefined;

  constructor(
    target: UpstreamTarget,
    events: UpstreamEvents,
    options: {
      reconnect?: ReconnectOptions | undefined;
      info: { name: string; version: string };
      guessStdioCaller?: boolean | undefined;
    },
  ) {
    this.#target = target;
    this.#events = events;
    this.#info = options.info;
    this.#routes = new Routes(!("command" in target), options.guessStdioCaller === true);
    this.#reconnect = {
      initialDelayMs: options.reconnect?.initialDelayMs ?? 250,
      maxDelayMs: options.reconnect?.maxDelayMs ?? 30_000,
    };
  }

  /** Connects and lists; rejects when the remote cannot be reached or refuses the handshake. */
  async start(): Promise<void> {
    await this.#connect();
  }

  /** The connected client, or the clear error of a remote that is not there now. */
  client(): Client {
    if (this.#client && this.#down === undefined) return this.#client;
    throw new McpError(
      ErrorCode.InternalError,
      `The upstream server is unavailable (${this.#down ?? "closed"}); the proxy is reconnecting`,
    );
  }

  /**
   * Sends `method` to the remote for the downstream request `ctx`: the remote's questions and log
   * messages meanwhile go to `ctx` (and a 2026-07-28 remote's input rounds are asked of it); the
   * remote's protocol errors come back as they are.
   */
  async request(ctx: Context, method: string, params: Params, options: RequestOptions): Promise<unknown> {
    const client = this.client();
    let fail!: (error: unknown) => void;
    const failed = new Promise<never>((_, reject) => {
      fail = reject;
    });
    const call = this.#routes.open(ctx, fail);
    try {
      const sent = requestWithRounds(
        client,
        ctx,
        { method, params: this.#routes.mark(withLogLevel(client, params), call) },
        options,
      );
      return await Promise.race([sent, failed]);
    } catch (error) {
      if (error instanceof FromDownstream) throw error.error;
      // over HTTP nothing closes: a request finds the remote gone (the network, its session forgotten)
      if (connectionLost(error)) this.#dropped(client, "the remote could not be reached");
      throw asMcpError(error, ctx.signal);
    } finally {
      this.#routes.close(call);
    }
  }

  /**
   * Subscribes the remote to `uris` for the downstream request `ctx` (those it is not subscribed to
   * yet): `resources/subscribe` for a 2025 remote, a listen naming every subscribed URI for a
   * 2026-07-28 one.
   */
  async subscribe(ctx: Context, uris: readonly string[]): Promise<void> {
    if (uris.length === 0) return; // nothing new: no need of the remote, even while it is down
    const client = this.client();
    try {
      await this.subscriptions.add(client, uris, (uri) =>
        this.request(ctx, "resources/subscribe", { uri }, { signal: ctx.signal }),
      );
    } catch (error) {
      throw asMcpError(error, ctx.signal);
    }
  }

  /** Unsubscribes the remote from `uris` (no downstream session wants them any more); a failure goes to `error`. */
  async unsubscribe(uris: readonly string[]): Promise<void> {
    const client = this.#down === undefined ? this.#client : undefined;
    await this.subscriptions.remove(client, uris).catch((e) => this.#events.error(e));
  }

  /** The revision negotiated with the remote; undefined while it is down. */
  get protocolVersion(): string | undefined {
    return this.#down === undefined ? this.#client?.getNegotiatedProtocolVersion() : undefined;
  }

  /** Stops reconnecting and closes the connection (a stdio child is ended). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#down = "closed";
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    await this.subscriptions.close();
    await client?.close().catch(() => {});
  }

  /** Asks the downstream client through the request the remote's request `id` belongs to; refused when none can be told. */
  async #ask(id: unknown, method: string, params: Params | undefined): Promise<never> {
    const call = this.#routes.forRequest(id);
    if (!call)
      throw new McpError(
        ErrorCode.InvalidRequest,
        this.#routes.size === 0
          ? `The proxy has no request in flight to ask ${method} for`
          : this.#routes.exact
            ? `The proxy cannot tell which of its requests in flight asks ${method}`
            : `The proxy cannot tell which of its requests in flight asks ${method}: a stdio server names none`,
      );
    try {
      return (await askDownstream(call.ctx, method, params)) as never;
    } catch (error) {
      // a 2026-07-28 client answers in a round of its own: the forwarded request ends with it
      if (call.ctx.features.stateless) call.fail(new FromDownstream(error));
      throw new McpError(ErrorCode.InvalidRequest, error instanceof Error ? error.message : String(error));
    }
  }

  async #transport(): Promise<Transport> {
    const target = this.#target;
    if ("command" in target) {
      // loaded only here, on Node: picomcp/proxy over HTTP imports nothing of Node, and a bundler for
      // Workers or a browser does not follow a specifier held in a variable
      type Stdio = typeof import("@modelcontextprotocol/client/stdio");
      const { StdioClientTransport } = await load<Stdio>(STDIO);
      return new StdioClientTransport({
        command: target.command,
        ...(target.args && { args: [...target.args] }),
        ...(target.env && { env: { ...target.env } }),
        ...(target.cwd && { cwd: target.cwd }),
        stderr: target.stderr ?? "inherit",
      });
    }
    const { StreamableHTTPClientTransport } = await load(CLIENT);
    return new StreamableHTTPClientTransport(new URL(target.url), {
      ...(target.headers && { requestInit: { headers: { ...target.headers } } }),
      fetch: this.#routes.tap(target.fetch),
    });
  }

  async #connect(): Promise<void> {
    const { Client } = await load(CLIENT);
    // the remote's list changes, in either era (a 2026-07-28 remote's through a listen the client opens)
    const changed = (kind: "tools" | "prompts" | "resources") => ({
      autoRefresh: false,
      debounceMs: 0,
      onChanged: () => {
        void this.#list(kind);
        if (kind === "resources") void this.#list("templates");
      },
    });
    const options: ClientOptions = {
      capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
      versionNegotiation: { mode: "auto" },
      listChanged: { tools: changed("tools"), prompts: changed("prompts"), resources: changed("resources") },
    };
    const client = new Client(this.#info, options);
    this.#handlers(client);
    const transport = await this.#transport();
    try {
      await client.connect(transport);
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    if (this.#closed) {
      await client.close().catch(() => {});
      return;
    }
    this.capabilities = (client.getServerCapabilities() ?? {}) as { [key: string]: unknown };
    this.serverInfo = client.getServerVersion() as typeof this.serverInfo;
    this.instructions = client.getInstructions();
    client.onclose = () => this.#dropped(client, "the connection closed");
    if (this.capabilities.logging && client.getProtocolEra() !== "modern")
      await client.setLoggingLevel("debug").catch((e) => this.#events.error(e));
    this.#client = client;
    this.#down = undefined;
    this.#attempt = 0;
    await this.subscriptions.renew(client, (e) => this.#events.error(e));
    for (const kind of ["tools", "prompts", "resources", "templates"] as const) await this.#list(kind);
  }

  /** Lists `kind` anew, coalesced: at most one listing in flight per kind, and one more after it. */
  readonly #relist = new Relister<keyof RemoteLists>((kind) => this.#listOnce(kind));
  #list(kind: keyof RemoteLists): Promise<void> {
    return this.#relist.run(kind);
  }

  /** Lists `kind` once; tells the proxy when it differs from what it held. */
  async #listOnce(kind: keyof RemoteLists): Promise<void> {
    const client = this.#client;
    if (!client) return;
    const caps = this.capabilities;
    let items: unknown[] = [];
    try {
      if (kind === "tools" && caps.tools) items = (await client.listTools()).tools;
      if (kind === "prompts" && caps.prompts) items = (await client.listPrompts()).prompts;
      if (kind === "resources" && caps.resources) items = (await client.listResources()).resources;
      if (kind === "templates" && caps.resources)
        items = (await client.listResourceTemplates()).resourceTemplates;
    } catch (error) {
      this.#events.error(error);
      return;
    }
    const before = JSON.stringify(this.lists[kind]);
    (this.lists as unknown as { [k: string]: unknown[] })[kind] = items;
    if (JSON.stringify(items) !== before) this.#events.listed(kind);
  }

  #handlers(client: Client): void {
    client.setNotificationHandler("notifications/resources/updated", (n) =>
      this.#events.updated(n.params.uri),
    );
    client.setNotificationHandler("notifications/message", (n) => {
      // to the request it belongs to, never to anyone else: a message the remote sends outside a call,
      // or that the proxy cannot tell the call of, names no caller and is dropped
      const call = this.#routes.forLog(n.params);
      if (call && LEVELS.has(n.params.level)) call.ctx.log(n.params.level, n.params.data, n.params.logger);
    });
    for (const method of ["elicitation/create", "sampling/createMessage", "roots/list"] as const)
      client.setRequestHandler(method, (request, ctx) => this.#ask(ctx.mcpReq.id, method, request.params));
  }

  #dropped(client: Client, why: string): void {
    if (client !== this.#client || this.#closed) return;
    this.#client = undefined;
    this.#down = why;
    void client.close().catch(() => {});
    this.#events.error(new Error(`picomcp/proxy: the upstream server went away (${why}); reconnecting`));
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed) return;
    const { initialDelayMs, maxDelayMs } = this.#reconnect;
    const delay = Math.min(maxDelayMs, initialDelayMs * 2 ** this.#attempt++);
    this.#timer = setTimeout(() => {
      this.#connect().catch((error) => {
        this.#down = `reconnecting failed: ${error instanceof Error ? error.message : String(error)}`;
        this.#schedule();
      });
    }, delay);
    (this.#timer as { unref?: () => void }).unref?.();
  }
}

/**
 * A 2026-07-28 remote sends a request's log messages at the level its `_meta` names: the proxy asks for
 * every level, and each of its sessions' own level filters them (a 2025 remote is told once, at connect).
 */
function withLogLevel(client: Client, params: Params): Params {
  if (client.getProtocolEra() !== "modern") return params;
  return { ...params, _meta: { ...(params._meta as Params | undefined), [LOG_LEVEL]: "debug" } };
}
