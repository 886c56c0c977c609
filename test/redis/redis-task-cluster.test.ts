// RedisTaskStore on a real 6-node Redis Cluster (test/redis-cluster.ts), with cluster clients as users
// create them: signals through another instance heard in every run (a sharded channel per instance:
// SPUBLISH counts every subscriber, where a classic PUBLISH counts one node's), tasks spread over the
// masters, the commands of a tasks/get and of a tasks/cancel through another instance, a master killed
// and everything restarted with no task lost, and a runner killed: its tasks failed by another instance,
// even one that a sweep picked and could not judge (a sweeper that failed there loses no task).
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TaskPeer, TaskRecord, TaskSignal } from "../../src/ext/task-store.js";
import { RedisTaskStore, type RedisTaskStoreOptions } from "../../src/redis/index.js";
import { slotOf } from "../../src/redis/link.js";
import { type AnyClient, startCluster, withDeployment } from "../redis-deployments.js";
import { faulty, type Instance, RUN, startInstance, startProxy, until } from "../redis-helpers.js";

const SCRIPT = fileURLToPath(new URL("../fixtures/redis-task-instance.js", import.meta.url));
const run = withDeployment("cluster");

let cluster: Awaited<ReturnType<typeof startCluster>>;
const open: AnyClient[] = [];
const stores: RedisTaskStore[] = [];
let n = 0;

beforeAll(async () => {
  if (run) cluster = await startCluster();
}, 60_000);

// each test's stores go with it: no tick or probe of theirs in a later test's counts
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const c of open.splice(0)) void c.destroy();
});

afterAll(() => cluster?.stop());

async function connected(): Promise<AnyClient> {
  const client = cluster.client();
  client.on("error", () => {});
  open.push(client);
  await client.connect();
  return client;
}

interface Got {
  signals: [string, TaskSignal][];
  changes: TaskRecord[];
  running: Set<string>;
}

/** `count` stores on one fresh prefix, each on a cluster client of its own, attached to a recording peer. */
async function deployment(count: number, options: RedisTaskStoreOptions = {}) {
  const prefix = options.prefix ?? `picomcp:tasks:${RUN}:${++n}:`;
  const lines: string[] = [];
  const peers: { store: RedisTaskStore; got: Got }[] = [];
  for (let i = 0; i < count; i++) {
    const store = new RedisTaskStore(await connected(), { log: (l) => lines.push(l), ...options, prefix });
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

const task = (taskId: string, ttlMs: number | null = 600_000): TaskRecord => ({
  taskId,
  status: "working",
  createdAt: "2026-01-01T00:00:00.000Z",
  lastUpdatedAt: "2026-01-01T00:00:00.000Z",
  ttlMs,
});

/** No background call during a measure: no tick, no probe within the test. */
const QUIET = { leaseMs: 600_000, renewMs: 300_000, probeMs: 300_000 };

/** Script runs per master since the last reset, in the order of the masters' first slot. */
async function scriptsPerMaster(): Promise<number[]> {
  const out = [];
  for (const m of await cluster.masterNodes()) {
    const s = await m.commandStats();
    out.push((s.evalsha ?? 0) + (s.eval ?? 0));
  }
  return out;
}

/** Waits until every replica has every write its master had now (replication is asynchronous). */
async function replicasCaughtUp(): Promise<void> {
  const offsets = async (m: { cli(...args: string[]): Promise<string> }) => {
    const info = await m.cli("INFO", "replication");
    return {
      master: Number(/master_repl_offset:(\d+)/.exec(info)?.[1] ?? Number.NaN),
      replica: Number(/slave0:.*offset=(\d+)/.exec(info)?.[1] ?? -1),
    };
  };
  for (const m of await cluster.masterNodes()) {
    const { master } = await offsets(m);
    await until(async () => (await offsets(m)).replica >= master, 15_000, `the replica of ${m.name}`).catch(
      async (e) => {
        throw new Error(`${e.message}: ${master} ${await m.cli("INFO", "replication")}`);
      },
    );
  }
}

describe.runIf(run)("RedisTaskStore on a Redis Cluster", () => {
  it("signals through another instance are heard in every run: 20 of 20, and none for a task that does not run", async () => {
    const { peers } = await deployment(2, QUIET);
    const [a, b] = peers as [(typeof peers)[0], (typeof peers)[0]];
    const ids = Array.from({ length: 20 }, (_, i) => `signal-${i}`);
    for (const id of ids) {
      await a.store.create(task(id));
      a.got.running.add(id);
    }
    const heard: boolean[] = [];
    for (const id of ids) {
      const responses = { approve: { action: "accept", content: {} } };
      heard.push(await b.store.signal(id, { type: "update", responses }));
      heard.push(await b.store.signal(id, { type: "cancel" }));
    }
    expect(heard.filter(Boolean).length).toBe(40);
    expect(a.got.signals.length).toBe(40);
    // a task its runner does not run (ended there): nobody heard, at once
    a.got.running.delete("signal-0");
    expect(await b.store.signal("signal-0", { type: "cancel" })).toBe(false);
    expect(await b.store.signal("never-made", { type: "cancel" })).toBe(false);
  });

  it("spreads tasks over the masters: each task's script runs on the master of its own key", async () => {
    const { prefix, peers } = await deployment(1, QUIET);
    const store = peers[0]!.store;
    const ids = Array.from({ length: 60 }, (_, i) => `spread-${i}`);
    // every master knows the script first (a node that does not is taught it once, by EVAL)
    for (const id of ids) await store.get(id);
    await cluster.resetStats();
    for (const id of ids) await store.get(id);
    const reads = await scriptsPerMaster();
    console.log(`task reads per master (60 tasks/get): ${reads.join(", ")}`);
    expect(reads.reduce((x, y) => x + y, 0)).toBe(60);
    for (const count of reads) expect(count).toBeGreaterThanOrEqual(5);
    for (const id of ids) await store.create(task(id));
    await cluster.resetStats();
    await Promise.all(ids.map((id) => store.create(task(id))));
    const creates = await scriptsPerMaster();
    // each create: the task's hash (on its own slot), and the runner's index (one key per runner)
    console.log(`commands per master (60 creates: the task, and its runner's index): ${creates.join(", ")}`);
    expect(creates.reduce((x, y) => x + y, 0)).toBe(120);
    for (const count of creates) expect(count).toBeGreaterThanOrEqual(5);
    expect(new Set(ids.map((id) => slotOf(`${prefix}task:${id}`))).size).toBeGreaterThan(50);
    // a plain prefix: the release before's set of leases (which never ran on a cluster without a hash
    // tag) is never named
    expect(await (await connected()).exists(`${prefix}leases`)).toBe(0);
  });

  it("a tasks/get is one command; a cancel through another instance four (read, write, signal, answer)", async () => {
    const { peers } = await deployment(2, QUIET);
    const [a, b] = peers as [(typeof peers)[0], (typeof peers)[0]];
    await a.store.create(task("counted"));
    a.got.running.add("counted");
    const calls = () => a.store.stats.calls + b.store.stats.calls;
    let before = calls();
    expect((await b.store.get("counted"))?.status).toBe("working");
    expect(calls() - before).toBe(1);
    // what the tasks extension does for a tasks/cancel that reaches an instance not running the task
    before = calls();
    const record = (await b.store.get("counted"))!;
    const cancelled = { ...record, status: "cancelled" as const };
    expect(await b.store.set(cancelled)).toStrictEqual(cancelled);
    expect(await b.store.signal("counted", { type: "cancel" })).toBe(true);
    const cancel = calls() - before;
    console.log(`commands per tasks/cancel through another instance: ${cancel}`);
    expect(cancel).toBe(4);
    expect(await b.store.get("counted")).toStrictEqual(cancelled);
  });

  it("a prefix with a hash tag: every key and channel in its slot, and signals and leases still work", async () => {
    const { prefix, peers } = await deployment(3, {
      prefix: `{app-${RUN}}:tasks:`,
      leaseMs: 1500,
      renewMs: 300,
    });
    const [a, b, c] = peers as [(typeof peers)[0], (typeof peers)[0], (typeof peers)[0]];
    const ids = ["tag-1", "tag-2", "tag-3"];
    for (const id of ids) {
      await a.store.create(task(id));
      a.got.running.add(id);
    }
    const slots = new Set(
      [
        ...ids.map((id) => `${prefix}task:${id}`),
        `${prefix}runners`,
        `${prefix}runner:${a.store.id}`,
        `${prefix}leases`,
      ].map(slotOf),
    );
    expect(slots.size).toBe(1);
    // there the release before may run too (a rolling deploy): its set of leases holds the running tasks
    const raw = await connected();
    expect(await raw.zCard(`${prefix}leases`)).toBe(3);
    for (const id of ids) expect(await b.store.signal(id, { type: "cancel" })).toBe(true);
    a.store.close();
    const failedOn = (p: (typeof peers)[0]) => p.got.changes.filter((t) => t.status === "failed").length;
    await until(() => failedOn(b) === 3 && failedOn(c) === 3, 15_000, "the lost tasks failed");
    expect(await raw.zCard(`${prefix}leases`)).toBe(0);
  });

  it("a master paused: a read of a task on it fails within timeoutMs with a clear error; others answer", async () => {
    const timeoutMs = 400;
    const { prefix, peers } = await deployment(1, { ...QUIET, timeoutMs });
    const store = peers[0]!.store;
    const masters = await cluster.masterNodes();
    // a task on the first master, and one on another
    const ids: string[] = [];
    for (let i = 0; ids.length < 2; i++) {
      const id = `paused-${i}`;
      const master = (await cluster.masterOf(`${prefix}task:${id}`)).port;
      if ((ids.length === 0) === (master === masters[0]!.port)) ids.push(id);
    }
    const [onPaused, elsewhere] = ids as [string, string];
    for (const id of ids) await store.create(task(id));
    cluster.pause(masters[0]!);
    try {
      const started = Date.now();
      const failure = await store.get(onPaused).then(
        () => undefined,
        (e: { code: number; message: string; cause?: Error }) => e,
      );
      const took = Date.now() - started;
      console.log(`a read on a paused master failed after ${took} ms (timeoutMs ${timeoutMs})`);
      expect(failure).toMatchObject({
        code: -32603,
        message: "Internal error: the task store is unreachable",
      });
      expect(failure?.cause?.message).toBe(`picomcp/redis: Redis did not answer within ${timeoutMs} ms`);
      expect(took).toBeLessThan(timeoutMs + 1500);
      expect((await store.get(elsewhere))?.taskId).toBe(elsewhere);
    } finally {
      await cluster.resume(masters[0]!);
    }
  }, 60_000);

  it("a master killed (failover), then everything restarted: no task lost, control still crosses", async () => {
    const { peers, lines } = await deployment(2, { leaseMs: 3000, renewMs: 300, timeoutMs: 500 });
    const [a, b] = peers as [(typeof peers)[0], (typeof peers)[0]];
    const running = Array.from({ length: 20 }, (_, i) => `run-${i}`);
    const ended = Array.from({ length: 10 }, (_, i) => `end-${i}`);
    for (const id of running) {
      await a.store.create(task(id));
      a.got.running.add(id);
    }
    const done = (id: string): TaskRecord => ({ ...task(id), status: "completed", result: { content: [] } });
    for (const id of ended) {
      await a.store.create(task(id));
      await a.store.set(done(id));
    }
    const everyTaskKept = async () => {
      for (const id of ended) expect(await b.store.get(id)).toStrictEqual(done(id));
      for (const id of running) expect(await b.store.get(id)).toStrictEqual(task(id));
    };
    const reads = async () => {
      try {
        await everyTaskKept();
        return true;
      } catch {
        return false;
      }
    };
    const heard = (id: string) => b.store.signal(id, { type: "update", responses: {} }).catch(() => false);

    await replicasCaughtUp();
    const killed = await cluster.killMaster(0);
    await until(reads, 30_000, "every task read after the failover");
    await everyTaskKept();
    for (const id of running) await until(() => heard(id), 30_000, `a signal for ${id} heard`);
    // the old master comes back as the replica of the new one
    await cluster.restart(killed);

    await replicasCaughtUp();
    await cluster.restartAll();
    await until(reads, 60_000, "every task read after the restart");
    // no running task was failed for the outages (no lease is judged after one): their runner lives
    await everyTaskKept();
    for (const id of running) await until(() => heard(id), 30_000, `a signal for ${id} heard`);
    // each outage told once, and its end once
    await until(() => a.store.stats.ready && b.store.stats.ready, 30_000, "both stores back");
    const down = lines.filter((l) => l.endsWith("task methods fail until it is back"));
    expect(down.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l === "picomcp/redis: Redis is back; tasks are served again").length).toBe(
      down.length,
    );
    console.log(`outage lines: ${JSON.stringify(down)}`);
  }, 180_000);

  it("a runner gone: its tasks are failed by another instance within leaseMs + renewMs, heard once", async () => {
    const leaseMs = 2500;
    const renewMs = 500;
    const { peers } = await deployment(3, { leaseMs, renewMs });
    const [a, b, c] = peers as [(typeof peers)[0], (typeof peers)[0], (typeof peers)[0]];
    const ids = Array.from({ length: 10 }, (_, i) => `lost-${i}`);
    for (const id of ids) {
      await a.store.create(task(id));
      a.got.running.add(id);
    }
    // its process died: it renews nothing and answers nothing
    a.store.close();
    const gone = Date.now();
    const failedOn = (p: (typeof peers)[0]) => p.got.changes.filter((t) => t.status === "failed").length;
    await until(() => failedOn(b) === 10 && failedOn(c) === 10, 30_000, "b and c to hear every failure");
    const took = Date.now() - gone;
    console.log(`a dead runner's 10 tasks failed ${took} ms after its last renewal at the latest`);
    expect(took).toBeGreaterThanOrEqual(leaseMs - renewMs);
    expect(took).toBeLessThanOrEqual(leaseMs + renewMs + 2000);
    for (const id of ids)
      expect(await c.store.get(id)).toMatchObject({
        status: "failed",
        error: { code: -32603, message: "The server running the task went away" },
      });
    expect(failedOn(b)).toBe(10);
  }, 60_000);
});

// The same through the wire: two picomcp processes on the cluster behind a proxy.
const V = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} }, elicitation: {} },
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
};

describe.runIf(run)("tasks across two instances on a Redis Cluster", () => {
  const instances: Instance[] = [];
  let proxy: { url: string; close(): Promise<void> };
  let ids = 0;
  beforeAll(async () => {
    if (!run) return;
    const env = {
      REDIS_CLUSTER: cluster.rootNodes.map((r) => r.url).join(","),
      CHANNEL: `${RUN}-wire`,
      // no tick and no probe while commands are counted
      LEASE_MS: "600000",
      RENEW_MS: "300000",
      PROBE_MS: "300000",
    };
    instances.push(...(await Promise.all(["A", "B"].map((name) => startInstance(name, env, SCRIPT)))));
    proxy = await startProxy(
      instances.map((i) => i.url),
      false,
    );
  }, 60_000);
  afterAll(async () => {
    await proxy?.close();
    await Promise.all(instances.map((i) => i.stop()));
  });

  async function modern(to: number, method: string, params: { [k: string]: unknown }) {
    const id = ++ids;
    const name = (params.name ?? params.taskId) as string;
    const res = await fetch(proxy.url, {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": V,
        "mcp-method": method,
        "mcp-name": name,
        "x-to": String(to),
        "x-user": "ada",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: META, ...params } }),
    });
    expect(res.headers.get("content-type")).toContain("application/json");
    return (await res.json()) as { result?: any; error?: any };
  }

  async function start(name: string): Promise<string> {
    const answer = await modern(0, "tools/call", { name, arguments: {} });
    expect(answer.result?.resultType).toBe("task");
    const { taskId } = answer.result;
    await until(() => instances[0]!.stderr.includes(`started ${taskId}`), 15_000, `${name} to start`);
    return taskId;
  }

  it("20 of 20 cancels and 20 of 20 updates through B reach the handler on A before B answers", async () => {
    for (let i = 0; i < 20; i++) {
      const asking = await start("approve");
      await until(
        async () => (await modern(1, "tasks/get", { taskId: asking })).result.status === "input_required",
      );
      const update = await modern(1, "tasks/update", {
        taskId: asking,
        inputResponses: { approve: { action: "accept", content: {} } },
      });
      expect(update.result.resultType).toBe("complete");
      // B answered once A resumed the handler and stored it: a read right after no longer asks
      expect((await modern(1, "tasks/get", { taskId: asking })).result.status).not.toBe("input_required");

      const hanging = await start("hang");
      const cancel = await modern(1, "tasks/cancel", { taskId: hanging });
      expect(cancel.result.resultType).toBe("complete");
      expect((await modern(1, "tasks/get", { taskId: hanging })).result.status).toBe("cancelled");
      await until(() => instances[0]!.stderr.includes(`aborted ${hanging}`), 15_000, "the abort on A");
    }
  }, 120_000);

  it("counts the commands on every node: a tasks/get 1, a tasks/cancel through another instance 4 calls (5 with the PUBLISH its write script makes)", async () => {
    const taskId = await start("hang");
    const commands = async () => {
      let total = 0;
      for (const node of cluster.nodes.filter((n) => n.answering)) {
        const s = await node.commandStats();
        total += (s.evalsha ?? 0) + (s.eval ?? 0) + (s.spublish ?? 0) + (s.publish ?? 0);
      }
      return total;
    };
    // every script known on every master first (a node that lacks one learns it by EVAL once)
    await modern(1, "tasks/get", { taskId });
    await cluster.resetStats();
    expect((await modern(1, "tasks/get", { taskId })).result.status).toBe("working");
    const get = await commands();
    await cluster.resetStats();
    expect((await modern(1, "tasks/cancel", { taskId })).result.resultType).toBe("complete");
    await until(() => instances[0]!.stderr.includes(`aborted ${taskId}`), 15_000, "the abort on A");
    // the scripts' own PUBLISH of the change counts once in its script's node; the rest are calls
    const cancel = await commands();
    console.log(
      `commands on the cluster: tasks/get ${get}; tasks/cancel through another instance ${cancel} (with the change's PUBLISH inside the write)`,
    );
    expect(get).toBe(1);
    expect(cancel).toBe(5);
  });
});

describe.runIf(run)("an instance killed on a Redis Cluster", () => {
  const LEASE_MS = 2500;
  const RENEW_MS = 500;
  const instances: Instance[] = [];
  beforeAll(async () => {
    if (!run) return;
    const env = {
      REDIS_CLUSTER: cluster.rootNodes.map((r) => r.url).join(","),
      CHANNEL: `${RUN}-killed`,
      LEASE_MS: String(LEASE_MS),
      RENEW_MS: String(RENEW_MS),
    };
    instances.push(...(await Promise.all(["A", "B"].map((name) => startInstance(name, env, SCRIPT)))));
  }, 60_000);
  afterAll(() => Promise.all(instances.map((i) => i.stop())));

  it("its tasks are failed by the other instance once their lease runs out", async () => {
    const [a, b] = instances as [Instance, Instance];
    const call = async (on: Instance, method: string, params: { [k: string]: unknown }) => {
      const res = await fetch(on.url, {
        method: "POST",
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "mcp-protocol-version": V,
          "mcp-method": method,
          "mcp-name": (params.name ?? params.taskId) as string,
          "x-user": "ada",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { _meta: META, ...params } }),
      });
      return ((await res.json()) as { result: any }).result;
    };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await call(a, "tools/call", { name: "hang", arguments: {} })).taskId);
    await until(() => ids.every((id) => a.stderr.includes(`started ${id}`)), 15_000, "the tasks to start");
    a.child.kill("SIGKILL");
    const killed = Date.now();
    const status = async (id: string) => (await call(b, "tasks/get", { taskId: id })).status;
    await until(async () => (await status(ids[0]!)) === "failed", 30_000, "the first task to fail");
    const took = Date.now() - killed;
    console.log(
      `tasks of a killed instance failed ${took} ms after the kill (lease ${LEASE_MS}, renew ${RENEW_MS})`,
    );
    expect(took).toBeGreaterThanOrEqual(LEASE_MS - RENEW_MS);
    for (const id of ids) {
      await until(async () => (await status(id)) === "failed", 2 * (LEASE_MS + RENEW_MS), `${id} to fail`);
      expect(await call(b, "tasks/get", { taskId: id })).toMatchObject({
        status: "failed",
        error: { code: -32603, message: "The server running the task went away" },
      });
    }
  }, 60_000);
  it("judges again, later, a dead runner's task that a sweep could not judge", async () => {
    const prefix = `picomcp:tasks:${RUN}:${++n}:`;
    const options = { prefix, leaseMs: 600, renewMs: 200, timeoutMs: 200, log: () => {} };
    const raw = await connected();
    const peer: TaskPeer = { deliver: async () => false, changed: () => {} };
    const dead = new RedisTaskStore(await connected(), options);
    stores.push(dead);
    dead.attach(peer);
    await dead.ready;
    await dead.create(working("orphaned"));
    dead.close();
    // the sweeper's first try picks the task out of its runner's index, but can neither read it nor
    // write the index (a sweeper that died there): the task must stay to be judged
    let tries = 0;
    const sweeper = new RedisTaskStore(
      faulty(await connected(), (keys, args) => {
        const read = keys[0]!.endsWith("task:orphaned");
        const write = keys[0]!.includes(`runner:${dead.id}`) && args.length >= 2;
        if (!(read || write) || tries >= 2) return undefined;
        tries++;
        return "fail";
      }),
      options,
    );
    stores.push(sweeper);
    sweeper.attach(peer);
    const key = `${prefix}task:orphaned`;
    await until(
      async () =>
        (await (raw as { hGet(k: string, f: string): Promise<unknown> }).hGet(key, "status")) === "failed",
      15_000,
      "the task to be failed",
    );
    expect(tries).toBe(2);
  }, 20_000);
});

/** A running task with no ttl. */
function working(taskId: string): TaskRecord {
  const at = new Date().toISOString();
  return { taskId, status: "working", createdAt: at, lastUpdatedAt: at, ttlMs: null } as TaskRecord;
}
