// RedisTaskStore beyond the task store contract, against a real redis-server: the seam a server
// plugs into (signals, a waited end), leases that go with their task, and a task's end written while
// Redis is down landing once it is back.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskPeer, TaskRecord, TaskSignal } from "../../src/ext/task-store.js";
import { RedisTaskStore } from "../../src/redis/index.js";
import { freePort, RUN, startRedis, until, withRedisServer } from "../redis-helpers.js";

let dir: string;
let port: number;
let redis: { stop(): Promise<void> };
const open: { destroy(): void }[] = [];
const stores: RedisTaskStore[] = [];
let n = 0;

beforeAll(async () => {
  if (!withRedisServer) return;
  dir = mkdtempSync(join(tmpdir(), "picomcp-task-store-"));
  port = await freePort();
  redis = await startRedis(port, dir);
});

afterAll(async () => {
  for (const s of stores) s.close();
  for (const c of open) c.destroy();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function connected() {
  const client = createClient({ url: `redis://127.0.0.1:${port}` });
  client.on("error", () => {});
  open.push(client);
  await client.connect();
  return client;
}

/** `count` stores on one fresh prefix, each attached to a peer that records what reaches it. */
async function deployment(count: number, options: { leaseMs?: number; renewMs?: number } = {}) {
  const prefix = `picomcp:tasks:${RUN}:${++n}:`;
  const lines: string[] = [];
  const peers = [];
  for (let i = 0; i < count; i++) {
    const store = new RedisTaskStore(await connected(), { prefix, log: (l) => lines.push(l), ...options });
    stores.push(store);
    const got: { signals: [string, TaskSignal][]; changes: TaskRecord[]; running: Set<string> } = {
      signals: [],
      changes: [],
      running: new Set(),
    };
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
  return { prefix, lines, peers, raw: await connected() };
}

const task = (taskId: string, ttlMs: number | null = 60_000): TaskRecord => ({
  taskId,
  status: "working",
  createdAt: "2026-01-01T00:00:00.000Z",
  lastUpdatedAt: "2026-01-01T00:00:00.000Z",
  ttlMs,
});

describe.runIf(withRedisServer)("RedisTaskStore", () => {
  it("signals the instance that runs a task, answered once handled; none runs it: false", async () => {
    const { peers } = await deployment(2);
    const [a, b] = peers as [(typeof peers)[0], (typeof peers)[0]];
    await a.store.create(task("t-1"));
    a.got.running.add("t-1");
    const responses = { approve: { action: "accept", content: {} } };
    expect(await b.store.signal("t-1", { type: "update", responses })).toBe(true);
    expect(a.got.signals).toEqual([["t-1", { type: "update", responses }]]);
    a.got.running.delete("t-1");
    expect(await b.store.signal("t-1", { type: "cancel" })).toBe(false);
    expect(await b.store.signal("never-made", { type: "cancel" })).toBe(false);
    expect(b.got.signals).toEqual([]);
  });

  it("tells every other instance of each change once, and a waiter anywhere of the end", async () => {
    const { peers } = await deployment(3);
    const [a, b, c] = peers as [(typeof peers)[0], (typeof peers)[0], (typeof peers)[0]];
    await a.store.create(task("t-1"));
    const abort = new AbortController();
    const waited = c.store.settled("t-1", abort.signal);
    await a.store.set({ ...task("t-1"), statusMessage: "half way" });
    const done = { ...task("t-1"), status: "completed" as const, result: { content: [] } };
    await a.store.set(done);
    expect(await waited).toStrictEqual(done);
    await until(() => b.got.changes.length === 2 && c.got.changes.length === 2, 10_000, "the changes");
    expect(b.got.changes.map((t) => t.status)).toEqual(["working", "completed"]);
    // the writer's own server tells its listeners itself: the store does not tell it twice
    expect(a.got.changes).toEqual([]);
    // a task that ended before the wait: at once; a wait aborted: rejects with the reason
    expect(await b.store.settled("t-1", abort.signal)).toStrictEqual(done);
    await a.store.create(task("t-2"));
    const stop = new AbortController();
    const aborted = b.store.settled("t-2", stop.signal);
    stop.abort(new Error("the client went away"));
    await expect(aborted).rejects.toThrow("the client went away");
  });

  it("fails a task whose instance went away, and every other instance's listeners hear it once", async () => {
    const { peers } = await deployment(3, { leaseMs: 1000, renewMs: 100 });
    const [a, b, c] = peers as [(typeof peers)[0], (typeof peers)[0], (typeof peers)[0]];
    await a.store.create(task("lost"));
    a.store.close(); // a went away: nobody renews its lease
    // whichever of b and c fails it (a read, or its renewal tick), the listeners of both hear it
    await until(async () => (await b.store.get("lost"))?.status === "failed", 10_000, "the lease to run out");
    const failedOn = (p: (typeof peers)[0]) => p.got.changes.filter((t) => t.status === "failed").length;
    await until(() => failedOn(b) === 1 && failedOn(c) === 1, 10_000, "b and c to hear the failure");
    expect(b.got.changes.map((t) => [t.taskId, t.status])).toEqual([["lost", "failed"]]);
    expect(c.got.changes.map((t) => [t.taskId, t.status])).toEqual([["lost", "failed"]]);
  });

  it("takes a task that expired with its ttl out of its runner's index, instead of renewing it forever", async () => {
    const { prefix, raw, peers } = await deployment(1, { leaseMs: 1000, renewMs: 100 });
    const store = peers[0]!.store;
    await store.create(task("short", 300));
    const index = `${prefix}runner:${store.id}`;
    expect(await raw.sIsMember(index, "short")).toBe(1);
    expect(await raw.hExists(`${prefix}task:short`, "deadline")).toBe(1);
    await until(async () => (await raw.sIsMember(index, "short")) === 0, 10_000, "the index to drop it");
    expect(await raw.exists(`${prefix}task:short`)).toBe(0);
    expect(await store.get("short")).toBeUndefined();
  });

  it("keeps a task's end written while Redis is down, and writes it once Redis is back", async () => {
    const { peers, lines } = await deployment(2, { leaseMs: 2000, renewMs: 200 });
    const [a, b] = peers as [(typeof peers)[0], (typeof peers)[0]];
    await a.store.create(task("t-1"));
    await redis.stop();
    // a step before the end is refused at once; the end waits for Redis
    // (whichever error the client had: the socket's, or the store's own while it reconnects)
    // in words a client may see (-32603), the reason kept as the cause
    const refused = await a.store.set({ ...task("t-1"), statusMessage: "lost" }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: -32603, message: "Internal error: the task store is unreachable" });
    expect((refused as { cause?: unknown }).cause).toBeInstanceOf(Error);
    const done = { ...task("t-1"), status: "completed" as const, result: { content: [] } };
    const written = a.store.set(done);
    // the other instance learns of the outage from its own calls (its tick renews its runner's lease)
    await until(() => !b.store.stats.ready, 10_000, "b to see the outage");
    redis = await startRedis(port, dir);
    expect(await written).toStrictEqual(done);
    expect(lines[0]).toMatch(
      /^picomcp\/redis: Redis is unreachable \(.+\); task methods fail until it is back$/,
    );
    // the other instance reads it once its own connections are back
    await until(() => lines.filter((l) => l.endsWith("tasks are served again")).length === 2, 20_000, "back");
    expect(await b.store.get("t-1")).toStrictEqual(done);
  }, 60_000);
});
