import { McpServer } from "picomcp";
import { serve } from "picomcp/node";
import { RedisTaskStore } from "picomcp/redis";
import { createClient } from "redis";

const redis = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
await redis.connect();
// one store per instance, all on the same prefix: any instance serves any task request
const store = new RedisTaskStore(redis, { leaseMs: 30_000, renewMs: 10_000 });

const server = new McpServer({ name: "reports", version: "1.0.0", tasks: { store } });

server.tool("build_report", {
  description: "Builds the quarterly report (takes a while)",
  task: "required",
  run: async (_args, ctx) => {
    await ctx.task({ statusMessage: "collecting figures" });
    // answered by tasks/update through whichever instance the balancer picks
    const ok = await ctx.elicit(
      { message: "Publish the report?", requestedSchema: { type: "object", properties: {} } },
      { key: "approve" },
    );
    return ok.action === "accept" ? "published" : "kept as a draft";
  },
});

await store.ready; // heard by the other instances from here on
await serve(server, { port: 3000 });
