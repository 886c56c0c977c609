// picomcp/otel's `redis` option: the counters of picomcp/redis stores (a real RedisBus and RedisRateStore
// on a real redis-server) as observable metrics, by the name each is given; failures by reason; the
// ready gauge following an outage; and the stores observed no more once the registration is removed.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METRICS } from "../../src/otel/index.js";
import { RedisBus, RedisRateStore } from "../../src/redis/index.js";
import { McpServer } from "../../src/server.js";
import { points, telemetry } from "../otel-helpers.js";
import { RUN, until, useRedis, withRedis } from "../redis-helpers.js";

let redis: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  if (withRedis) redis = await useRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const bucket = { key: "all principal:a", group: "principal:a", capacity: 5, perMs: 0.001 };

describe.runIf(withRedis)("picomcp/otel: the Redis stores' counters", () => {
  it("observes each store by its name: calls, failures by reason, outages, ready", async () => {
    const client = createClient({ url: redis.url });
    const lines: string[] = [];
    const bus = new RedisBus(client, { channel: `${RUN}:otel`, log: (l) => lines.push(l) });
    await bus.ready;
    const rates = new RedisRateStore(client, { prefix: `${RUN}:otel:`, log: (l) => lines.push(l) });
    expect(await rates.take([bucket])).toBe(0);
    const server = new McpServer({ name: "t", version: "1.0.0", bus });
    const t = telemetry(server, { redis: { bus, rates } });
    const metrics = await t.metrics();
    const sorted = (name: string) =>
      points(metrics, name).sort((a, b) =>
        JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes)),
      );
    expect(sorted(METRICS.redisReady)).toEqual([
      { attributes: { "picomcp.redis.store": "bus" }, value: 1 },
      { attributes: { "picomcp.redis.store": "rates" }, value: 1 },
    ]);
    expect(points(metrics, METRICS.redisCalls)).toContainEqual({
      attributes: { "picomcp.redis.store": "rates" },
      value: 1,
    });
    expect(
      sorted(METRICS.redisFailures).filter((p) => p.attributes["picomcp.redis.store"] === "rates"),
    ).toEqual(
      ["error", "refused", "timeout"].map((reason) => ({
        attributes: { "picomcp.redis.store": "rates", "error.type": reason },
        value: 0,
      })),
    );
    // the connection goes: a take is refused at once (and counted here, in memory), the store is down
    client.destroy();
    expect(await rates.take([bucket])).toBe(0);
    const after = await t.metrics();
    const of = (name: string, store: string) =>
      points(after, name).filter((p) => p.attributes["picomcp.redis.store"] === store);
    expect(of(METRICS.redisReady, "rates")).toEqual([
      { attributes: { "picomcp.redis.store": "rates" }, value: 0 },
    ]);
    expect(of(METRICS.redisOutages, "rates")).toEqual([
      { attributes: { "picomcp.redis.store": "rates" }, value: 1 },
    ]);
    expect(of(METRICS.redisFailures, "rates")).toContainEqual({
      attributes: { "picomcp.redis.store": "rates", "error.type": "refused" },
      value: 1,
    });
    expect(of(METRICS.redisCalls, "rates")).toEqual([
      { attributes: { "picomcp.redis.store": "rates" }, value: 1 },
    ]);
    bus.close();
    // turned off: the stores are observed no more (a cumulative reader keeps what it had)
    t.registration.remove();
    expect(await rates.take([bucket])).toBe(0);
    expect(rates.stats.refused).toBe(2);
    const off = await t.metrics();
    expect(points(off, METRICS.redisFailures)).toContainEqual({
      attributes: { "picomcp.redis.store": "rates", "error.type": "refused" },
      value: 1,
    });
    await until(() => lines.length > 0, 5_000, "the outage line");
  });
});

describe("picomcp/otel: the redis option", () => {
  it("refuses at instrument() what is not a store, naming it", () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    expect(() => telemetry(server, { redis: { cache: {} as never } })).toThrow(
      "instrument: redis.cache is not a picomcp/redis store (it has no stats)",
    );
  });
});
