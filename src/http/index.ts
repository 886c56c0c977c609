/**
 * Streamable HTTP on web standards (`Request`, `Response`, `ReadableStream`, Web Crypto): one
 * `(request) => Promise<Response>` that runs unchanged on Node, Deno, Bun and Workers.
 */
import type { McpServer } from "../server.js";
import { type Awaitable, isPromiseLike } from "../types.js";
import { StreamableHttp } from "./handler.js";
import type { HttpHandler, HttpHandlerOptions } from "./options.js";
import { ANSWER, type Answer, type Answering, toResponse } from "./reply.js";

export type { ForwardedHeader, TrustProxy } from "./client-address.js";
export { addressKey, ProxyTrust } from "./client-address.js";
export type { EventStore, MemoryEventStoreOptions, StoredEvent } from "./event-store.js";
export { MemoryEventStore } from "./event-store.js";
export type { DrainOptions, ErrorStatus, HttpHandler, HttpHandlerOptions, HttpLimits } from "./options.js";
export { withPeer } from "./request.js";
export type {
  HomeChange,
  SessionCaps,
  SessionChange,
  SessionMessage,
  SessionRecord,
  SessionStore,
} from "./session-store.js";
export { MemorySessionStore } from "./session-store.js";

/**
 * Serves `server` over Streamable HTTP: POST answers with JSON, or with SSE when the handler sends
 * progress, logs or requests first; GET opens a session's stream; DELETE ends a session.
 * @example
 * const handle = createHttpHandler(server);
 * export default { fetch: handle };
 */
export function createHttpHandler(server: McpServer, options: HttpHandlerOptions = {}): HttpHandler {
  const http = new StreamableHttp(server, options);
  const answer = (request: Request): Awaitable<Answer> => {
    if (!server.observer?.refused) return http.handle(request);
    const a = http.handle(request);
    return isPromiseLike(a) ? a.then((x) => refused(server, x)) : refused(server, a);
  };
  const handler = ((request: Request) => {
    try {
      const a = answer(request);
      return isPromiseLike(a) ? a.then(toResponse) : Promise.resolve(toResponse(a));
    } catch (error) {
      return Promise.reject(error);
    }
  }) as HttpHandler & Answering;
  // the Node bridge writes the handler's answers as they are, without a Response in between
  handler[ANSWER] = answer;
  handler.closeSseStream = (target) => http.closeSseStream(target);
  handler.closeStandaloneStream = (id) => http.closeStandaloneStream(id);
  handler.close = () => http.close();
  handler.drain = (o) => http.drain(o);
  Object.defineProperty(handler, "sessionCount", { get: () => http.sessionCount });
  Object.defineProperty(handler, "draining", { get: () => http.draining });
  return handler;
}

/** The refusals at a limit, by status: what an observer (telemetry) counts. */
const LIMITS: { readonly [status: number]: string } = {
  413: "payload_too_large",
  429: "too_many_requests",
  503: "service_unavailable",
};

function refused(server: McpServer, answer: Answer): Answer {
  const reason = LIMITS[answer.status];
  if (reason !== undefined) server.observer?.refused?.(reason, "tcp");
  return answer;
}
