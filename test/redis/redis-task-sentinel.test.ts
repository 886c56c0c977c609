// RedisTaskStore on a real Sentinel set (test/redis-sentinel.ts: a master, a replica, three sentinels),
// with Sentinel clients as users create them: signals through another instance heard 20 of 20, and
// the master killed (failover), a sentinel killed and everything restarted with no task lost, no
// running task failed for the outages, and control crossing instances again after each.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskPeer, TaskRecord, TaskSignal } from "../../src/ext/task-store.js";
import { RedisTaskStore, type RedisTaskStoreOptions } from "../../src/redis/index.js";
import { type AnyClient, startSentinel, withDeployment } from "../redis-deployments.js";
import { RUN, until } from "../redis-helpers.js";

const run = withDeployment("sentinel");

let set: Awaited<ReturnType<typeof startSentinel>>;
const open: AnyClient[] = [];
const stores: RedisTaskStore[] = [];
let n = 0;

beforeAll(async () => {
  if (run) set = await startSentinel();
}, 60_000);

afterAll(async () => {
  for (const s of stores) s.close();
  for (const c of open) void c.destroy();
  await set?.stop();
});

interface Got {
  signals: [string, TaskSignal][];
  changes: TaskRecord[];
  running: Set<string>;
}

/** `count` stores on one fresh prefix, each on a Sentinel client of its own, attached to a recording peer. */
async function deployment(count: number, options: RedisTaskStoreOptions = {}) {
  const prefix = `picomcp:tasks:${RUN}:${++n}:`;
  const lines: string[] = [];
  const peers: { store: RedisTaskStore; got: Got }[] = [];
  for (let i = 0; i < count; i++) {
    const client = set.client();
    client.on("error", () => {});
    open.push(client);
    await client.connect();
    const store = new RedisTaskStore(client, { log: (l) => lines.push(l), ...options, prefix });
    stores.push(store);
    const got: Got = { signals: [], changes: [], running: new Set() };
    const peer: TaskPeer = {
      deliver: async (taskId, signal) => {
        if (!got.running.has(taskId)) return false;
        got.signals.push([taskId, signal]);
        return true;
      },
      changed: (task) => void got.changes.push(task),
    };
    store.attach(peer);
    await store.ready;
    peers.push({ store, got });
  }
  return { prefix, lines, peers };
}

const task = (taskId: string): TaskRecord => ({
  taskId,
  status: "working",
  createdAt: "2026-01-01T00:00:00.000Z",
  lastUpdatedAt: "2026-01-01T00:00:00.000Z",
  ttlMs: 600_000,
});

/** Waits until the replica has every write the master had now (replication is asynchronous). */
async function replicaCaughtUp(): Promise<void> {
  const master = await set.master();
  const offsets = async () => {
    const info = await master.cli("INFO", "replication");
    return {
      master: Number(/master_repl_offset:(\d+)/.exec(info)?.[1] ?? Number.NaN),
      replica: Number(/slave0:.*offset=(\d+)/.exec(info)?.[1] ?? -1),
    };
  };
  const { master: now } = await offsets();
  await until(async () => (await offsets()).replica >= now, 15_000, "the replica to catch up");
}

describe.runIf(run)("RedisTaskStore on Sentinel", () => {
  it("signals through another instance are heard 20 of 20", async () => {
    const { peers } = await deployment(2, { leaseMs: 600_000, renewMs: 300_000, probeMs: 300_000 });
    const [a, b] = peers as [(typeof peers)[0], (typeof peers)[0]];
    const heard: boolean[] = [];
    for (let i = 0; i < 20; i++) {
      await a.store.create(task(`s-${i}`));
      a.got.running.add(`s-${i}`);
      heard.push(await b.store.signal(`s-${i}`, { type: "cancel" }));
    }
    expect(heard.filter(Boolean).length).toBe(20);
    expect(a.got.signals.length).toBe(20);
  });

  it("the master killed, a sentinel killed, everything restarted: no task lost, control still crosses", async () => {
    const { peers, lines } = await deployment(2, { leaseMs: 3000, renewMs: 300, timeoutMs: 500 });
    const [a, b] = peers as [(typeof peers)[0], (typeof peers)[0]];
    const running = Array.from({ length: 10 }, (_, i) => `run-${i}`);
    const ended = Array.from({ length: 10 }, (_, i) => `end-${i}`);
    const done = (id: string): TaskRecord => ({ ...task(id), status: "completed", result: { content: [] } });
    for (const id of running) {
      await a.store.create(task(id));
      a.got.running.add(id);
    }
    for (const id of ended) {
      await a.store.create(task(id));
      await a.store.set(done(id));
    }
    const kept = async () => {
      try {
        for (const id of ended) expect(await b.store.get(id)).toStrictEqual(done(id));
        for (const id of running) expect(await b.store.get(id)).toStrictEqual(task(id));
        return true;
      } catch {
        return false;
      }
    };
    const heard = (id: string) => b.store.signal(id, { type: "update", responses: {} }).catch(() => false);
    const everything = async (what: string) => {
      await until(kept, 60_000, `every task read after ${what}`);
      for (const id of running) await until(() => heard(id), 30_000, `a signal for ${id} after ${what}`);
    };

    // the failover last: a set restarted right after one waits ~10 s for its sentinels to make the old
    // master a replica
    await set.killSentinel(0);
    await everything("a sentinel killed");
    await set.restart(set.sentinels[0]!);

    await replicaCaughtUp();
    await set.restartAll();
    await everything("the restart");

    await replicaCaughtUp();
    await set.killMaster();
    await everything("the failover");
    // no running task was failed for the outages: their runner lives
    for (const id of running) expect((await b.store.get(id))?.status).toBe("working");
    await until(() => a.store.stats.ready && b.store.stats.ready, 30_000, "both stores back");
    const down = lines.filter((l) => l.endsWith("task methods fail until it is back"));
    expect(lines.filter((l) => l === "picomcp/redis: Redis is back; tasks are served again").length).toBe(
      down.length,
    );
    console.log(`outage lines on Sentinel: ${down.length}`);
  }, 240_000);
});
