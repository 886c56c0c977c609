// RedisEventStore while Redis stalls (writes paused on a real redis-server): a resume read answers
// within its own deadline (nothing found), however many appends of the stream wait before it; the
// appends waiting their turn are capped per stream (the rest are not kept, as during an outage), and
// the stream is kept again once Redis answers.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisEventStore } from "../../src/redis/index.js";
import { freePort, startRedis, withRedisServer } from "../redis-helpers.js";

let server: { stop(): Promise<void> };
let url: string;
const clients: { destroy(): void }[] = [];

beforeAll(async () => {
  if (!withRedisServer) return;
  const port = await freePort();
  server = await startRedis(port);
  url = `redis://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const c of clients) c.destroy();
  await server?.stop();
});

async function connect() {
  const c = createClient({ url });
  c.on("error", () => {});
  clients.push(c);
  await c.connect();
  return c;
}

/** Runs `body` while Redis holds every write (and what follows one on its connection). */
async function paused(admin: { sendCommand(args: string[]): Promise<unknown> }, body: () => Promise<void>) {
  await admin.sendCommand(["CLIENT", "PAUSE", "60000", "WRITE"]);
  try {
    await body();
  } finally {
    await admin.sendCommand(["CLIENT", "UNPAUSE"]);
  }
}

const seqs = (events: readonly { seq: number }[]) => events.map((e) => e.seq);

describe.skipIf(!withRedisServer)("RedisEventStore: a stalled Redis", () => {
  it("a resume read answers within its deadline, whatever waits before it on the stream", async () => {
    const [client, admin] = [await connect(), await connect()];
    const timeoutMs = 100;
    const store = new RedisEventStore(client, { prefix: "stall:", timeoutMs, log: () => {} });
    await store.append("s", 1, "one");
    expect(seqs(await store.after("s", 0))).toEqual([1]);
    await paused(admin, async () => {
      // the transport does not wait for appends: a busy stream sends them back to back
      for (let i = 2; i < 32; i++) void store.append("s", i, `e${i}`);
      const start = performance.now();
      expect(await store.after("s", 0)).toEqual([]);
      const took = performance.now() - start;
      // one deadline (and the load of the machine), not one per append waiting (30 × 100 ms)
      expect(took).toBeLessThan(timeoutMs + 2000);
    });
    // once Redis answers, the stream is kept and read again
    await expect
      .poll(async () => {
        await store.append("s", 100, "back");
        return seqs(await store.after("s", 99));
      })
      .toContain(100);
  });

  it("holds at most maxEventsPerStream appends waiting per stream; the newest beyond are not kept", async () => {
    const [client, admin] = [await connect(), await connect()];
    // a deadline longer than the pause: nothing is dropped for lateness, only for the cap
    const store = new RedisEventStore(client, {
      prefix: "cap:",
      maxEventsPerStream: 5,
      timeoutMs: 30_000,
      log: () => {},
    });
    const appends: Promise<void>[] = [];
    await paused(admin, async () => {
      for (let i = 1; i <= 20; i++) appends.push(store.append("s", i, `e${i}`));
      // those beyond the cap settle at once, unsent
      await Promise.all(appends.slice(5));
    });
    await Promise.all(appends);
    expect(seqs(await store.after("s", 0))).toEqual([1, 2, 3, 4, 5]);
    await store.append("s", 21, "after");
    expect(seqs(await store.after("s", 0))).toEqual([2, 3, 4, 5, 21]);
  });
});
