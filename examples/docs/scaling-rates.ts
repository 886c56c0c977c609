import { McpServer } from "picomcp";
import { serve } from "picomcp/node";
import { RedisRateStore } from "picomcp/redis";
import { createClient } from "redis";

const redis = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
await redis.connect();

const server = new McpServer({
  name: "search",
  version: "1.0.0",
  limits: {
    rates: {
      tools: { search: { perMinute: 60, burst: 10 } },
      // every replica takes from the same buckets: a caller has one budget, not one per replica
      store: new RedisRateStore(redis),
    },
  },
});

server.tool("search", { description: "Searches", run: () => "results" });

await serve(server, { port: 3000 });
