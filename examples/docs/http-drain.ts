import { McpServer } from "picomcp";
import { createHttpHandler } from "picomcp/http";

const server = new McpServer({ name: "search", version: "1.0.0" });
server.tool("search", {
  description: "Searches the docs",
  input: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  run: ({ q }) => `no results for ${q}`,
});

const handler = createHttpHandler(server);

/** The runtime's fetch handler (Bun.serve, Deno.serve, a Worker's fetch): MCP, and readiness for the balancer. */
export function fetch(request: Request): Promise<Response> | Response {
  if (new URL(request.url).pathname === "/readyz") {
    return new Response(handler.draining ? '{"status":"draining"}' : '{"status":"ok"}', {
      status: handler.draining ? 503 : 200,
      headers: { "content-type": "application/json", "cache-control": "no-store" },
    });
  }
  return handler(request);
}

/** Call it on the runtime's shutdown signal, then stop the runtime's server once it resolves. */
export function shutdown(): Promise<void> {
  return handler.drain({ graceMs: 25_000 });
}
