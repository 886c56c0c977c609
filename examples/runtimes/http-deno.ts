import { McpServer } from "npm:picomcp";
import { createHttpHandler, withPeer } from "npm:picomcp/http";

const server = new McpServer({ name: "greeter", version: "1.0.0" });

server.tool("greet", {
  description: "Greets someone by name",
  input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  run: ({ name }) => `Hello, ${name}!`,
});

const mcp = createHttpHandler(server);
Deno.serve(
  {
    hostname: "127.0.0.1",
    port: Number(Deno.env.get("PORT") ?? 3000), // 0 picks a free port
    onListen: ({ port }) => console.error(`MCP server at http://127.0.0.1:${port}/mcp`),
  },
  // withPeer: anonymous callers are told apart by their address, as picomcp/node does by itself
  (req, info) =>
    new URL(req.url).pathname === "/mcp"
      ? mcp(withPeer(req, info.remoteAddr.hostname))
      : new Response("Not Found", { status: 404 }),
);
