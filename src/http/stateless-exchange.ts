/** One 2026-07-28 request over Streamable HTTP on a connection of its own, from its start to its one answer: JSON, or SSE from the first related notification on. */
import type { AuthInfo, Connection } from "../connection.js";
import { ErrorCode } from "../errors.js";
import { encodeMessage } from "../jsonrpc.js";
import type { McpServer } from "../server.js";
import type { Awaitable, JsonRpcMessage, JsonRpcResponse, RequestId } from "../types.js";
import { JSON_TYPE, mapError, NONE } from "./answers.js";
import { cutError, cutReply, type Drain } from "./drain.js";
import { encode } from "./exchange.js";
import type { HttpGovernor } from "./limits.js";
import { OneExchange } from "./one-exchange.js";
import type { ErrorStatus } from "./options.js";
import { type Answer, Reply, toResponse } from "./reply.js";
import { SSE_HEADERS, type SseWriter } from "./sse.js";

export function validId(id: unknown): RequestId | undefined {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : undefined;
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

/** One 2026-07-28 request on its own connection, from its start to its one answer. @internal */
export class StatelessExchange extends OneExchange {
  readonly #o: StatelessOptions;
  readonly #request: Request;
  readonly #message: object;
  readonly #auth: AuthInfo | undefined;
  /** The listen streams open, when this is one. */
  #listening: Set<Connection> | undefined;
  #sink: SseWriter | undefined;

  constructor(
    o: StatelessOptions,
    request: Request,
    message: object,
    connection: Connection,
    auth: AuthInfo | undefined,
  ) {
    super(connection, true, true);
    this.#o = o;
    this.#request = request;
    this.#message = message;
    this.#auth = auth;
  }

  run(listening: Set<Connection> | undefined): Awaitable<Answer> {
    this.#listening = listening;
    this.#o.drain.track(this);
    // closing the stream, or the client going away, is the client's cancellation
    return this.start(this.#o.server, this.#message, this.#request, true);
  }

  cut(): void {
    this.finish(undefined);
  }

  protected send(m: JsonRpcMessage): void {
    const data = this.over ? undefined : encode(m);
    if (data === undefined || this.cancelled) return;
    if (!this.#sink) {
      const o = this.#o;
      this.#sink = o.sink(() => this.cancel(), o.limits.caller(this.#request, this.#auth));
      this.reply(new Reply(200, SSE_HEADERS, this.#sink.readable));
      // a request whose stream opens once a drain has begun (a listen whose body was still
      // arriving) ends at once gracefully, as those running when it began did
      if (o.drain.draining) queueMicrotask(() => o.server.endGracefully(this.runsOn));
    }
    this.#sink.event(data);
  }

  protected finish(answer: JsonRpcResponse | JsonRpcResponse[] | undefined): void {
    // cut by a drain already (its handler's end comes after)
    if (this.over) return;
    this.over = true;
    const o = this.#o;
    o.drain.untrack(this);
    this.#listening?.delete(this.runsOn);
    this.runsOn.close();
    const one = Array.isArray(answer) ? answer[0] : answer;
    const sink = this.#sink;
    const id = () => validId((this.#message as { id?: unknown }).id);
    if (sink) {
      if (one) sink.event(encodeMessage(one));
      // cancelled at the end of a drain: the stream's last event says so
      else if (o.drain.cut) sink.event(cutError(id()));
      sink.close();
    } else if (one) {
      const mapped = mapError(o.errorStatus, one, this.#request);
      const status = mapped?.status ?? statusOf(one);
      if (mapped?.headers) {
        // a hook's headers (any case, any spelling) are made what a Response makes of them
        const headers = { "content-type": "application/json", ...mapped.headers };
        this.reply(toResponse(new Reply(status, headers, encodeMessage(one))));
      } else this.reply(new Reply(status, JSON_TYPE, encodeMessage(one)));
    } else if (o.drain.cut) {
      // cancelled at the end of a drain: the client is told, and not invited to retry (it may have had effects)
      this.reply(cutReply(id()));
    } else {
      // cancelled before anything was sent: the client is gone and reads nothing
      this.reply(new Reply(202, NONE, null));
    }
  }
}
