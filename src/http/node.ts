/** `serve`: plain Node (`node:http`) in front of the web-standard handler of `picomcp/http`. */
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { ErrorCode } from "../errors.js";
import type { McpServer } from "../server.js";
import { httpError, SERVER_ERROR } from "./answers.js";
import { addressKey, checkedPrefix, ProxyTrust } from "./client-address.js";
import { LOOPBACK_HOSTS, validHost } from "./guard.js";
import { createHttpHandler, type DrainOptions, type HttpHandler, type HttpHandlerOptions } from "./index.js";
import { DRAIN_BYTES, firstHeader, type LazyState, NodeRequest, requestBody } from "./node-request.js";
import { positive } from "./options.js";
import { ANSWER, type Answer, type Answering, Reply, textOf } from "./reply.js";

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
  const listener = toNodeListener(handler, { path, bodyTimeoutMs });
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
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      // no connection is accepted from now on; those open are answered 503 until the drain is over
      if (options !== undefined) await handler.drain(options);
      else handler.close();
      http.closeAllConnections();
      await closed;
    },
  };
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

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions {
  /** Only this path is served; others get 404. Default: every path. */
  path?: string;
  /** Milliseconds a request's body may take to arrive once its headers have; past it, 408 and the connection closes. Default: 30000. */
  bodyTimeoutMs?: number;
}

/**
 * Turns a fetch handler into a `node:http` request listener (for `http.createServer`, Express's
 * `app.all(path, …)` without a body parser in front, and the like). Request bodies stream in,
 * response bodies stream out with backpressure, and a client that goes away aborts `request.signal`.
 */
export function toNodeListener(
  handler: (request: Request) => Response | Promise<Response>,
  options: NodeListenerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const path = options.path;
  const bodyMs = positive(options.bodyTimeoutMs ?? 30_000, "bodyTimeoutMs");
  // a request target that is exactly the endpoint, when the endpoint is already in a URL's normal form,
  // needs no URL parsed to know where it goes (the URL is made if the handler asks for it)
  const exact = path !== undefined && new URL(path, "http://h").pathname === path ? path : undefined;
  // picomcp's own handler answers without making a Response, and its answer is written as it is
  const answer: (request: Request) => Answer | Promise<Answer> = (handler as Answering)[ANSWER] ?? handler;
  const deadlines = bodyDeadlines(bodyMs);
  return (req, res) => {
    if (hasBody(req)) deadlines(req, res);
    bridge(answer, req, res, path, exact).catch(() => res.destroy());
  };
}

/** Whether a request says it has a body (HTTP/1.1: a `Content-Length` above 0, or a `Transfer-Encoding`). */
function hasBody(req: IncomingMessage): boolean {
  const length = firstHeader(req, "content-length");
  return (length !== undefined && length !== "0") || firstHeader(req, "transfer-encoding") !== undefined;
}

/**
 * Watches the bodies of requests for their deadline. A body that comes with its headers (nearly every
 * one) has arrived by the end of that turn of the event loop, and gets no timer at all: the requests of
 * a turn are looked at once it is over, and only a body still arriving then gets its timer.
 */
function bodyDeadlines(ms: number): (req: IncomingMessage, res: ServerResponse) => void {
  let requests: IncomingMessage[] = [];
  let responses: ServerResponse[] = [];
  const check = () => {
    const reqs = requests;
    const ress = responses;
    requests = [];
    responses = [];
    for (let i = 0; i < reqs.length; i++) {
      const req = reqs[i]!;
      if (!req.complete && !req.destroyed) bodyDeadline(req, ress[i]!, ms);
    }
  };
  return (req, res) => {
    if (requests.length === 0) setImmediate(check);
    requests.push(req);
    responses.push(res);
  };
}

/**
 * A body that trickles in holds its connection, and the handler waiting for it: it gets `ms` to arrive.
 * Past that the client is answered 408 (unless an answer went out already) and its connection closed;
 * the handler's read fails and its answer is dropped.
 */
function bodyDeadline(req: IncomingMessage, res: ServerResponse, ms: number): void {
  const timer = setTimeout(() => {
    if (req.complete) return;
    const gone = () => req.socket.destroy();
    if (res.headersSent) return gone();
    const reply = httpError(408, SERVER_ERROR, `Request Timeout: the body did not arrive within ${ms} ms`);
    void writeReply(res, reply, true);
    res.once("finish", gone);
  }, ms);
  const clear = () => clearTimeout(timer);
  req.once("end", clear);
  res.once("close", clear);
}

async function bridge(
  handler: (request: Request) => Answer | Promise<Answer>,
  req: IncomingMessage,
  res: ServerResponse,
  path: string | undefined,
  exact: string | undefined,
): Promise<void> {
  const host = firstHeader(req, "host");
  // `localhost:3000@evil.com` would turn into user info of the URL, which a Request refuses
  if (host !== undefined && !validHost(host)) {
    return writeResponse(
      res,
      httpError(400, SERVER_ERROR, "Bad Request: the Host header is malformed"),
      true,
    );
  }
  const base = `http://${host ?? "localhost"}`;
  let url: string | undefined;
  if (exact === undefined || req.url !== exact) {
    let parsed: URL;
    try {
      parsed = new URL(req.url ?? "/", base);
      if (parsed.username || parsed.password) throw new TypeError("credentials in the URL");
    } catch {
      return writeResponse(
        res,
        httpError(400, SERVER_ERROR, "Bad Request: the request target is malformed"),
        true,
      );
    }
    if (path !== undefined && parsed.pathname !== path) {
      return writeResponse(
        res,
        httpError(404, SERVER_ERROR, `Not Found: the MCP endpoint is ${path}`),
        false,
      );
    }
    url = parsed.href;
  }
  const method = req.method ?? "GET";
  const state: LazyState = { req, url: url ?? (() => new URL(exact!, base).href), method, closed: false };
  res.on("close", () => {
    if (res.writableFinished) return;
    state.closed = true;
    state.aborter?.abort();
    state.gone?.();
  });
  let response: Answer;
  try {
    response = await handler(new NodeRequest(state) as unknown as Request);
  } catch {
    response = httpError(500, ErrorCode.InternalError, "Internal error");
  }
  // a body left unread (refused before reading it) would corrupt the kept-alive connection: a small
  // rest is read and dropped; a large one, or one the handler gave up on, closes it after the answer
  const abandoned = (state.body?.abandoned() ?? false) || (state.read?.abandoned ?? false);
  const unread = !abandoned && !state.read && !req.complete;
  const closeAfter =
    abandoned || (unread && !(Number(firstHeader(req, "content-length") ?? 0) <= DRAIN_BYTES));
  // answered already: the body took too long
  if (res.headersSent) return;
  await writeResponse(res, response, closeAfter);
  if (unread) (state.body ?? requestBody(req)).discard();
}

async function writeResponse(res: ServerResponse, response: Answer, closeAfter: boolean): Promise<void> {
  if (response instanceof Reply) return writeReply(res, response, closeAfter);
  const out: OutgoingHttpHeaders = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") out[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) out["set-cookie"] = cookies;
  if (closeAfter) out.connection = "close";
  const text = textOf(response);
  if (text !== undefined) {
    // headers and body in one write, instead of a stream read chunk by chunk
    out["content-length"] = Buffer.byteLength(text);
    res.writeHead(response.status, out);
    res.end(text);
    return;
  }
  res.writeHead(response.status, out);
  if (!response.body) {
    res.end();
    return;
  }
  return pipe(res, response.body);
}

/** Writes a reply as {@link writeResponse} writes the `Response` made of it: the same status, headers and bytes. */
function writeReply(res: ServerResponse, reply: Reply, closeAfter: boolean): Promise<void> | undefined {
  const headers = reply.headers;
  const names = Object.keys(headers);
  // in the order a Response's headers come in
  if (!inOrder(names)) names.sort();
  const out: OutgoingHttpHeaders = {};
  for (const name of names) out[name] = headers[name];
  if (closeAfter) out.connection = "close";
  const body = reply.body;
  if (typeof body === "string") {
    out["content-length"] = Buffer.byteLength(body);
    res.writeHead(reply.status, out);
    res.end(body);
    return;
  }
  res.writeHead(reply.status, out);
  if (body === null) {
    res.end();
    return;
  }
  return pipe(res, body);
}

function inOrder(names: readonly string[]): boolean {
  for (let i = 1; i < names.length; i++) if (names[i - 1]! > names[i]!) return false;
  return true;
}

/** Streams a body out with backpressure; a client that goes away cancels it. */
async function pipe(res: ServerResponse, body: ReadableStream<Uint8Array>): Promise<void> {
  res.flushHeaders();
  const reader = body.getReader();
  res.on("close", () => {
    reader.cancel().catch(() => {});
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return;
      if (!res.write(value)) await drained(res);
    }
    res.end();
  } catch {
    res.destroy();
  }
}

/** Resolves on `drain`, or when the response closes (the client went away). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
