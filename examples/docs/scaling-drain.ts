import { McpServer } from "picomcp";
import { serve } from "picomcp/node";
import { RedisBus, RedisEventStore, RedisSessionStore, RedisTaskStore } from "picomcp/redis";
import { createClient } from "redis";

const stateKey = process.env.MCP_STATE_KEY;
if (!stateKey) throw new Error("MCP_STATE_KEY is not set (make one: openssl rand -base64 32)");
const redis = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
const bus = new RedisBus(redis);
const tasks = new RedisTaskStore(redis);

export const server = new McpServer({
  name: "notes",
  version: "1.0.0",
  bus,
  requestState: { keys: [stateKey] },
  tasks: { store: tasks },
});

server.tool("summarize", {
  description: "Summarizes the notes (a task when the client supports tasks)",
  task: "optional",
  run: async (_args, ctx) => {
    await ctx.task({ statusMessage: "reading the notes" });
    // a drain that runs out of grace aborts this signal: stop early, and say so
    if (ctx.signal.aborted) throw new Error("stopped: the server is shutting down");
    return "Three notes, all about deploys.";
  },
});

await bus.ready;
await tasks.ready;
const http = await serve(server, {
  port: Number(process.env.PORT ?? 3000),
  hostname: "0.0.0.0",
  allowedHosts: ["mcp.example.com"],
  sessions: new RedisSessionStore(redis, { bus }),
  eventStore: new RedisEventStore(redis),
  // GET /healthz: 200 while the process serves; GET /readyz: 200, then 503 once the drain begins
  health: { live: "/healthz", ready: "/readyz" },
});

// the orchestrator sends SIGTERM, and waits terminationGracePeriodSeconds (Kubernetes: 30 s) before SIGKILL
process.once("SIGTERM", async () => {
  // stops accepting, refuses new requests (503, Retry-After), ends the streams so that their clients
  // resume on another replica, and gives requests and tasks in flight 25 s to finish
  await http.close({ graceMs: 25_000 });
  tasks.close();
  bus.close();
  await redis.quit();
  process.exit(0);
});
