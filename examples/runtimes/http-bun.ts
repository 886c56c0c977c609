import { McpServer } from "picomcp";
import { createHttpHandler, withPeer } from "picomcp/http";

const server = new McpServer({ name: "greeter", version: "1.0.0" });

server.tool("greet", {
  description: "Greets someone by name",
  input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  run: ({ name }) => `Hello, ${name}!`,
});

const mcp = createHttpHandler(server);
const http = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 3000), // 0 picks a free port
  idleTimeout: 0, // Bun closes connections idle for 10 s by default; SSE streams are quiet for longer
  // withPeer: anonymous callers are told apart by their address, as picomcp/node does by itself
  fetch: (req, srv) =>
    new URL(req.url).pathname === "/mcp"
      ? mcp(withPeer(req, srv.requestIP(req)?.address))
      : new Response("Not Found", { status: 404 }),
});
console.error(`MCP server at ${new URL("/mcp", http.url)}`);
