import { McpServer } from "picomcp";
import { instrument } from "picomcp/otel";
import { RedisBus, RedisRateStore } from "picomcp/redis";
import { createClient } from "redis";

const redis = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
const bus = new RedisBus(redis);
const rates = new RedisRateStore(redis);

export const server = new McpServer({
  name: "notes",
  version: "1.0.0",
  bus,
  limits: { rates: { methods: { "tools/call": { perMinute: 60 } }, store: rates } },
});

// picomcp.redis.calls, .failures, .outages and .ready: one series per store, picomcp.redis.store="bus" or "rates"
instrument(server, { redis: { bus, rates } });
