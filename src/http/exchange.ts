/** One POST that carries requests: answered with JSON, or with SSE once a related message comes first. */
import type { AuthInfo, Connection, ConnectionOptions } from "../connection.js";
import type { HandleOptions } from "../dispatch/envelope.js";
import type { Features } from "../eras/versions.js";
import { DEFAULT_FEATURES, revision, SESSION_VERSIONS } from "../eras/versions.js";
import { encodeMessage, errorResponse, expectsAnswer } from "../jsonrpc.js";
import type { McpServer } from "../server.js";
import {
  type Awaitable,
  isObject,
  isPromiseLike,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type RequestId,
} from "../types.js";
import { randomId } from "./access.js";
import { answerResponse, mapError, NONE, SERVER_ERROR } from "./answers.js";
import { cutError, cutReply, type Drain, type Running } from "./drain.js";
import type { EventStore } from "./event-store.js";
import { EventStream } from "./event-stream.js";
import { OneExchange } from "./one-exchange.js";
import type { ErrorStatus } from "./options.js";
import { type Answer, Reply } from "./reply.js";
import { type Exchange, Session } from "./session.js";
import { SSE_HEADERS, type SseWriter } from "./sse.js";

const noop = () => {};

/** The options that tell an observer (telemetry) which HTTP request carried a message; none without one. */
export function carried(server: McpServer, request: Request): HandleOptions | undefined {
  return server.observer ? { carrier: request } : undefined;
}

function statelessOptions(version: string): ConnectionOptions {
  return Object.freeze({ send: noop, initialized: Object.freeze({ protocolVersion: version }) });
}
/** The options of a stateless request's connection without credentials, by revision: made once each. */
const SESSIONLESS = new Map(SESSION_VERSIONS.map((v) => [v as string, statelessOptions(v)]));
/** … and of an `initialize` request's, which opens uninitialized. */
const UNINITIALIZED: ConnectionOptions = Object.freeze({ send: noop });

/**
 * The connection of one stateless request: opened initialized at `version` (undefined: the request
 * is an `initialize`). Nothing reaches its client outside its own POST.
 */
export function connectStateless(
  server: McpServer,
  version: string | undefined,
  auth: AuthInfo | undefined,
): Connection {
  const options =
    version === undefined ? UNINITIALIZED : (SESSIONLESS.get(version) ?? statelessOptions(version));
  return server.connect(auth ? { ...options, auth } : options);
}

/** What serving a POST's messages needs from the handler: made once, shared by every exchange. */
export interface ExchangeParts {
  server: McpServer;
  /** Bytes of JSON a batch's answers may take; an answer that would pass it becomes an error. */
  maxBatchAnswerBytes: number;
  /** Where a session's streams' events are kept, when they are resumable. */
  store: EventStore | undefined;
  retryMs: number;
  /** Opens an SSE body for the POST `request` of a caller with `auth`. */
  sink(onGone: () => void, request: Request, auth: AuthInfo | undefined): SseWriter;
  /** The `errorStatus` option. */
  errorStatus: ErrorStatus | undefined;
  /** The handler's drain: it keeps the exchange until its answer is out, and cuts it short past its grace. */
  drain: Drain;
}

const NO_IDS: readonly RequestId[] = Object.freeze([]);

function requestIds(message: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const m of Array.isArray(message) ? message : [message]) {
    if (
      isObject(m) &&
      typeof m.method === "string" &&
      (typeof m.id === "string" || typeof m.id === "number")
    ) {
      ids.push(m.id);
    }
  }
  return ids;
}

/** Encodes a message the server sends; one that cannot be serialized is dropped. */
export function encode(message: JsonRpcMessage): string | undefined {
  try {
    return encodeMessage(message);
  } catch {
    return undefined;
  }
}

/** UTF-8 length of a string, without encoding it. */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x800) n += c >= 0xd800 && c <= 0xdbff ? 1 : 2;
    else if (c >= 0x80) n += 1;
  }
  return n;
}

/**
 * Encodes a batch's answers: an answer that would take them past `max` bytes in all becomes a short
 * error that asks for the request on its own, so a small POST cannot make a huge answer, and every
 * request still gets exactly one answer.
 */
function encodeBatch(answers: JsonRpcResponse[], max: number, connection: Connection): string[] {
  let total = 2;
  return answers.map((a) => {
    const text = encodeMessage(a);
    const size = utf8Length(text) + 1;
    if (total + size <= max) {
      total += size;
      return text;
    }
    const error = {
      code: SERVER_ERROR,
      message: `Server error: the batch's answer passed ${max} bytes; send this request on its own`,
    };
    const short = encodeMessage(errorResponse(a.id ?? undefined, error, connection.features));
    total += utf8Length(short) + 1;
    return short;
  });
}

/** The headers of a JSON answer with `headers`. */
function jsonHeaders(headers: { readonly [name: string]: string } | undefined): { [name: string]: string } {
  return { "content-type": "application/json", ...headers };
}

/**
 * Serves one POST on a session's connection, or on a connection of its own (`on`), closed once the
 * answer is out; `auth`: the POST's credentials, frozen. 202 when it holds no request; otherwise it
 * waits for the first of the answer (→ a JSON response) or a related message (→ an SSE response that
 * carries it, later messages, and finally the answer). Over a session a client disconnect is not a
 * cancellation: the events are kept and the client resumes with GET and `Last-Event-ID`.
 */
export function serveExchange(
  parts: ExchangeParts,
  request: Request,
  on: Session | Connection,
  message: unknown,
  auth: AuthInfo | undefined,
): Awaitable<Answer> {
  if (!expectsAnswer(message)) return accept(parts, request, on, message);
  return new PostExchange(parts, request, on, message, auth).run();
}

/** A POST of notifications and answers only: 202 once they are handled. */
function accept(
  parts: ExchangeParts,
  request: Request,
  on: Session | Connection,
  message: unknown,
): Awaitable<Answer> {
  const server = parts.server;
  const session = on instanceof Session ? on : undefined;
  const connection = session ? session.connection : (on as Connection);
  const headers = session ? { "mcp-session-id": session.id } : NONE;
  // without a session the drain keeps its connection (closed past the grace) until it is handled
  const running: Running | undefined = session ? undefined : { connection, cut: noop, slot: -1 };
  if (running) parts.drain.track(running);
  // a server that fails still ends the exchange: its own connection closes
  const done = () => {
    if (!running) return;
    parts.drain.untrack(running);
    connection.close();
  };
  let out: ReturnType<McpServer["handleNow"]>;
  try {
    out = server.handleNow(message, connection, carried(server, request));
  } catch (error) {
    done();
    throw error;
  }
  if (!isPromiseLike(out)) {
    done();
    return new Reply(202, headers, null);
  }
  return out.then(
    () => {
      done();
      return new Reply(202, headers, null);
    },
    (error: unknown) => {
      done();
      throw error;
    },
  );
}

/** One POST that holds requests, from its first message to its one answer (see {@link serveExchange}). */
class PostExchange extends OneExchange implements Exchange {
  readonly #parts: ExchangeParts;
  readonly #request: Request;
  readonly #session: Session | undefined;
  readonly #message: unknown;
  readonly #features: Features;
  /** What closeSseStream finds a session's POST by. */
  readonly #ids: readonly RequestId[];
  /** The POST's credentials, frozen. */
  readonly #auth: AuthInfo | undefined;
  /** Made when the answer turns to SSE: a JSON answer needs no stream. */
  #stream: EventStream | undefined;
  /** Cut short by a drain past its grace. */
  #drained = false;

  constructor(
    parts: ExchangeParts,
    request: Request,
    on: Session | Connection,
    message: unknown,
    auth: AuthInfo | undefined,
  ) {
    const session = on instanceof Session ? on : undefined;
    const connection = session ? session.connection : (on as Connection);
    super(connection, session === undefined, false);
    this.#parts = parts;
    this.#request = request;
    this.#session = session;
    this.#auth = auth;
    this.#message = message;
    this.#features = revision(connection.protocolVersion) ?? DEFAULT_FEATURES;
    this.#ids = session ? requestIds(message) : NO_IDS;
  }

  run(): Awaitable<Answer> {
    const session = this.#session;
    if (session) {
      session.inflight++;
      for (const id of this.#ids) session.exchanges.set(id, this);
    }
    this.#parts.drain.track(this);
    if (this.#auth) this.options.auth = this.#auth;
    // over a session nothing cancels a POST's requests but notifications/cancelled
    return this.start(this.#parts.server, this.#message, this.#request, !session);
  }

  cut(): void {
    this.#drained = true;
    this.finish(undefined);
  }

  disconnect(retryMs: number | undefined): boolean {
    if (this.over || !this.#primed()) return false;
    this.#sse().detach(retryMs);
    return true;
  }

  #primed(): boolean {
    return this.#session !== undefined && this.#parts.store !== undefined && this.#features.ssePriming;
  }

  protected send(m: JsonRpcMessage): void {
    const data = encode(m);
    if (data === undefined || this.over) return;
    this.#sse().write(data);
  }

  #sse(): EventStream {
    if (this.#stream) return this.#stream;
    const parts = this.#parts;
    const session = this.#session;
    const st = session
      ? new EventStream(session.streamPrefix + randomId(12), parts.store, session.id, session.orphaned)
      : new EventStream(randomId(12), undefined);
    this.#stream = st;
    const s = parts.sink(
      () => {
        if (st.sink === s) st.sink = undefined;
        if (session) session.lastActive = Date.now();
        else this.cancel();
      },
      this.#request,
      this.#auth,
    );
    session?.streams.set(st.id, st);
    st.attach(s, this.#primed(), parts.retryMs);
    const headers = session ? { ...SSE_HEADERS, "mcp-session-id": session.id } : SSE_HEADERS;
    this.reply(new Reply(200, headers, s.readable));
    return st;
  }

  protected finish(answer: JsonRpcResponse | JsonRpcResponse[] | undefined): void {
    // cut by a drain already (its handler's end comes after)
    if (this.over) return;
    this.over = true;
    const parts = this.#parts;
    const session = this.#session;
    const message = this.#message;
    parts.drain.untrack(this);
    if (session) {
      session.inflight--;
      session.lastActive = Date.now();
      for (const id of this.#ids) if (session.exchanges.get(id) === this) session.exchanges.delete(id);
    }
    const batch = Array.isArray(answer)
      ? encodeBatch(answer, parts.maxBatchAnswerBytes, this.runsOn)
      : undefined;
    // cancelled by a drain past its grace: every request is told, on its stream when it has one (and
    // in the event store, where a client that resumes elsewhere reads it)
    const cut = this.#drained || (answer === undefined && parts.drain.cut);
    const stream = this.#stream;
    const headers = session ? { "mcp-session-id": session.id } : undefined;
    if (!stream && cut) {
      const ids = requestIds(message);
      this.reply(cutReply(Array.isArray(message) ? ids : ids[0], this.#features));
    } else if (!stream) {
      this.reply(
        batch
          ? new Reply(200, jsonHeaders(headers), `[${batch.join(",")}]`)
          : answerResponse(answer, headers, this.runsOn, mapError(parts.errorStatus, answer, this.#request)),
      );
    } else {
      const texts = cut
        ? requestIds(message).map((id) => cutError(id, this.#features))
        : (batch ?? (answer ? [encodeMessage(answer as JsonRpcResponse)] : []));
      for (const text of texts) stream.write(text);
      const delivered = stream.sink?.open === true;
      stream.finish();
      session?.finished(stream, delivered);
    }
    // its own connection ends with it
    if (!session) this.runsOn.close();
  }
}
