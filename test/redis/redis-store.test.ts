// RedisEventStore against a real redis-server: events in order for any instance, bounded and
// expiring; an HTTP session resumes from it; while Redis is down it keeps nothing and never rejects.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisEventStore } from "../../src/redis/index.js";
import { call, initialize, post, readEvents, request, useTestServers } from "../http-helpers.js";
import { freePort, RUN, startRedis, until, useRedis, withRedis, withRedisServer } from "../redis-helpers.js";

let url: string;
let redis: { url: string; stop(): Promise<void> };
const clients: { destroy(): void }[] = [];
const setup = useTestServers();

async function connected() {
  const client = createClient({ url });
  client.on("error", () => {});
  clients.push(client);
  await client.connect();
  return client;
}

// without a Redis (and outside CI) these tests are skipped: test/redis-setup.ts says so once
beforeAll(async () => {
  if (!withRedis) return;
  redis = await useRedis();
  url = redis.url;
});

afterAll(async () => {
  for (const c of clients) c.destroy();
  await redis?.stop();
});

describe.runIf(withRedis)("RedisEventStore", () => {
  it("keeps a stream's last events in order for every instance, expiring, until dropped", async () => {
    const [one, other] = [await connected(), await connected()];
    // a Redis that REDIS_URL names may serve other runs too: this run's keys have a prefix of their own
    const prefix = `picomcp:events:${RUN}:`;
    const a = new RedisEventStore(one, { maxEventsPerStream: 3, ttlMs: 60_000, prefix });
    const b = new RedisEventStore(other, { maxEventsPerStream: 3, prefix });
    for (let seq = 1; seq <= 5; seq++) await a.append("s1", seq, `{"n":${seq},"text":"a b\\nc"}`);
    expect(await b.after("s1", 0)).toEqual(
      [3, 4, 5].map((n) => ({ seq: n, data: `{"n":${n},"text":"a b\\nc"}` })),
    );
    expect(await b.after("s1", 4)).toEqual([{ seq: 5, data: '{"n":5,"text":"a b\\nc"}' }]);
    const ttl = await one.pTTL(`${prefix}s1`);
    expect(ttl > 0 && ttl <= 60_000).toBe(true);
    const big = new RedisEventStore(other, { maxEventChars: 10, prefix });
    await big.append("s2", 1, "0123456789");
    await big.append("s2", 2, "0123456789A");
    expect(await a.after("s2", 0)).toEqual([{ seq: 1, data: "0123456789" }]);
    await b.drop("s1");
    expect(await a.after("s1", 0)).toEqual([]);
    expect(await one.exists(`${prefix}s1`)).toBe(0);
  });

  it("serves an HTTP session's resumption: the result missed on a closed POST stream comes from Redis", async () => {
    const client = await connected();
    const { handler } = setup({
      eventStore: new RedisEventStore(client, { prefix: `picomcp:http:${RUN}:` }),
    });
    const sid = await initialize(handler);
    const events = await readEvents(await post(handler, call(9, "reconnect"), { "mcp-session-id": sid }));
    const id = events[0]!.id!;
    const stream = id.split(".")[0]!;
    const kept = async () => client.lRange(`picomcp:http:${RUN}:${stream}`, 0, -1);
    await until(async () => (await kept()).length > 0, 15_000, "the event in Redis");
    expect(await kept()).toEqual([
      '1 {"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"closed=true"}]}}',
    ]);
    const resumed = await request(handler, "GET", {
      accept: "text/event-stream",
      "mcp-session-id": sid,
      "last-event-id": id,
    });
    expect(await readEvents(resumed)).toEqual([
      {
        id: `${stream}.1`,
        data: '{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"closed=true"}]}}',
      },
    ]);
  });

  // it stops a redis-server of its own: not one that REDIS_URL names
  it.runIf(withRedisServer)(
    "while Redis is down keeps nothing, finds nothing, never rejects, and says so once",
    async () => {
      const port = await freePort();
      let down = await startRedis(port);
      const client = createClient({ url: `redis://127.0.0.1:${port}` });
      clients.push(client);
      const lines: string[] = [];
      const store = new RedisEventStore(client, { log: (l) => lines.push(l) });
      await client.connect();
      await store.append("s", 1, "kept");
      await down.stop();
      // the client learns of the loss from its socket: until then a command waits for its timeout
      await until(() => !client.isReady, 15_000, "the client to see Redis gone");
      await store.append("s", 2, "lost");
      expect(await store.after("s", 0)).toEqual([]);
      await store.drop("s");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^picomcp\/redis: Redis is unreachable \(.+\); SSE events are delivered live but not kept until it is back$/,
      );
      down = await startRedis(port);
      try {
        await until(() => client.isReady, 15_000, "the client to be back");
        // back once a call answers after the failures stopped (for a deadline)
        await until(
          async () => (await store.after("s", 0)).length === 0 && lines.length === 2,
          15_000,
          "the store to be back",
        );
        // a fresh server: what was kept before is gone with it (no persistence), what comes now is kept
        await store.append("s", 3, "again");
        expect(await store.after("s", 0)).toEqual([{ seq: 3, data: "again" }]);
        expect(lines).toEqual([lines[0], "picomcp/redis: Redis is back; SSE events are kept again"]);
      } finally {
        client.destroy();
        await down.stop();
      }
    },
    40_000,
  );
  // it pauses the Redis of this file: not one that REDIS_URL names
  it.runIf(withRedisServer)(
    "answers within its deadline while Redis does not (paused): nothing found, one line each way",
    async () => {
      const [client, admin] = [await connected(), await connected()];
      const lines: string[] = [];
      const store = new RedisEventStore(client, {
        prefix: `${RUN}:paused:`,
        timeoutMs: 200,
        log: (l) => lines.push(l),
      });
      await store.append("s", 1, "kept");
      await admin.sendCommand(["CLIENT", "PAUSE", "60000", "WRITE"]);
      try {
        const start = performance.now();
        await store.append("s", 2, "lost");
        // the read waits behind the append (one stream's calls keep their order), each within its deadline
        expect(await store.after("s", 0)).toEqual([]);
        expect(performance.now() - start).toBeLessThan(2 * 200 + 2000);
        expect(store.stats).toMatchObject({ ready: false, outages: 1 });
        expect(store.stats.timeouts).toBeGreaterThanOrEqual(1);
        expect(lines).toEqual([
          "picomcp/redis: Redis is unreachable (picomcp/redis: Redis did not answer within 200 ms); SSE events are delivered live but not kept until it is back",
        ]);
      } finally {
        await admin.sendCommand(["CLIENT", "UNPAUSE"]);
      }
      await until(
        async () => (await store.after("s", 0)).length > 0 && store.stats.ready,
        10_000,
        "the store to be back",
      );
      expect(lines[1]).toBe("picomcp/redis: Redis is back; SSE events are kept again");
    },
    20_000,
  );
});
