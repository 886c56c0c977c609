// A mixed fleet on one real redis-server, as during a rolling deploy: the release before's
// RedisTaskStore (test/fixtures/previous-task-store.js: every running task's lease in one sorted set,
// `<prefix>leases`, read beside the task's hash) beside this one (one key per script, the lease a field of
// the task's hash, a runners set to sweep dead runners). Each reads the tasks the other runs and finds
// them `working` while their runner renews, signals cross both ways, and a task whose runner of either
// release stopped is failed by the other's tick. Of this release alone: where the set of the release
// before is named (never beside a task of another slot on a cluster).
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_GONE, type TaskPeer, type TaskRecord, type TaskSignal } from "../../src/ext/task-store.js";
import { type Link, slotOf } from "../../src/redis/link.js";
import { TaskCalls } from "../../src/redis/task-scripts.js";
import { RedisTaskStore } from "../../src/redis/task-store.js";
import { RedisTaskStore as PreviousStore } from "../fixtures/previous-task-store.js";
import { until, useRedis, withRedis } from "../redis-helpers.js";

/** A lease long enough that a loaded machine never misses a renewal, renewed often. */
const LEASE = { leaseMs: 2_000, renewMs: 200 };

let redis: { url: string; stop(): Promise<void> };
let raw: ReturnType<typeof createClient>;
const open: { destroy(): void }[] = [];
const stores: { close(): void }[] = [];
let prefixes = 0;

beforeAll(async () => {
  if (!withRedis) return;
  redis = await useRedis();
  raw = createClient({ url: redis.url });
  raw.on("error", () => {});
  await raw.connect();
});
afterAll(async () => {
  for (const s of stores) s.close();
  for (const c of open) c.destroy();
  raw?.destroy();
  await redis?.stop();
});

async function connected() {
  const client = createClient({ url: redis.url });
  client.on("error", () => {});
  open.push(client);
  await client.connect();
  return client;
}

/** What reaches a store's server: the signals of the tasks it runs, and other instances' changes. */
function peerOf() {
  const got = {
    signals: [] as [string, TaskSignal][],
    changes: [] as TaskRecord[],
    running: new Set<string>(),
  };
  const peer: TaskPeer = {
    deliver: async (taskId, signal) => {
      if (!got.running.has(taskId)) return false;
      got.signals.push([taskId, signal]);
      return true;
    },
    changed: (task) => void got.changes.push(task),
  };
  return { got, peer };
}

/** A fresh prefix, and a way to add stores of either release on it, each attached to a peer. */
function fleet() {
  const prefix = `picomcp:tasks:mixed:${++prefixes}:`;
  const log: string[] = [];
  async function add<S extends RedisTaskStore | PreviousStore>(store: S) {
    stores.push(store);
    const { got, peer } = peerOf();
    store.attach(peer);
    await store.ready;
    return { store, got };
  }
  const options = { prefix, log: (l: string) => void log.push(l), ...LEASE };
  return {
    prefix,
    log,
    previous: async () => add(new PreviousStore(await connected(), options)),
    current: async () => add(new RedisTaskStore(await connected(), options)),
    /** A task's status as Redis holds it (no store reads it, so none judges its lease). */
    status: async (id: string) => raw.hGet(`${prefix}task:${id}`, "status"),
    /** The task's lease in the set of the release before, and in its hash, read at once. */
    leases: async (id: string) => {
      const [legacy, own] = await raw
        .multi()
        .zScore(`${prefix}leases`, id)
        .hGet(`${prefix}task:${id}`, "deadline")
        .exec();
      return [legacy === null ? null : Number(legacy), own === null ? null : Number(own)];
    },
  };
}

/** Redis's clock, in milliseconds (the one leases are judged by). */
async function redisNow(): Promise<number> {
  const [s, us] = (await raw.sendCommand(["TIME"])) as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

const task = (taskId: string): TaskRecord => ({
  taskId,
  status: "working",
  createdAt: "2026-01-01T00:00:00.000Z",
  lastUpdatedAt: "2026-01-01T00:00:00.000Z",
  ttlMs: 60_000,
});

describe.runIf(withRedis)("RedisTaskStore: a fleet of the release before and this one on one Redis", () => {
  it("each reads the tasks the other runs as working, past their first lease: renewals hold them", async () => {
    const f = fleet();
    const [old, now] = [await f.previous(), await f.current()];
    await old.store.create(task("by-old"));
    await now.store.create(task("by-new"));
    // a task of this release holds its lease in both places, with one deadline
    const [legacy, own] = await f.leases("by-new");
    expect(legacy).toBe(own);
    const first = Math.max((await f.leases("by-old"))[0]!, own!);
    // read by the other release before, and after, the lease each was created with ran out
    for (const [reader, id] of [
      [now.store, "by-old"],
      [old.store, "by-new"],
    ] as const)
      expect((await reader.get(id))?.status).toBe("working");
    await until(async () => (await redisNow()) > first + LEASE.renewMs, 10_000, "the first leases to pass");
    for (const [reader, id] of [
      [now.store, "by-old"],
      [old.store, "by-new"],
      [now.store, "by-new"],
      [old.store, "by-old"],
    ] as const)
      expect((await reader.get(id))?.status).toBe("working");
    // renewed in both places with one deadline, past the first
    const renewed = await f.leases("by-new");
    expect(renewed[0]).toBe(renewed[1]);
    expect(renewed[0]).toBeGreaterThan(first);
    // two more leases of both ticks sweeping: nothing failed while its runner lives
    await until(async () => (await redisNow()) > first + 2 * LEASE.leaseMs, 15_000, "two more leases");
    expect([await f.status("by-old"), await f.status("by-new")]).toEqual(["working", "working"]);
    expect([old.got.changes, now.got.changes]).toEqual([[], []]);
    expect(f.log).toEqual([]);
  });

  it("carries signals and ends across both ways, each read first as a server does", async () => {
    const f = fleet();
    const [old, now] = [await f.previous(), await f.current()];
    await old.store.create(task("by-old"));
    old.got.running.add("by-old");
    await now.store.create(task("by-new"));
    now.got.running.add("by-new");
    const responses = { approve: { action: "accept", content: {} } };
    // tasks/update and tasks/cancel through the other release: read, then signalled to the runner
    expect((await now.store.get("by-old"))?.status).toBe("working");
    expect(await now.store.signal("by-old", { type: "update", responses })).toBe(true);
    expect((await old.store.get("by-new"))?.status).toBe("working");
    expect(await old.store.signal("by-new", { type: "update", responses })).toBe(true);
    expect(await now.store.signal("by-old", { type: "cancel" })).toBe(true);
    expect(await old.store.signal("by-new", { type: "cancel" })).toBe(true);
    expect(old.got.signals).toEqual([
      ["by-old", { type: "update", responses }],
      ["by-old", { type: "cancel" }],
    ]);
    expect(now.got.signals).toEqual([
      ["by-new", { type: "update", responses }],
      ["by-new", { type: "cancel" }],
    ]);
    // each runner ends its task: the other release's waiter and listeners hear it, and no lease is left
    const abort = new AbortController();
    const waits = [now.store.settled("by-old", abort.signal), old.store.settled("by-new", abort.signal)];
    const ended = (id: string) => ({
      ...task(id),
      status: "cancelled" as const,
      lastUpdatedAt: "2026-01-01T00:00:01.000Z",
    });
    await old.store.set(ended("by-old"));
    await now.store.set(ended("by-new"));
    expect(await Promise.all(waits)).toStrictEqual([ended("by-old"), ended("by-new")]);
    await until(() => now.got.changes.length === 1 && old.got.changes.length === 1, 10_000, "the ends");
    expect(now.got.changes).toStrictEqual([ended("by-old")]);
    expect(old.got.changes).toStrictEqual([ended("by-new")]);
    expect([await f.leases("by-old"), await f.leases("by-new")]).toEqual([
      [null, null],
      [null, null],
    ]);
    expect(f.log).toEqual([]);
  });

  it("fails the task of a runner of the release before that stopped, from this release's tick alone", async () => {
    const f = fleet();
    const [dead, now] = [await f.previous(), await f.current()];
    await dead.store.create(task("orphan"));
    await now.store.create(task("mine"));
    dead.store.close();
    // nobody reads it: this release's tick finds it in the set of the release before, once lapsed
    await until(async () => (await f.status("orphan")) === "failed", 15_000, "the orphan to be failed");
    const failed = JSON.parse((await raw.hGet(`${f.prefix}task:orphan`, "record"))!) as TaskRecord;
    expect(failed.error).toEqual({ code: -32603, message: SERVER_GONE });
    expect((await f.leases("orphan"))[0]).toBeNull();
    await until(() => now.got.changes.length > 0, 10_000, "this release's listeners to hear it");
    expect(now.got.changes.map((t) => [t.taskId, t.status])).toEqual([["orphan", "failed"]]);
    // its own task, renewed, stays
    expect(await f.status("mine")).toBe("working");
  });

  it("fails the task of a runner of this release that stopped, from the tick of the release before alone", async () => {
    const f = fleet();
    const [dead, old] = [await f.current(), await f.previous()];
    await dead.store.create(task("orphan"));
    await old.store.create(task("kept"));
    dead.store.close();
    await until(async () => (await f.status("orphan")) === "failed", 15_000, "the orphan to be failed");
    const failed = JSON.parse((await raw.hGet(`${f.prefix}task:orphan`, "record"))!) as TaskRecord;
    expect(failed.error).toEqual({ code: -32603, message: SERVER_GONE });
    await until(() => old.got.changes.length > 0, 10_000, "the old release's listeners to hear it");
    expect(old.got.changes.map((t) => [t.taskId, t.status])).toEqual([["orphan", "failed"]]);
    expect(await f.status("kept")).toBe("working");
  });
});

describe("RedisTaskStore: where the set of the release before is named", () => {
  const calls = (prefix: string, cluster: boolean) =>
    new TaskCalls(
      { cluster } as Link,
      prefix,
      () => {},
      () => {},
    );

  it("beside every task on one node and Sentinel, and swept there", () => {
    const c = calls("picomcp:tasks:", false);
    expect(c.keys("t-1")).toEqual(["picomcp:tasks:task:t-1", "picomcp:tasks:leases"]);
    expect(c.legacy).toBe(true);
  });

  it("on a cluster: beside every task with a hash-tagged prefix, never with a plain one", () => {
    const tagged = calls("{app}:tasks:", true);
    expect(tagged.keys("t-1")).toEqual(["{app}:tasks:task:t-1", "{app}:tasks:leases"]);
    expect(tagged.legacy).toBe(true);
    const plain = calls("picomcp:tasks:", true);
    expect(plain.legacy).toBe(false);
    // its hash alone (no CROSSSLOT), even for a task whose key happens to share the set's slot
    const ids = Array.from({ length: 200 }, (_, i) => `t-${i}`);
    expect(ids.every((id) => plain.keys(id).length === 1)).toBe(true);
    let same = 0;
    while (slotOf(`picomcp:tasks:task:s-${same}`) !== slotOf("picomcp:tasks:leases")) same++;
    expect(plain.keys(`s-${same}`)).toEqual([`picomcp:tasks:task:s-${same}`]);
    // an empty tag is none: Redis hashes the whole key
    expect(calls("{}tasks:", true).legacy).toBe(false);
  });
});
