// RedisEventStore against a real redis-server: events in order for any instance, bounded and
// expiring; an HTTP session resumes from it; while Redis is down it keeps nothing and never rejects.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisEventStore } from "../../src/redis/index.js";
import { call, initialize, post, readEvents, request, useTestServers } from "../http-helpers.js";
import { freePort, startRedis } from "../redis-helpers.js";

let url: string;
let redis: { stop(): Promise<void> };
const clients: { destroy(): void }[] = [];
const setup = useTestServers();

async function connected() {
  const client = createClient({ url });
  client.on("error", () => {});
  clients.push(client);
  await client.connect();
  return client;
}

beforeAll(async () => {
  const port = await freePort();
  url = `redis://127.0.0.1:${port}`;
  redis = await startRedis(port);
});

afterAll(async () => {
  for (const c of clients) c.destroy();
  await redis?.stop();
});

describe("RedisEventStore", () => {
  it("keeps a stream's last events in order for every instance, expiring, until dropped", async () => {
    const [one, other] = [await connected(), await connected()];
    const a = new RedisEventStore(one, { maxEventsPerStream: 3, ttlMs: 60_000 });
    const b = new RedisEventStore(other, { maxEventsPerStream: 3 });
    for (let seq = 1; seq <= 5; seq++) await a.append("s1", seq, `{"n":${seq},"text":"a b\\nc"}`);
    expect(await b.after("s1", 0)).toEqual(
      [3, 4, 5].map((n) => ({ seq: n, data: `{"n":${n},"text":"a b\\nc"}` })),
    );
    expect(await b.after("s1", 4)).toEqual([{ seq: 5, data: '{"n":5,"text":"a b\\nc"}' }]);
    const ttl = await one.pTTL("picomcp:events:s1");
    expect(ttl > 0 && ttl <= 60_000).toBe(true);
    const big = new RedisEventStore(other, { maxEventChars: 10 });
    await big.append("s2", 1, "0123456789");
    await big.append("s2", 2, "0123456789A");
    expect(await a.after("s2", 0)).toEqual([{ seq: 1, data: "0123456789" }]);
    await b.drop("s1");
    expect(await a.after("s1", 0)).toEqual([]);
    expect(await one.exists("picomcp:events:s1")).toBe(0);
  });

  it("serves an HTTP session's resumption: the result missed on a closed POST stream comes from Redis", async () => {
    const client = await connected();
    const { handler } = setup({ eventStore: new RedisEventStore(client, { prefix: "picomcp:http:" }) });
    const sid = await initialize(handler);
    const events = await readEvents(await post(handler, call(9, "reconnect"), { "mcp-session-id": sid }));
    const id = events[0]!.id!;
    const stream = id.split(".")[0]!;
    const kept = async () => client.lRange(`picomcp:http:${stream}`, 0, -1);
    for (let i = 0; i < 200 && (await kept()).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
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

  it("while Redis is down keeps nothing, finds nothing, never rejects, and says so once", async () => {
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
    for (let i = 0; i < 500 && client.isReady; i++) await new Promise((r) => setTimeout(r, 10));
    await store.append("s", 2, "lost");
    expect(await store.after("s", 0)).toEqual([]);
    await store.drop("s");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^picomcp\/redis: Redis is unreachable \(.+\); SSE events are delivered live but not kept until it is back$/,
    );
    down = await startRedis(port);
    try {
      for (let i = 0; i < 500 && !client.isReady; i++) await new Promise((r) => setTimeout(r, 10));
      // a fresh server: what was kept before is gone with it (no persistence), what comes now is kept
      await store.append("s", 3, "again");
      expect(await store.after("s", 0)).toEqual([{ seq: 3, data: "again" }]);
      expect(lines).toEqual([lines[0], "picomcp/redis: Redis is back; SSE events are kept again"]);
    } finally {
      client.destroy();
      await down.stop();
    }
  }, 20_000);
});
