import { McpServer } from "picomcp";
import { serve } from "picomcp/node";
import { RedisBus, RedisEventStore, RedisSessionStore } from "picomcp/redis";
import { createClient } from "redis";

// the request-state key: a secret made once (`openssl rand -base64 32`), the same in every replica
const stateKey = process.env.MCP_STATE_KEY;
if (!stateKey) throw new Error("MCP_STATE_KEY is not set (make one: openssl rand -base64 32)");
const redis = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
const bus = new RedisBus(redis);

export const server = new McpServer({
  name: "notes",
  version: "1.0.0",
  bus,
  requestState: { keys: [stateKey] },
});

server.tool("ask_name", {
  description: "Asks the user's name (the answer may reach any replica)",
  run: async (_args, ctx) => {
    const answer = await ctx.elicit({
      message: "Your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    return answer.action === "accept" ? `Hello, ${answer.content?.name}` : "No name given";
  },
});

await bus.ready;
await serve(server, {
  port: Number(process.env.PORT ?? 3000),
  hostname: "0.0.0.0", // behind the balancer, on a network only it reaches
  allowedHosts: ["mcp.example.com"],
  // every replica serves every 2025 session: its record in Redis, its messages on the bus
  sessions: new RedisSessionStore(redis, { bus }),
  // and resumes any stream from Last-Event-ID
  eventStore: new RedisEventStore(redis),
});
