/** One POST that carries requests: answered with JSON, or with SSE once a related message comes first. */
import type { AuthInfo, Connection, ConnectionOptions } from "../connection.js";
import type { HandleOptions } from "../dispatch/envelope.js";
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
import { cutError, cutReply } from "./drain.js";
import type { EventStore } from "./event-store.js";
import { EventStream } from "./event-stream.js";
import type { ErrorStatus } from "./options.js";
import { type Answer, Reply } from "./reply.js";
import { whenGone } from "./request.js";
import type { Exchange, Session } from "./session.js";
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

/** What {@link serveExchange} needs from the handler. */
export interface ExchangeOptions {
  server: McpServer;
  connection: Connection;
  /** The session, or undefined in stateless mode. */
  session: Session | undefined;
  message: unknown;
  /** This POST's credentials, frozen. */
  auth: AuthInfo | undefined;
  /** Bytes of JSON a batch's answers may take; an answer that would pass it becomes an error. */
  maxBatchAnswerBytes: number;
  /** Where the stream's events are kept, when it is resumable. */
  store: EventStore | undefined;
  retryMs: number;
  /** Opens an SSE body for the POST `request` of a caller with `auth` (one function for every POST, made once). */
  sink(onGone: () => void, request: Request, auth: AuthInfo | undefined): SseWriter;
  /** Called once the exchange is over. */
  done(): void;
  /** The POST: for the `errorStatus` hook, and to hear that its client went away (without a session nobody can resume, so that cancels it). */
  request: Request;
  /** The `errorStatus` option. */
  errorStatus: ErrorStatus | undefined;
  /** Whether a drain has cancelled what still ran: a request it cut short is told so. */
  shut?: () => boolean;
  /** What a drain calls past its grace, before it closes the streams: the exchange answers with the cut error at once. */
  cuts?: Set<() => void>;
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

/**
 * Cancels what a connection of its own runs for a client that went away, as aborting a signal
 * given with `options` would (an `AbortError`), without a signal made for the many that stay: the
 * requests running are aborted, and one still on its way to its handler (past an await, not yet
 * registered) finds the aborted signal that dispatch looks at before it starts.
 */
export function cancelRequests(connection: Connection, options: HandleOptions): void {
  const reason = new DOMException("This operation was aborted", "AbortError");
  options.signal = AbortSignal.abort(reason);
  connection.inflight.abortEach(reason);
}

/** The headers of a JSON answer with `headers`. */
function jsonHeaders(headers: { readonly [name: string]: string } | undefined): { [name: string]: string } {
  return { "content-type": "application/json", ...headers };
}

/**
 * Serves one POST: 202 when it holds no request; otherwise it waits for the first of the answer
 * (→ a JSON response) or a related message (→ an SSE response that carries it, later messages,
 * and finally the answer). Over a session a client disconnect is not a cancellation: the events
 * are kept and the client resumes with GET and `Last-Event-ID`.
 */
export function serveExchange(o: ExchangeOptions): Awaitable<Answer> {
  const { server, connection, session, message } = o;
  const headers = session ? { "mcp-session-id": session.id } : undefined;
  if (!expectsAnswer(message)) {
    const accepted = () => {
      o.done();
      return new Reply(202, headers ?? NONE, null);
    };
    const out = server.handleNow(message, connection, carried(server, o.request));
    // a server that fails still ends the exchange: its count and its drain's hold come back
    const failed = (error: unknown) => {
      o.done();
      throw error;
    };
    return isPromiseLike(out) ? out.then(accepted, failed) : accepted();
  }
  const features = revision(connection.protocolVersion) ?? DEFAULT_FEATURES;
  const prime = session !== undefined && o.store !== undefined && features.ssePriming;
  // what closeSseStream finds a session's POST by
  const ids = session ? requestIds(message) : NO_IDS;
  if (session) session.inflight++;
  // made when the answer turns to SSE: a JSON answer needs no stream
  let stream: EventStream | undefined;
  let over = false;
  let cancelled = false;
  // the answer, once there is one (the SSE stream's, from the first related message on)
  const settled = new OneAnswer();
  const reply = (a: Answer) => settled.give(a);
  // over a session nothing cancels a POST's requests but notifications/cancelled
  const cancel = () => {
    if (cancelled || over) return;
    cancelled = true;
    cancelRequests(connection, options);
  };
  const toSse = (): EventStream => {
    if (stream) return stream;
    const st = session
      ? new EventStream(session.streamPrefix + randomId(12), o.store, session.id, session.orphaned)
      : new EventStream(randomId(12), o.store);
    stream = st;
    const s = o.sink(
      () => {
        if (st.sink === s) st.sink = undefined;
        if (session) session.lastActive = Date.now();
        else cancel();
      },
      o.request,
      o.auth,
    );
    session?.streams.set(st.id, st);
    st.attach(s, prime, o.retryMs);
    reply(new Reply(200, headers ? { ...SSE_HEADERS, ...headers } : SSE_HEADERS, s.readable));
    return st;
  };
  const exchange: Exchange = {
    disconnect: (retryMs) => {
      if (!prime || over) return false;
      toSse().detach(retryMs);
      return true;
    },
  };
  for (const id of ids) session?.exchanges.set(id, exchange);
  const send = (m: JsonRpcMessage) => {
    const data = encode(m);
    if (data === undefined || over) return;
    toSse().write(data);
  };
  const finish = (answer: JsonRpcResponse | JsonRpcResponse[] | undefined, drained = false) => {
    // cut by a drain already (its handler's end comes after)
    if (over) return;
    over = true;
    o.cuts?.delete(cutNow);
    if (session) {
      session.inflight--;
      session.lastActive = Date.now();
      for (const id of ids) if (session.exchanges.get(id) === exchange) session.exchanges.delete(id);
    }
    const batch = Array.isArray(answer) ? encodeBatch(answer, o.maxBatchAnswerBytes, connection) : undefined;
    // cancelled by a drain past its grace: every request is told, on its stream when it has one (and
    // in the event store, where a client that resumes elsewhere reads it)
    const cut = drained || (answer === undefined && o.shut?.() === true);
    if (!stream && cut) {
      const ids = requestIds(message);
      reply(cutReply(Array.isArray(message) ? ids : ids[0], features));
    } else if (!stream) {
      reply(
        batch
          ? new Reply(200, jsonHeaders(headers), `[${batch.join(",")}]`)
          : answerResponse(answer, headers, connection, mapError(o.errorStatus, answer, o.request)),
      );
    } else {
      const texts = cut
        ? requestIds(message).map((id) => cutError(id, features))
        : (batch ?? (answer ? [encodeMessage(answer as JsonRpcResponse)] : []));
      for (const text of texts) stream.write(text);
      const delivered = stream.sink?.open === true;
      stream.finish();
      session?.finished(stream, delivered);
    }
    o.done();
  };
  const cutNow = () => finish(undefined, true);
  o.cuts?.add(cutNow);
  const options: HandleOptions = { send };
  if (server.observer) options.carrier = o.request;
  // a client already gone: nothing runs, as for an aborted signal
  if (!session && whenGone(o.request, cancel)) options.signal = AbortSignal.abort();
  if (o.auth) options.auth = o.auth;
  runNow(server, message, connection, options, finish);
  return settled.get();
}

/** The one answer of an exchange: the first one given, returned as it is when it came at once. */
export class OneAnswer {
  #answered: Answer | undefined;
  #late: ((answer: Answer) => void) | undefined;

  give(answer: Answer): void {
    if (this.#answered) return;
    this.#answered = answer;
    this.#late?.(answer);
  }

  get(): Awaitable<Answer> {
    return this.#answered ?? new Promise<Answer>((resolve) => (this.#late = resolve));
  }
}

/**
 * Runs `message` through `handleNow` and calls `finish` with what it answers: at once when the handler
 * is synchronous, after it otherwise; a handler that throws finishes with no answer.
 */
export function runNow(
  server: McpServer,
  message: unknown,
  connection: Connection,
  options: HandleOptions,
  finish: (answer: JsonRpcResponse | JsonRpcResponse[] | undefined) => void,
): void {
  let out: ReturnType<McpServer["handleNow"]>;
  try {
    out = server.handleNow(message, connection, options);
  } catch {
    out = undefined;
  }
  if (isPromiseLike(out)) out.then(finish, () => finish(undefined));
  else finish(out);
}
