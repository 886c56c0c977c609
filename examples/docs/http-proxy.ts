import { McpServer } from "picomcp";
import { serve } from "picomcp/node";

const server = new McpServer({ name: "public-docs", version: "1.0.0" });

server.tool("whoami", {
  description: "The address this request came from, as the server sees it",
  run: (_args, ctx) => ctx.clientAddress ?? "unknown",
});

// behind ONE reverse proxy (nginx, a cloud balancer, an ingress) that appends the address it saw to
// X-Forwarded-For; the proxy reaches this process on a private network, so listen on it
await serve(server, {
  port: Number(process.env.PORT ?? 3000),
  hostname: "0.0.0.0",
  allowedHosts: ["mcp.example.com"],
  trustProxy: 1, // or the proxies' addresses: ["10.0.0.0/8"]; { hops: 1, header: "forwarded" } for RFC 7239
});
