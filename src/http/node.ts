/** `serve`: plain Node (`node:http`) in front of the web-standard handler of `picomcp/http`: listening, connections per address, health, close and drain. */
import { createServer, type OutgoingHttpHeaders, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, Server as NetServer, type Socket } from "node:net";
import type { McpServer } from "../server.js";
import { addressKey, checkedPrefix, ProxyTrust } from "./client-address.js";
import { LOOPBACK_HOSTS } from "./guard.js";
import { createHttpHandler, type DrainOptions, type HttpHandler, type HttpHandlerOptions } from "./index.js";
import { type AnswerCount, nodeListener } from "./node-listener.js";
import { count, positive } from "./options.js";

export { type NodeListenerOptions, toNodeListener } from "./node-listener.js";
export { remoteAddress } from "./node-request.js";

/** Options of {@link serve}: where to listen, and every option of `createHttpHandler`. */
export interface ServeOptions extends HttpHandlerOptions {
  /** The port; 0 picks a free one (read it from `url`). */
  port: number;
  /** The interface to bind. Default: "127.0.0.1" (loopback only). */
  hostname?: string;
  /** The MCP endpoint; other paths get 404. Default: "/mcp". */
  path?: string;
  /** Milliseconds a client may take to send a request's headers, from connecting or from the end of its last request; past it Node answers 408 and closes the connection. Default: 30000. */
  headersTimeoutMs?: number;
  /** Milliseconds a request's body may take to arrive once its headers have; past it, 408 and the connection closes. Default: 30000. */
  bodyTimeoutMs?: number;
  /** Most connections open at once; one more is closed as soon as it is accepted. Default: 10000. */
  maxConnections?: number;
  /**
   * Most connections open at once from one address (an IPv6 one by `limits.ipv6Prefix`), so that no
   * address holds every connection; one more is closed as soon as it is accepted. Connections from
   * proxies `trustProxy` trusts are not counted so. Default: 256.
   */
  maxConnectionsPerAddress?: number;
  /**
   * Paths a balancer polls: `live` answers 200 while the process serves, `ready` 200 until a drain
   * begins and 503 from then on (`{"status":"ok"}`, `{"status":"draining"}`); `false` serves neither
   * (they get 404 as any other path). Default: `{ live: "/healthz", ready: "/readyz" }`.
   */
  health?: { live?: string; ready?: string } | false;
}

/** A running server. */
export interface NodeServer {
  /** The `node:http` server. */
  readonly server: Server;
  /** The endpoint's URL, e.g. `http://127.0.0.1:3000/mcp`. */
  readonly url: string;
  /** The fetch handler behind it (`closeSseStream`, `sessionCount`, …). */
  readonly handler: HttpHandler;
  /**
   * Stops listening, ends every session and stream, and resolves once closed. With `graceMs` it
   * drains first (`handler.drain`): new requests get 503 (`Retry-After`, `Connection: close`), streams
   * end so their clients resume elsewhere, requests in flight and running tasks get `graceMs` to finish.
   */
  close(options?: DrainOptions): Promise<void>;
}

/**
 * Serves `server` over Streamable HTTP with `node:http`, bound to 127.0.0.1 unless told otherwise.
 * @example
 * const { url } = await serve(server, { port: 3000 });
 * console.error(`MCP server at ${url}`);
 */
export async function serve(server: McpServer, options: ServeOptions): Promise<NodeServer> {
  const {
    port,
    hostname = "127.0.0.1",
    path = "/mcp",
    headersTimeoutMs = 30_000,
    bodyTimeoutMs = 30_000,
    maxConnections = 10_000,
    maxConnectionsPerAddress = 256,
    health = {},
    ...httpOptions
  } = options;
  positive(maxConnectionsPerAddress, "maxConnectionsPerAddress");
  positive(headersTimeoutMs, "headersTimeoutMs");
  positive(bodyTimeoutMs, "bodyTimeoutMs");
  positive(maxConnections, "maxConnections");
  const wildcard = hostname === "0.0.0.0" || hostname === "::";
  // bound to a name of its own: requests naming it are not a rebinding attack
  if (httpOptions.allowedHosts === undefined && !wildcard && !LOOPBACK_HOSTS.includes(bracket(hostname))) {
    httpOptions.allowedHosts = [...LOOPBACK_HOSTS, bracket(hostname)];
  }
  const handler = createHttpHandler(server, httpOptions);
  const answering = new Answering();
  const listener = nodeListener(handler, { path, bodyTimeoutMs }, answering);
  const live = health && (health.live ?? "/healthz");
  const ready = health && (health.ready ?? "/readyz");
  const http = createServer(
    {
      // Node's own clock for the headers (a silent or slow client gets 408); the bridge's for the body,
      // and Node's requestTimeout behind both
      headersTimeout: headersTimeoutMs,
      requestTimeout: headersTimeoutMs + bodyTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
    },
    health
      ? (req, res) => {
          if (req.url === path) return listener(req, res);
          if (req.url === live) return healthAnswer(res, true);
          if (req.url === ready) return healthAnswer(res, !handler.draining);
          listener(req, res);
        }
      : listener,
  );
  http.maxConnections = maxConnections;
  http.on("connection", connectionsPerAddress(maxConnectionsPerAddress, httpOptions));
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, hostname, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const host = wildcard ? (address.family === "IPv6" ? "[::1]" : "127.0.0.1") : bracket(address.address);
  return {
    server: http,
    url: `http://${host}:${address.port}${path}`,
    handler,
    close: async (options) => {
      if (options === undefined) {
        const closed = new Promise<void>((resolve) => http.close(() => resolve()));
        handler.close();
        http.closeAllConnections();
        return closed;
      }
      const graceMs = count(options.graceMs ?? 30_000, "graceMs");
      const until = Date.now() + graceMs;
      // no connection is accepted from now on; idle kept-alive ones stay open (http.Server's close would
      // reset them under a request on its way) and are answered 503 until the drain is over
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(http, () => resolve()));
      await handler.drain({ ...options, graceMs });
      // the answers still on their way out (a slow reader's, the cut's) get the rest of the grace
      await answering.settled(Math.max(until - Date.now(), LATE_MS));
      http.closeAllConnections();
      await closed;
    },
  };
}

/** Milliseconds that the answers written at the end of a drain (past its grace) get to leave. */
const LATE_MS = 1000;

/** The answers being written: a drain waits until they have left before it closes their connections. */
class Answering implements AnswerCount {
  #open = 0;
  #wake: (() => void)[] = [];

  opened(): void {
    this.#open++;
  }

  closed(): void {
    if (--this.#open > 0) return;
    for (const wake of this.#wake.splice(0)) wake();
  }

  /** Resolves once no answer is being written, or after `ms`. */
  settled(ms: number): Promise<void> {
    if (this.#open === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * Counts the open connections of each address (an IPv6 one by its prefix) and closes one past `max`
 * as soon as it is accepted: sockets that stay silent until their headers' deadline cannot take
 * every place of `maxConnections` from one address. A trusted proxy's connections are not counted.
 */
function connectionsPerAddress(max: number, o: HttpHandlerOptions): (socket: Socket) => void {
  const prefix = checkedPrefix(o.limits?.ipv6Prefix);
  const trust = o.trustProxy === undefined ? undefined : new ProxyTrust(o.trustProxy);
  const open = new Map<string, number>();
  return (socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trust?.trusts(address)) return;
    const key = addressKey(address, prefix) ?? address;
    const n = open.get(key) ?? 0;
    if (n >= max) {
      socket.destroy();
      return;
    }
    open.set(key, n + 1);
    socket.once("close", () => {
      const left = open.get(key)! - 1;
      if (left === 0) open.delete(key);
      else open.set(key, left);
    });
  };
}

/** A health or readiness answer: 200 `{"status":"ok"}`, or 503 `{"status":"draining"}` with `Connection: close`. */
function healthAnswer(res: ServerResponse, ok: boolean): void {
  const body = ok ? '{"status":"ok"}' : '{"status":"draining"}';
  const headers: OutgoingHttpHeaders = {
    "content-type": "application/json",
    "cache-control": "no-store",
    "content-length": body.length,
  };
  if (!ok) headers.connection = "close";
  res.writeHead(ok ? 200 : 503, headers);
  res.end(body);
}

function bracket(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
