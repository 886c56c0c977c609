/**
 * Streamable HTTP on web standards (`Request`, `Response`, `ReadableStream`, Web Crypto): one
 * `(request) => Promise<Response>` that runs unchanged on Node, Deno, Bun and Workers.
 */
import type { McpServer } from "../server.js";
import { StreamableHttp } from "./handler.js";
import type { HttpHandler, HttpHandlerOptions } from "./options.js";
import { ANSWER, type Answering, toResponse } from "./reply.js";

export type { EventStore, MemoryEventStoreOptions, StoredEvent } from "./event-store.js";
export { MemoryEventStore } from "./event-store.js";
export type { ErrorStatus, HttpHandler, HttpHandlerOptions, HttpLimits } from "./options.js";

/**
 * Serves `server` over Streamable HTTP: POST answers with JSON, or with SSE when the handler sends
 * progress, logs or requests first; GET opens a session's stream; DELETE ends a session.
 * @example
 * const handle = createHttpHandler(server);
 * export default { fetch: handle };
 */
export function createHttpHandler(server: McpServer, options: HttpHandlerOptions = {}): HttpHandler {
  const http = new StreamableHttp(server, options);
  const handler = ((request: Request) => http.handle(request).then(toResponse)) as HttpHandler & Answering;
  // the Node bridge writes the handler's answers as they are, without a Response in between
  handler[ANSWER] = (request) => http.handle(request);
  handler.closeSseStream = (target) => http.closeSseStream(target);
  handler.closeStandaloneStream = (id) => http.closeStandaloneStream(id);
  handler.close = () => http.close();
  Object.defineProperty(handler, "sessionCount", { get: () => http.sessionCount });
  return handler;
}
