/** `serve`: plain Node (`node:http`) in front of the web-standard handler of `picomcp/http`. */
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { ErrorCode } from "../errors.js";
import type { McpServer } from "../server.js";
import { httpError, LOOPBACK_HOSTS, SERVER_ERROR, validHost } from "./guard.js";
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "./index.js";

/** Options of {@link serve}: where to listen, and every option of `createHttpHandler`. */
export interface ServeOptions extends HttpHandlerOptions {
  /** The port; 0 picks a free one (read it from `url`). */
  port: number;
  /** The interface to bind. Default: "127.0.0.1" (loopback only). */
  hostname?: string;
  /** The MCP endpoint; other paths get 404. Default: "/mcp". */
  path?: string;
}

/** A running server. */
export interface NodeServer {
  /** The `node:http` server. */
  readonly server: Server;
  /** The endpoint's URL, e.g. `http://127.0.0.1:3000/mcp`. */
  readonly url: string;
  /** The fetch handler behind it (`closeSseStream`, `sessionCount`, …). */
  readonly handler: HttpHandler;
  /** Ends every session and stream, stops listening, and resolves once closed. */
  close(): Promise<void>;
}

/**
 * Serves `server` over Streamable HTTP with `node:http`, bound to 127.0.0.1 unless told otherwise.
 * @example
 * const { url } = await serve(server, { port: 3000 });
 * console.error(`MCP server at ${url}`);
 */
export async function serve(server: McpServer, options: ServeOptions): Promise<NodeServer> {
  const { port, hostname = "127.0.0.1", path = "/mcp", ...httpOptions } = options;
  const wildcard = hostname === "0.0.0.0" || hostname === "::";
  // bound to a name of its own: requests naming it are not a rebinding attack
  if (httpOptions.allowedHosts === undefined && !wildcard && !LOOPBACK_HOSTS.includes(bracket(hostname))) {
    httpOptions.allowedHosts = [...LOOPBACK_HOSTS, bracket(hostname)];
  }
  const handler = createHttpHandler(server, httpOptions);
  const http = createServer(toNodeListener(handler, { path }));
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
    close: () =>
      new Promise<void>((resolve) => {
        handler.close();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

function bracket(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions {
  /** Only this path is served; others get 404. Default: every path. */
  path?: string;
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
  return (req, res) => {
    bridge(handler, req, res, options.path).catch(() => res.destroy());
  };
}

async function bridge(
  handler: (request: Request) => Response | Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
  path: string | undefined,
): Promise<void> {
  const host = req.headers.host;
  // `localhost:3000@evil.com` would turn into user info of the URL, which a Request refuses
  if (host !== undefined && !validHost(host)) {
    return writeResponse(
      res,
      httpError(400, SERVER_ERROR, "Bad Request: the Host header is malformed"),
      true,
    );
  }
  let url: URL;
  try {
    url = new URL(req.url ?? "/", `http://${host ?? "localhost"}`);
    if (url.username || url.password) throw new TypeError("credentials in the URL");
  } catch {
    return writeResponse(
      res,
      httpError(400, SERVER_ERROR, "Bad Request: the request target is malformed"),
      true,
    );
  }
  if (path !== undefined && url.pathname !== path) {
    return writeResponse(res, httpError(404, SERVER_ERROR, `Not Found: the MCP endpoint is ${path}`), false);
  }
  const aborter = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) aborter.abort();
  });
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? undefined : requestBody(req);
  const init: RequestInit & { duplex?: "half" } = { method, headers, signal: aborter.signal };
  if (body) {
    init.body = body.stream;
    init.duplex = "half";
  }
  let response: Response;
  try {
    response = await handler(new Request(url, init));
  } catch {
    response = httpError(500, ErrorCode.InternalError, "Internal error");
  }
  // a body left unread (refused before reading it) would corrupt the kept-alive connection: a small
  // rest is read and dropped; a large one, or one the handler gave up on, closes it after the answer
  const length = Number(req.headers["content-length"] ?? 0);
  const unread = body !== undefined && !req.complete;
  await writeResponse(res, response, body?.abandoned() || (unread && !(length <= DRAIN_BYTES)) || false);
  if (unread && !body.abandoned()) body.discard();
}

/** Bytes of an unread body read and dropped to keep its connection alive; past it, the connection closes. */
const DRAIN_BYTES = 1024 * 1024;

/** The request body as a web stream that pauses the socket while nobody reads it. */
function requestBody(req: IncomingMessage): {
  stream: ReadableStream<Uint8Array>;
  abandoned(): boolean;
  discard(): void;
} {
  let abandoned = false;
  let dropped = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on("data", (chunk: Buffer) => {
          if (abandoned) {
            dropped += chunk.byteLength;
            // a body that lied about its length: the connection is not worth keeping
            if (dropped > DRAIN_BYTES) req.destroy();
            return;
          }
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) req.pause();
        });
        req.on("end", () => !abandoned && controller.close());
        req.on("error", (e) => !abandoned && controller.error(e));
      },
      pull() {
        req.resume();
      },
      cancel() {
        // the handler stopped reading (the body is too large): stop too, and close after answering
        abandoned = true;
        req.pause();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
  const discard = () => {
    abandoned = true;
    req.resume();
  };
  return { stream, abandoned: () => abandoned, discard };
}

async function writeResponse(res: ServerResponse, response: Response, closeAfter: boolean): Promise<void> {
  const out: OutgoingHttpHeaders = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") out[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) out["set-cookie"] = cookies;
  if (closeAfter) out.connection = "close";
  res.writeHead(response.status, out);
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
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
