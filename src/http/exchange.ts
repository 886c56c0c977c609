/** One POST that carries requests: answered with JSON, or with SSE once a related message comes first. */
import type { Connection } from "../connection.js";
import { DEFAULT_FEATURES } from "../eras/versions.js";
import { encodeMessage, expectsAnswer } from "../jsonrpc.js";
import type { McpServer } from "../server.js";
import type { JsonRpcMessage, JsonRpcResponse, RequestId } from "../types.js";
import type { EventStore } from "./event-store.js";
import { answerResponse, randomId } from "./guard.js";
import { EventStream, type Exchange, type Session } from "./session.js";
import { SSE_HEADERS, type SseWriter } from "./sse.js";

/** What {@link serveExchange} needs from the handler. */
export interface ExchangeOptions {
  server: McpServer;
  connection: Connection;
  /** The session, or undefined in stateless mode. */
  session: Session | undefined;
  message: unknown;
  /** Stateless mode: the client went away (nobody can resume, so the request is cancelled). */
  signal: AbortSignal | undefined;
  /** Where the stream's events are kept, when it is resumable. */
  store: EventStore | undefined;
  retryMs: number;
  /** Opens an SSE body. */
  sink(onGone: () => void): SseWriter;
  /** Called once the exchange is over. */
  done(): void;
}

function isObject(v: unknown): v is { [key: string]: unknown } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

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

/**
 * Serves one POST: 202 when it holds no request; otherwise it waits for the first of the answer
 * (→ a JSON response) or a related message (→ an SSE response that carries it, later messages,
 * and finally the answer). Over a session a client disconnect is not a cancellation: the events
 * are kept and the client resumes with GET and `Last-Event-ID`.
 */
export async function serveExchange(o: ExchangeOptions): Promise<Response> {
  const { server, connection, session, message } = o;
  const headers: { [name: string]: string } = session ? { "mcp-session-id": session.id } : {};
  if (!expectsAnswer(message)) {
    await server.handle(message, connection);
    o.done();
    return new Response(null, { status: 202, headers });
  }
  const abort = new AbortController();
  const signal = o.signal;
  if (signal?.aborted) abort.abort();
  else signal?.addEventListener("abort", () => abort.abort(), { once: true });
  const version = connection.protocolVersion ?? DEFAULT_FEATURES.version;
  const prime = session !== undefined && o.store !== undefined && version >= "2025-11-25";
  const stream = new EventStream(randomId(12), o.store);
  const ids = requestIds(message);
  if (session) session.inflight++;
  return new Promise<Response>((resolve) => {
    let sink: SseWriter | undefined;
    const toSse = () => {
      if (sink) return;
      const s = o.sink(() => {
        if (stream.sink === s) stream.sink = undefined;
        if (session) session.lastActive = Date.now();
        else abort.abort();
      });
      sink = s;
      session?.streams.set(stream.id, stream);
      stream.attach(s, prime, o.retryMs);
      resolve(new Response(s.readable, { status: 200, headers: { ...SSE_HEADERS, ...headers } }));
    };
    const exchange: Exchange = {
      disconnect: (retryMs) => {
        if (!prime || stream.done) return false;
        toSse();
        stream.detach(retryMs);
        return true;
      },
    };
    for (const id of ids) session?.exchanges.set(id, exchange);
    const send = (m: JsonRpcMessage) => {
      const data = encode(m);
      if (data === undefined || stream.done) return;
      toSse();
      stream.write(data);
    };
    const finish = (answer: JsonRpcResponse | JsonRpcResponse[] | undefined) => {
      if (session) {
        session.inflight--;
        session.lastActive = Date.now();
        for (const id of ids) if (session.exchanges.get(id) === exchange) session.exchanges.delete(id);
      }
      if (!sink) {
        stream.done = true;
        resolve(answerResponse(answer, headers, connection));
      } else {
        for (const a of Array.isArray(answer) ? answer : answer ? [answer] : [])
          stream.write(encodeMessage(a));
        const delivered = stream.sink?.open === true;
        stream.finish();
        session?.finished(stream, delivered);
      }
      o.done();
    };
    server.handle(message, connection, { send, signal: abort.signal }).then(finish, () => finish(undefined));
  });
}
