import { createServer } from "node:http";
import { McpServer } from "picomcp";
import { createAuthorizationServer, createProtectedHandler } from "picomcp/auth";
import { toNodeListener } from "picomcp/node";
import { RedisAuthStore } from "picomcp/redis";
import { createClient } from "redis";

/** Your own sign-in: the person your session cookie names, or undefined (the sign-in is refused). */
declare function personOf(request: Request): Promise<{ subject: string } | undefined>;

const redis = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
await redis.connect();

// every replica: the same issuer and resources, a store of its own on the same prefix
const authorizationServer = createAuthorizationServer({
  issuer: "https://mcp.example.com",
  resources: ["https://mcp.example.com/mcp"],
  authenticate: personOf,
  store: new RedisAuthStore(redis),
});

const server = new McpServer({ name: "notes", version: "1.0.0" });
server.tool("whoami", {
  description: "Says who signed in",
  run: (_args, ctx) => `Signed in as ${ctx.auth?.subject}`,
});

// the authorization server's routes and the MCP endpoint, from one handler
const handle = createProtectedHandler(server, {
  resource: "https://mcp.example.com/mcp",
  authorizationServer,
});
createServer(toNodeListener(handle)).listen(3000, "127.0.0.1");
