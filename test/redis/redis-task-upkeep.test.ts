// RedisTaskStore's tick against a real redis-server, with faults put in at the client (calls on chosen
// keys that never answer, or fail, as a cluster master that is away): a slow upkeep never holds a live
// runner's leases back; a create that half failed leaves nothing behind. (A dead runner's task that a
// sweep could not judge: test/redis/redis-task-cluster.test.ts, where no set of the release before
// sweeps it too.)
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskPeer, TaskRecord } from "../../src/ext/task-store.js";
import { RedisTaskStore } from "../../src/redis/index.js";
import { faulty, RUN, until, useRedis, withRedis } from "../redis-helpers.js";

let redis: { url: string; stop(): Promise<void> };
const open: { destroy(): void }[] = [];
const stores: RedisTaskStore[] = [];
let n = 0;

beforeAll(async () => {
  if (withRedis) redis = await useRedis();
});
afterAll(async () => {
  for (const s of stores) s.close();
  for (const c of open) c.destroy();
  await redis?.stop();
});

async function connected() {
  const client = createClient({ url: redis.url });
  client.on("error", () => {});
  open.push(client);
  await client.connect();
  return client;
}

const task = (taskId: string): TaskRecord => {
  const at = new Date().toISOString();
  return { taskId, status: "working", createdAt: at, lastUpdatedAt: at, ttlMs: null } as TaskRecord;
};
const peer: TaskPeer = { deliver: async () => false, changed: () => {} };
/** Redis's clock, in milliseconds. */
async function redisNow(client: { time(): Promise<unknown> }): Promise<number> {
  const t = (await client.time()) as unknown as Date | [string, string];
  return t instanceof Date ? t.getTime() : Number(t[0]) * 1000 + Math.floor(Number(t[1]) / 1000);
}

describe.runIf(withRedis)("RedisTaskStore's tick through faults", () => {
  it("renews a live runner's leases while reads of the tasks it waits on never answer", async () => {
    const prefix = `picomcp:tasks:${RUN}:upkeep:${++n}:`;
    let stall = false;
    let stalled = 0;
    const options = { prefix, leaseMs: 3000, renewMs: 500, timeoutMs: 200, log: () => {} };
    const a = new RedisTaskStore(
      faulty(await connected(), (keys) => {
        if (!stall || !keys[0]!.includes(":task:w")) return undefined;
        stalled++;
        return "hang";
      }),
      options,
    );
    const admin = await connected();
    const b = new RedisTaskStore(admin, options);
    stores.push(a, b);
    a.attach(peer);
    b.attach(peer);
    await Promise.all([a.ready, b.ready]);
    await a.create(task("live"));
    const abort = new AbortController();
    for (let i = 0; i < 30; i++) {
      // run by b; a's clients wait on their ends
      await b.create(task(`w${i}`));
      void a.settled(`w${i}`, abort.signal).catch(() => {});
    }
    stall = true;
    const from = await redisNow(admin);
    // two leases on Redis's clock, and a's upkeep tried its reads over and over meanwhile
    await until(async () => (await redisNow(admin)) > from + 6000 && stalled >= 60, 30_000, "two leases");
    expect((await b.get("live"))?.status).toBe("working");
    abort.abort();
  }, 40_000);

  it("deletes the half of a create that was written when the other half failed", async () => {
    const prefix = `picomcp:tasks:${RUN}:upkeep:${++n}:`;
    const raw = await connected();
    let failing = true;
    const store = new RedisTaskStore(
      faulty(await connected(), (keys) => (failing && keys[0]!.includes(":runner:") ? "fail" : undefined)),
      { prefix, leaseMs: 600, renewMs: 100, log: () => {} },
    );
    stores.push(store);
    store.attach(peer);
    await expect(store.create(task("half"))).rejects.toThrow("the task store is unreachable");
    const key = `${prefix}task:half`;
    expect(await raw.hGet(key, "status")).toBe("working");
    failing = false;
    // nobody reads it, nobody renews it: the store's own upkeep takes it away
    await until(async () => (await raw.exists(key)) === 0, 15_000, "the half-made task to go");
    await expect(store.get("half")).resolves.toBeUndefined();
  }, 20_000);
});
