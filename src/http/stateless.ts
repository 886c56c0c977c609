/**
 * The 2026-07-28 revision over Streamable HTTP: every POST stands alone (no session, no handshake),
 * its headers must agree with its body, errors map to the statuses the revision names, and the
 * response is JSON, or SSE once a related notification comes first (a `subscriptions/listen` stream
 * stays open until the client closes it, which cancels the request).
 */
import type { AuthInfo, Connection, ConnectionOptions } from "../connection.js";
import type { HandleOptions } from "../dispatch/envelope.js";
import { hasStatelessMeta, META } from "../eras/stateless.js";
import { isStatelessVersion } from "../eras/versions.js";
import { ErrorCode } from "../errors.js";
import { encodeMessage } from "../jsonrpc.js";
import type { McpServer } from "../server.js";
import {
  type Awaitable,
  isObject,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type RequestId,
} from "../types.js";
import { bodyRefused, JSON_TYPE, mapError, NONE } from "./answers.js";
import { cutError, cutReply, type Drain } from "./drain.js";
import { cancelRequests, encode, OneAnswer, runNow } from "./exchange.js";
import { acceptsJsonAndSse, isJsonContentType } from "./guard.js";
import { checkHeaders } from "./headers.js";
import type { BodyCount, HttpGovernor } from "./limits.js";
import type { ErrorStatus } from "./options.js";
import { type Answer, Reply, toResponse } from "./reply.js";
import { header, readBody, whenGone } from "./request.js";
import { SSE_HEADERS, type SseWriter } from "./sse.js";

const VERSION_KEY = META.protocolVersion;
const noop = () => {};
/** The options of a request's own connection without credentials: one object for them all. */
const UNSENT: ConnectionOptions = Object.freeze({ send: noop });
const CAPABILITIES_KEY = META.clientCapabilities;

function validId(id: unknown): RequestId | undefined {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : undefined;
}

/** Whether `MCP-Protocol-Version` names a stateless revision (an unknown one is refused on the session path). */
export function isStatelessHeader(value: string | null): boolean {
  return value !== null && isStatelessVersion(value.trim());
}

/** Whether a parsed body is a request of the 2026-07-28 era: a `server/discover` probe, or the era's `_meta`. */
export function isStatelessBody(message: unknown): boolean {
  if (!isObject(message)) return false;
  return (
    message.method === "server/discover" ||
    (isObject(message.params) && hasStatelessMeta(message.params._meta))
  );
}

/** An error answer with the status the revision gives it; `id` when the request's id could be read. */
function fail(
  status: number,
  id: RequestId | undefined,
  code: number,
  message: string,
  extra?: { readonly [name: string]: string },
): Reply {
  const body =
    id === undefined
      ? { jsonrpc: "2.0", error: { code, message } }
      : { jsonrpc: "2.0", id, error: { code, message } };
  return new Reply(status, { "content-type": "application/json", ...extra }, JSON.stringify(body));
}

/** The HTTP status of a JSON answer: the protocol's refusals are 400, an unknown method 404, the rest 200. */
function statusOf(answer: JsonRpcResponse): number {
  if (!("error" in answer)) return 200;
  switch (answer.error.code) {
    case ErrorCode.MethodNotFound:
      return 404;
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
    case ErrorCode.InvalidRequest:
    case ErrorCode.ParseError:
      return 400;
    default:
      return 200;
  }
}

/** What the stateless pipeline needs from the handler. */
export interface StatelessOptions {
  server: McpServer;
  maxBodyBytes: number;
  /** Most listen streams open at once. */
  maxListens: number;
  /** Opens an SSE body that gets keep-alive comments, its queue counted for `caller`; `onGone` runs when the client goes away. */
  sink(onGone: () => void, caller: string): SseWriter;
  /** Who the caller is, and what its request's body counts for. */
  limits: HttpGovernor;
  /** The `errorStatus` option. */
  errorStatus: ErrorStatus | undefined;
  /** The handler's drain: it keeps the connections of requests in flight, and cancels those left at its end. */
  drain: Drain;
}

/** @internal — the 2026-07-28 pipeline of one handler. */
export class StatelessHttp {
  readonly #o: StatelessOptions;
  /** Connections of the listen streams open. */
  readonly #listening = new Set<Connection>();

  constructor(o: StatelessOptions) {
    this.#o = o;
  }

  /**
   * Graceful teardown: every request still running that belongs to no session ends gracefully (see
   * `server.endGracefully`: an open listen gets its final result) before the streams close.
   */
  close(): void {
    for (const connection of [...this.#o.drain.running]) this.#o.server.endGracefully(connection);
  }

  /** GET and DELETE have no meaning in the revision. */
  notAllowed(): Reply {
    return fail(
      405,
      undefined,
      ErrorCode.InvalidRequest,
      "Method Not Allowed: 2026-07-28 requests use POST",
      {
        allow: "POST",
      },
    );
  }

  /**
   * A POST whose headers named the revision (`version`, its `MCP-Protocol-Version` as the route read
   * it): media types and body are checked here, with its codes.
   */
  async post(
    request: Request,
    auth: AuthInfo | undefined,
    version: string,
    count: BodyCount,
  ): Promise<Answer> {
    const accept = header(request, "accept");
    if (!acceptsJsonAndSse(accept)) {
      return fail(
        406,
        undefined,
        ErrorCode.InvalidRequest,
        "Not Acceptable: Accept must list application/json and text/event-stream",
      );
    }
    if (!isJsonContentType(header(request, "content-type"))) {
      return fail(
        415,
        undefined,
        ErrorCode.InvalidRequest,
        "Unsupported Media Type: Content-Type must be application/json",
      );
    }
    let text: string;
    try {
      const body = await readBody(request, this.#o.maxBodyBytes, count);
      if (!body.ok && body.reason === "limit") return bodyRefused(body.error);
      if (!body.ok && body.reason === "too-large") {
        return fail(
          413,
          undefined,
          ErrorCode.InvalidRequest,
          `Payload Too Large: the body must not exceed ${this.#o.maxBodyBytes} bytes`,
        );
      }
      if (!body.ok) throw new SyntaxError("not UTF-8");
      text = body.text;
    } catch {
      return fail(400, undefined, ErrorCode.ParseError, "Parse error: the body is not UTF-8 text");
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return fail(400, undefined, ErrorCode.ParseError, "Parse error: the message is not valid JSON");
    }
    // parsed: the text is gone, and the running request counts in `requests` (a listen holds no bytes)
    count.end();
    // not awaited here: the body's text must not live on in this frame while the request runs (a listen runs long)
    return this.serve(request, message, auth, version);
  }

  /**
   * Validates one parsed message against the revision's rules and its headers (`version`: its
   * `MCP-Protocol-Version`), then answers it.
   */
  serve(
    request: Request,
    message: unknown,
    auth: AuthInfo | undefined,
    version: string | null,
  ): Awaitable<Answer> {
    if (!isObject(message)) {
      const what = Array.isArray(message)
        ? "batches are not part of 2026-07-28"
        : "a message must be a JSON object";
      return fail(400, undefined, ErrorCode.InvalidRequest, `Invalid Request: ${what}`);
    }
    const id = validId(message.id);
    const method = message.method;
    if (message.jsonrpc !== "2.0")
      return fail(400, id, ErrorCode.InvalidRequest, 'Invalid Request: jsonrpc must be "2.0"');
    if (typeof method !== "string") {
      const response = "result" in message || "error" in message;
      const why = response ? "clients do not send responses in 2026-07-28" : "method must be a string";
      return fail(400, response ? undefined : id, ErrorCode.InvalidRequest, `Invalid Request: ${why}`);
    }
    // nothing reaches a client outside its own POST
    const connection = this.#o.server.connect(auth ? { send: noop, auth } : UNSENT);
    this.#o.limits.bind(connection, request, auth);
    if (!("id" in message)) {
      // no notification is defined for HTTP in this revision; one that arrives is accepted
      const options = this.#o.server.observer ? { stateless: true, carrier: request } : { stateless: true };
      return this.#o.server.handle(message, connection, options).then(() => {
        connection.close();
        return new Reply(202, NONE, null);
      });
    }
    const refusal = this.#refusal(request, version, id, method, message.params);
    if (refusal) {
      connection.close();
      return refusal;
    }
    if (method !== "subscriptions/listen") return this.#exchange(request, message, connection, auth);
    if (this.#listening.size >= this.#o.maxListens) {
      connection.close();
      return fail(503, id, ErrorCode.InternalError, "Service Unavailable: too many listen streams are open", {
        "retry-after": "5",
      });
    }
    return this.#exchange(request, message, connection, auth, true);
  }

  #refusal(
    request: Request,
    version: string | null,
    id: RequestId | undefined,
    method: string,
    params: unknown,
  ): Reply | undefined {
    if (id === undefined)
      return fail(
        400,
        undefined,
        ErrorCode.InvalidRequest,
        "Invalid Request: id must be a string or a number",
      );
    const p = params ?? {};
    if (!isObject(p))
      return fail(400, id, ErrorCode.InvalidParams, "Invalid params: params must be an object");
    const meta = p._meta;
    if (!isObject(meta) || typeof meta[VERSION_KEY] !== "string" || !isObject(meta[CAPABILITIES_KEY])) {
      return fail(
        400,
        id,
        ErrorCode.InvalidParams,
        `Invalid params: _meta must carry "${VERSION_KEY}" (a string) and "${CAPABILITIES_KEY}" (an object)`,
      );
    }
    const mismatch = (why: string) => fail(400, id, ErrorCode.HeaderMismatch, `Header mismatch: ${why}`);
    if (version === null) return mismatch("the MCP-Protocol-Version header is required");
    if (version.trim() !== meta[VERSION_KEY]) {
      return mismatch(
        `the MCP-Protocol-Version header ${JSON.stringify(version.trim())} does not match _meta ${JSON.stringify(meta[VERSION_KEY])}`,
      );
    }
    const mirrored =
      method === "tools/call" && typeof p.name === "string" ? this.#o.server.toolHeaders(p.name) : [];
    const why = checkHeaders((name) => header(request, name), method, p, mirrored);
    return why === undefined ? undefined : mismatch(why);
  }

  /**
   * Runs the request on its own connection: JSON, or SSE from the first related notification on. A
   * request answered synchronously is answered without a promise.
   */
  #exchange(
    request: Request,
    message: object,
    connection: Connection,
    auth: AuthInfo | undefined,
    listen = false,
  ): Awaitable<Answer> {
    if (listen) this.#listening.add(connection);
    const done = this.#o.drain.track(connection);
    let sink: SseWriter | undefined;
    let over = false;
    let cancelled = false;
    // the answer, once there is one (the SSE stream's, from the first related message on)
    const settled = new OneAnswer();
    const reply = (a: Answer) => settled.give(a);
    const cancel = () => {
      if (cancelled || over) return;
      cancelled = true;
      cancelRequests(connection, options);
    };
    const send = (m: JsonRpcMessage) => {
      const data = over ? undefined : encode(m);
      if (data === undefined || cancelled) return;
      if (!sink) {
        // closing the stream is the client's cancellation
        sink = this.#o.sink(cancel, this.#o.limits.caller(request, auth));
        reply(new Reply(200, SSE_HEADERS, sink.readable));
        // a request whose stream opens once a drain has begun (a listen whose body was still
        // arriving) ends at once gracefully, as those running when it began did
        if (this.#o.drain.draining) queueMicrotask(() => this.#o.server.endGracefully(connection));
      }
      sink.event(data);
    };
    const finish = (answer: JsonRpcResponse | JsonRpcResponse[] | undefined) => {
      // cut by a drain already (its handler's end comes after)
      if (over) return;
      over = true;
      this.#o.drain.cuts.delete(cutNow);
      if (listen) this.#listening.delete(connection);
      done();
      const one = Array.isArray(answer) ? answer[0] : answer;
      if (sink) {
        if (one) sink.event(encodeMessage(one));
        // cancelled at the end of a drain: the stream's last event says so
        else if (this.#o.drain.cut) sink.event(cutError(validId((message as { id?: unknown }).id)));
        sink.close();
      } else if (one) {
        const mapped = mapError(this.#o.errorStatus, one, request);
        const status = mapped?.status ?? statusOf(one);
        if (mapped?.headers) {
          // a hook's headers (any case, any spelling) are made what a Response makes of them
          const headers = { "content-type": "application/json", ...mapped.headers };
          reply(toResponse(new Reply(status, headers, encodeMessage(one))));
        } else reply(new Reply(status, JSON_TYPE, encodeMessage(one)));
      } else if (this.#o.drain.cut) {
        // cancelled at the end of a drain: the client is told, and not invited to retry (it may have had effects)
        reply(cutReply(validId((message as { id?: unknown }).id)));
      } else {
        // cancelled before anything was sent: the client is gone and reads nothing
        reply(new Reply(202, NONE, null));
      }
    };
    const cutNow = () => finish(undefined);
    this.#o.drain.cuts.add(cutNow);
    const options: HandleOptions = { send, stateless: true };
    if (this.#o.server.observer) options.carrier = request;
    // a client already gone: nothing runs, as for an aborted signal
    if (whenGone(request, cancel)) options.signal = AbortSignal.abort();
    runNow(this.#o.server, message, connection, options, finish);
    return settled.get();
  }
}
