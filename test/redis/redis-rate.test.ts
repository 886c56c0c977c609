// RedisRateStore against a real redis-server: two picomcp processes share each caller's budget (a
// caller spends it on one instance and is refused on the other), callers keep budgets of their own,
// and while Redis is down each instance counts on its own, saying so once; a caller's buckets share a slot.
import { fileURLToPath } from "node:url";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/limits/rate.js";
import { RedisRateStore } from "../../src/redis/index.js";
import { slotOf } from "../../src/redis/link.js";
import {
  freePort,
  type Instance,
  startInstance,
  startRedis,
  until,
  withRedisServer,
} from "../redis-helpers.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/rate-instance.js", import.meta.url));
const V = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
};

let redis: { stop(): Promise<void> } | undefined;
/** Stops redis-server once (its helper would wait forever for a second exit). */
async function stopRedis(): Promise<void> {
  const r = redis;
  redis = undefined;
  await r?.stop();
}
let shared: Instance[] = [];
let alone: Instance[] = [];

beforeAll(async () => {
  // no redis-server (and not required): skipped, as test/redis-setup.ts says in one line
  if (!withRedisServer) return;
  const port = await freePort();
  redis = await startRedis(port);
  const env = { REDIS_URL: `redis://127.0.0.1:${port}` };
  shared = await Promise.all([startInstance("A", env, FIXTURE), startInstance("B", env, FIXTURE)]);
  alone = await Promise.all([startInstance("C", {}, FIXTURE), startInstance("D", {}, FIXTURE)]);
}, 30_000);

afterAll(async () => {
  if (!withRedisServer) return;
  await Promise.all([...shared, ...alone].map((i) => i.stop()));
  await stopRedis();
});

let nextId = 1;
async function echo(instance: Instance, who: string) {
  const id = nextId++;
  const res = await fetch(instance.url, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      authorization: `Bearer ${who}`,
      "mcp-protocol-version": V,
      "mcp-method": "tools/call",
      "mcp-name": "echo",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "echo", arguments: {}, _meta: META },
    }),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() };
}

describe.skipIf(!withRedisServer)("RedisRateStore: one budget per caller across replicas", () => {
  it("alice spends her burst of 3 on A and B, and is refused on either; bob still has his", async () => {
    const [a, b] = shared as [Instance, Instance];
    expect((await echo(a, "alice")).body.result.content[0].text).toBe("A");
    expect((await echo(b, "alice")).body.result.content[0].text).toBe("B");
    expect((await echo(a, "alice")).status).toBe(200);
    const refused = await echo(b, "alice");
    expect([refused.status, refused.retryAfter]).toEqual([
      429,
      String(Math.ceil(refused.body.error.data.retryAfterMs / 1000)),
    ]);
    expect(refused.body).toEqual({
      jsonrpc: "2.0",
      id: refused.body.id,
      error: {
        code: -32000,
        message: "Too Many Requests: this caller's rate of tools/call is spent",
        data: {
          limit: "rate",
          scope: "principal",
          max: 3,
          retryAfterMs: expect.any(Number),
          rules: ["tools/call"],
        },
      },
    });
    expect(refused.body.error.data.retryAfterMs).toBeGreaterThan(50_000);
    expect((await echo(a, "alice")).status).toBe(429);
    expect((await echo(b, "bob")).status).toBe(200);
  });

  it("without the shared store each instance has a budget of its own (what Redis fixes)", async () => {
    const [c, d] = alone as [Instance, Instance];
    for (let i = 0; i < 3; i++) expect((await echo(c, "alice")).status).toBe(200);
    expect((await echo(c, "alice")).status).toBe(429);
    expect((await echo(d, "alice")).status).toBe(200);
  });

  it("while Redis is down each instance counts on its own, and says so once", async () => {
    const [a] = shared as [Instance];
    await stopRedis();
    const first = await echo(a, "carol");
    expect(first.status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await echo(a, "carol")).status).toBe(200);
    expect((await echo(a, "carol")).status).toBe(429);
    const lines = a.stderr.split("\n").filter((l) => l.startsWith("picomcp/redis:"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^picomcp\/redis: Redis is unreachable \(.+\); each instance counts rate limits on its own until it is back$/,
    );
  });
});

describe.skipIf(!withRedisServer)("RedisRateStore: a caller's buckets in one slot", () => {
  it("keys each bucket <prefix>{<caller>}:<rule>, a request's all in the caller's slot; a prefix's own tag still works", async () => {
    const port = await freePort();
    const server = await startRedis(port);
    const client = createClient({ url: `redis://127.0.0.1:${port}` });
    client.on("error", () => {});
    await client.connect();
    try {
      for (const prefix of ["rate:", "{app}:rate:"]) {
        const store = new RedisRateStore(client, { prefix });
        const limiter = new RateLimiter({
          all: { perMinute: 60 },
          methods: { "tools/call": { perMinute: 60 } },
          tools: { echo: { perMinute: 2 } },
          store,
        });
        for (let i = 0; i < 2; i++)
          expect(await limiter.admit("principal:alice", "tools/call", { name: "echo" })).toBeUndefined();
        // the tool's bucket is spent: refused, and the other two not taken from (all or none)
        expect(await limiter.admit("principal:alice", "tools/call", { name: "echo" })).toBeDefined();
        const keys = (await client.keys(`${prefix}*`)).sort();
        expect(keys).toEqual(
          ["all", "tools/call", "tools/call:echo"].map((rule) => `${prefix}{principal:alice}:${rule}`),
        );
        expect(new Set(keys.map(slotOf)).size).toBe(1);
        expect(Math.floor(Number(await client.hGet(`${prefix}{principal:alice}:all`, "tokens")))).toBe(58);
        expect(store.stats).toMatchObject({ ready: true, calls: 3, failures: 0 });
      }
      // a bucket without a caller keeps its key as it is
      const plain = new RedisRateStore(client, { prefix: "plain:" });
      expect(await plain.take([{ key: "all", capacity: 1, perMs: 0.001 }])).toBe(0);
      expect(await client.keys("plain:*")).toEqual(["plain:all"]);
    } finally {
      client.destroy();
      await server.stop();
    }
  });
});

describe.skipIf(!withRedisServer)("RedisRateStore: failing fast", () => {
  it("counts here, within its deadline, while Redis does not answer (paused); one line each way", async () => {
    const port = await freePort();
    const server = await startRedis(port);
    const [client, admin] = [
      createClient({ url: `redis://127.0.0.1:${port}` }),
      createClient({ url: `redis://127.0.0.1:${port}` }),
    ];
    client.on("error", () => {});
    await Promise.all([client.connect(), admin.connect()]);
    const lines: string[] = [];
    const store = new RedisRateStore(client, { timeoutMs: 200, log: (l) => lines.push(l) });
    const b = { key: "all principal:p", group: "principal:p", capacity: 1, perMs: 1 / 60_000 };
    expect(await store.take([b])).toBe(0);
    await admin.sendCommand(["CLIENT", "PAUSE", "60000", "WRITE"]);
    try {
      const start = performance.now();
      // the local count has a bucket of its own, full: the first take there is granted
      expect(await store.take([b])).toBe(0);
      expect(performance.now() - start).toBeLessThan(200 + 2000);
      expect(await store.take([b])).toBeGreaterThan(0);
      expect(store.stats).toMatchObject({ ready: false, outages: 1 });
      expect(lines).toEqual([
        "picomcp/redis: Redis is unreachable (picomcp/redis: Redis did not answer within 200 ms); each instance counts rate limits on its own until it is back",
      ]);
    } finally {
      await admin.sendCommand(["CLIENT", "UNPAUSE"]);
    }
    await until(
      async () => {
        await store.take([b]);
        return store.stats.ready;
      },
      10_000,
      "the store to be back",
    );
    expect(lines[1]).toBe("picomcp/redis: Redis is back; rate limits are shared again");
    client.destroy();
    admin.destroy();
    await server.stop();
  });
  it("once down, counts here at once: one take a deadline goes to Redis to see if it is back", async () => {
    const port = await freePort();
    const server = await startRedis(port);
    const [client, admin] = [
      createClient({ url: `redis://127.0.0.1:${port}` }),
      createClient({ url: `redis://127.0.0.1:${port}` }),
    ];
    client.on("error", () => {});
    await Promise.all([client.connect(), admin.connect()]);
    const lines: string[] = [];
    const store = new RedisRateStore(client, { timeoutMs: 200, log: (l) => lines.push(l) });
    const b = { key: "all principal:q", group: "principal:q", capacity: 100, perMs: 1 / 60_000 };
    expect(await store.take([b])).toBe(0);
    await admin.sendCommand(["CLIENT", "PAUSE", "60000", "WRITE"]);
    try {
      // the take that finds Redis stalled waits its deadline, and the store is down
      expect(await store.take([b])).toBe(0);
      expect(store.stats).toMatchObject({ ready: false, calls: 2, timeouts: 1 });
      // fifty requests at once: one goes to Redis (and waits its deadline), the others are counted here
      const settled: number[] = [];
      const takes = Array.from({ length: 50 }, (_, i) => store.take([b]).then(() => settled.push(i)));
      await expect.poll(() => settled.length).toBeGreaterThanOrEqual(49);
      expect(store.stats.calls).toBe(3);
      await Promise.all(takes);
    } finally {
      await admin.sendCommand(["CLIENT", "UNPAUSE"]);
    }
    // back by itself: a take a deadline finds Redis answering again
    await until(
      async () => {
        await store.take([b]);
        return store.stats.ready;
      },
      10_000,
      "the store to be back",
    );
    expect(lines).toEqual([
      "picomcp/redis: Redis is unreachable (picomcp/redis: Redis did not answer within 200 ms); each instance counts rate limits on its own until it is back",
      "picomcp/redis: Redis is back; rate limits are shared again",
    ]);
    client.destroy();
    admin.destroy();
    await server.stop();
  });
});
