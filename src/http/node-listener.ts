/**
 * `toNodeListener`: one `node:http` request handed to a fetch handler (a lazy `Request`, its body
 * streamed in under a deadline) and its answer written out, with backpressure.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { ErrorCode } from "../errors.js";
import { isPromiseLike } from "../types.js";
import { httpError, SERVER_ERROR } from "./answers.js";
import { validHost } from "./guard.js";
import { DRAIN_BYTES, firstHeader, type LazyState, NodeRequest, requestBody } from "./node-request.js";
import { positive } from "./options.js";
import { ANSWER, type Answer, type Answering, Reply, textOf } from "./reply.js";
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
  return nodeListener(handler, options);
}

/** What is told of each answer the bridge gives: when it begins, and when its response has closed. */
export interface AnswerCount {
  opened(): void;
  closed(): void;
}

/** {@link toNodeListener}, telling `count` of every answer (the server's drain waits for them). */
export function nodeListener(
  handler: (request: Request) => Response | Promise<Response>,
  options: NodeListenerOptions,
  count?: AnswerCount,
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
    count?.opened();
    const state: LazyState = {
      req,
      url: undefined,
      target: exact ?? "/",
      host: undefined,
      method: req.method ?? "GET",
      headers: undefined,
      aborter: undefined,
      closed: false,
      gone: undefined,
      body: undefined,
      read: undefined,
      real: undefined,
    };
    res.on("close", () => {
      count?.closed();
      if (res.writableFinished) return;
      state.closed = true;
      state.aborter?.abort();
      state.gone?.();
    });
    if (!hasBody(req)) {
      safely(answer, state, res, path, exact);
      return;
    }
    deadlines(req, res);
    // begun once the bytes that came with the headers are parsed (a microtask later): a body that
    // came with them (nearly every one) is then read at once, without a listener or a promise
    queueMicrotask(() => safely(answer, state, res, path, exact));
  };
}

/** {@link bridge}, its connection reset if it fails: the process stays up, and the client is not left waiting. */
function safely(
  handler: (request: Request) => Answer | Promise<Answer>,
  state: LazyState,
  res: ServerResponse,
  path: string | undefined,
  exact: string | undefined,
): void {
  try {
    bridge(handler, state, res, path, exact);
  } catch {
    res.destroy();
  }
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

/** Answers one request: its target checked, the handler asked, and its answer written (a failure of either: 500, or the connection reset). */
function bridge(
  handler: (request: Request) => Answer | Promise<Answer>,
  state: LazyState,
  res: ServerResponse,
  path: string | undefined,
  exact: string | undefined,
): void {
  const req = state.req;
  const host = firstHeader(req, "host");
  // `localhost:3000@evil.com` would turn into user info of the URL, which a Request refuses
  if (host !== undefined && !validHost(host)) {
    written(res, httpError(400, SERVER_ERROR, "Bad Request: the Host header is malformed"), true);
    return;
  }
  state.host = host;
  if (exact === undefined || req.url !== exact) {
    let parsed: URL;
    try {
      parsed = new URL(req.url ?? "/", `http://${host ?? "localhost"}`);
      if (parsed.username || parsed.password) throw new TypeError("credentials in the URL");
    } catch {
      written(res, httpError(400, SERVER_ERROR, "Bad Request: the request target is malformed"), true);
      return;
    }
    if (path !== undefined && parsed.pathname !== path) {
      written(res, httpError(404, SERVER_ERROR, `Not Found: the MCP endpoint is ${path}`), false);
      return;
    }
    state.url = parsed.href;
  }
  let response: Answer | Promise<Answer>;
  try {
    response = handler(new NodeRequest(state) as unknown as Request);
  } catch {
    response = httpError(500, ErrorCode.InternalError, "Internal error");
  }
  if (!isPromiseLike(response)) {
    answered(state, res, response);
    return;
  }
  response.then(
    (r) => answered(state, res, r),
    () => answered(state, res, httpError(500, ErrorCode.InternalError, "Internal error")),
  );
}

/** Writes the handler's answer, and what the request's body needs then (its rest read and dropped, or its connection closed). */
function answered(state: LazyState, res: ServerResponse, response: Answer): void {
  const req = state.req;
  // a body left unread (refused before reading it) would corrupt the kept-alive connection: a small
  // rest is read and dropped; a large one, or one the handler gave up on, closes it after the answer
  const abandoned = (state.body?.abandoned() ?? false) || (state.read?.abandoned ?? false);
  const unread = !abandoned && !state.read && !req.complete;
  const closeAfter =
    abandoned || (unread && !(Number(firstHeader(req, "content-length") ?? 0) <= DRAIN_BYTES));
  // answered already: the body took too long
  if (res.headersSent) return;
  const discard = () => (state.body ?? requestBody(req)).discard();
  let out: Promise<void> | undefined;
  try {
    out = writeResponse(res, response, closeAfter);
  } catch {
    res.destroy();
    return;
  }
  if (out === undefined) {
    if (unread) discard();
    return;
  }
  out.then(unread ? discard : undefined).catch(() => res.destroy());
}

/** Writes an answer of the bridge's own; one that fails resets the connection. */
function written(res: ServerResponse, answer: Answer, closeAfter: boolean): void {
  try {
    writeResponse(res, answer, closeAfter)?.catch(() => res.destroy());
  } catch {
    res.destroy();
  }
}

function writeResponse(
  res: ServerResponse,
  response: Answer,
  closeAfter: boolean,
): Promise<void> | undefined {
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
