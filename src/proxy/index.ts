/**
 * `picomcp/proxy`: a picomcp server in front of another MCP server — a remote one over Streamable HTTP
 * (either era) or a local one started as a stdio command — made with the official client, the
 * optional peer `@modelcontextprotocol/client`.
 */

import { LocalBus } from "../bus.js";
import { defaultExtensions } from "../ext/builtins.js";
import { McpServer, type McpServerOptions } from "../server.js";
import { Filters, type ProxyFilters } from "./filters.js";
import { mirrorExtension, Shown } from "./mirror.js";
import { type ReconnectOptions, Upstream, type UpstreamTarget } from "./upstream.js";

export type { Hide, ProxyFilters, RemotePrompt, RemoteResource, RemoteTool } from "./filters.js";
export type { HttpUpstream, ReconnectOptions, StdioUpstream, UpstreamTarget } from "./upstream.js";

/** Options of {@link createProxy}: the server's own (limits, telemetry through `extensions`, …) and what it shows of the remote. */
export interface ProxyOptions
  extends Omit<McpServerOptions, "name" | "version" | "extensions" | "tasks">,
    ProxyFilters {
  /** The proxy's name. Default: the remote's. */
  name?: string;
  /** The proxy's version. Default: the remote's. */
  version?: string;
  /** How it reconnects when the remote goes away. */
  reconnect?: ReconnectOptions;
  /** Milliseconds a forwarded request may wait for the remote (progress resets it). Default: `requestTimeoutMs`, else 60000. */
  upstreamTimeoutMs?: number;
  /**
   * A 2025 remote over stdio never says which call its elicitation, sampling or roots request (or log
   * message) is for: by default the proxy refuses such a request and drops such a message. `true`
   * guesses instead: it is given to the calls in flight when they are all one caller's (`ctx.caller`),
   * else refused. The risk: a question the remote asks outside any call, or for a call that already
   * ended, reaches that caller's current call. Default: false.
   */
  guessStdioCaller?: boolean;
  /** Extensions of your own (an audit log, telemetry's observer), added after the proxy's. */
  extensions?: McpServerOptions["extensions"];
}

/** The built-ins a proxy keeps: the primitives are the remote's, served by the proxy's own extension. */
const KEPT = new Set(["picomcp/experimental", "picomcp/logging", "picomcp/listen", "picomcp/discover"]);

/**
 * A picomcp server whose primitives are the remote's (see {@link createProxy}); `close()` also ends the
 * connection to the remote (and a stdio child).
 */
export interface ProxyServer extends McpServer {
  /** The remote's name and version, as it gave them when the proxy connected. */
  readonly upstreamInfo: { readonly name: string; readonly version: string } | undefined;
  /** The revision the proxy speaks with the remote now (`2026-07-28`, `2025-11-25`, …); undefined while it is down. */
  readonly upstreamProtocolVersion: string | undefined;
  /** `close()`, resolved once the connection to the remote (and a stdio child) is closed. */
  shutdown(): Promise<void>;
}

class ProxiedServer extends McpServer implements ProxyServer {
  readonly #upstream: Upstream;

  constructor(options: McpServerOptions, upstream: Upstream) {
    super(options);
    this.#upstream = upstream;
  }

  get upstreamInfo() {
    return this.#upstream.serverInfo;
  }

  get upstreamProtocolVersion() {
    return this.#upstream.protocolVersion;
  }

  override close(): void {
    super.close();
    void this.#upstream.close();
  }

  async shutdown(): Promise<void> {
    super.close();
    await this.#upstream.close();
  }
}

/**
 * Connects to `target` and makes a picomcp server that mirrors it: its tools, prompts, resources,
 * templates and completions (filtered and renamed as `options` say), listed at start and again on
 * the remote's `list_changed` (announced to this server's clients in both eras); calls forwarded with
 * their progress and cancellation; the remote's elicitation, sampling and roots requests during a
 * call asked of the client that made it; its errors and `isError` results as they are. Rejects when
 * the first connection fails; later failures answer each request with a clear error while it
 * reconnects with backoff. The capabilities it declares are the remote's at the first connection,
 * fixed for the proxy's life (a remote that comes back with others is not re-declared).
 * @example
 * const proxy = await createProxy(
 *   { command: "node", args: ["server.js"] },
 *   { tools: { hide: ["delete_all"] } },
 * );
 * const handle = createHttpHandler(proxy);
 */
export async function createProxy(target: UpstreamTarget, options: ProxyOptions = {}): Promise<ProxyServer> {
  const { tools, prompts, resources, reconnect, upstreamTimeoutMs, extensions, guessStdioCaller, ...rest } =
    options;
  const filters = new Filters({
    ...(tools && { tools }),
    ...(prompts && { prompts }),
    ...(resources && { resources }),
  });
  const bus = rest.bus ?? new LocalBus();
  let shown: Shown | undefined;
  const upstream = new Upstream(
    target,
    {
      listed: (kind) => {
        if (!shown) return;
        try {
          shown.derive();
        } catch (error) {
          report(error);
          return;
        }
        bus.publish({ type: "list_changed", kind: kind === "templates" ? "resources" : kind });
      },
      updated: (uri) => bus.publish({ type: "resource_updated", uri }),
      error: (error) => report(error),
    },
    {
      reconnect,
      guessStdioCaller,
      info: { name: options.name ?? "picomcp-proxy", version: options.version ?? "0.0.0" },
    },
  );
  const report = (error: unknown) =>
    (rest.onError ?? ((e: unknown) => console.error(e)))(error, {
      method: "picomcp/proxy",
      requestId: "upstream",
    });
  try {
    await upstream.start();
    shown = new Shown(upstream, filters);
    shown.derive();
  } catch (error) {
    await upstream.close(); // a child started for nothing ends with the refusal
    throw error;
  }
  const timeoutMs = upstreamTimeoutMs ?? rest.requestTimeoutMs ?? 60_000;
  const info = upstream.serverInfo;
  const server = (mirror: Shown) =>
    new ProxiedServer(
      {
        ...rest,
        name: options.name ?? info?.name ?? "picomcp-proxy",
        version: options.version ?? info?.version ?? "0.0.0",
        ...(rest.instructions === undefined &&
          upstream.instructions !== undefined && { instructions: upstream.instructions }),
        bus,
        extensions: [
          ...defaultExtensions.filter((e) => KEPT.has(e.id)),
          mirrorExtension(mirror, timeoutMs, rest.cache),
          ...(extensions ?? []),
        ],
      },
      upstream,
    );
  try {
    return server(shown);
  } catch (error) {
    await upstream.close();
    throw error;
  }
}
