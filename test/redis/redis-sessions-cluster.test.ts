// Shared 2025 sessions on a real Redis Cluster of the file's own (6 nodes, 3 masters with a replica each:
// test/redis-cluster.ts). Every script of RedisSessionStore touches one key, so each session's hash, each
// caller's set and the total sit where their own names hash: the commands land on the master of their
// key, counted per master with INFO commandstats (300 sessions of 50 callers spread over the three), and
// a session request costs one command. Faults: a paused master → the requests of its sessions get 503
// with Retry-After within the deadline while the others are served, and all are served once it is back;
// a master killed (its replica takes over) and then every node restarted → no session lost. Replication
// is asynchronous: each fault waits for the replicas to have every write first (a write acknowledged by
// a master and lost with it before its replica had it is lost; the store's JSDoc says so).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { RedisSessionStore } from "../../src/redis/index.js";
import { slotOf } from "../../src/redis/link.js";
import * as scripts from "../../src/redis/session-scripts.js";
import { startCluster, withDeployment } from "../redis-deployments.js";
import { until } from "../redis-helpers.js";
import { everySession, hex, NO_BUS, RECORD, replicated } from "../redis-sessions-faults.js";
import { authenticate } from "../redis-sessions-helpers.js";

const run = withDeployment("cluster");
let d: Awaited<ReturnType<typeof startCluster>>;
const clients: { destroy(): void }[] = [];

beforeAll(async () => {
  if (run) d = await startCluster();
}, 60_000);
afterAll(async () => {
  for (const c of clients) c.destroy();
  await d?.stop();
});

async function connected() {
  const client = d.client();
  client.on("error", () => {});
  await client.connect();
  clients.push(client);
  return client;
}

type Cluster = Awaited<ReturnType<typeof connected>>;

/** The port of the master that serves `key` now, as the client knows it. */
const masterPort = (client: Cluster, key: string) => client.slots[slotOf(key)]!.master.port;

/** Every master knows the store's scripts: the counts below are the store's own commands, no EVAL to teach one. */
async function teach(): Promise<void> {
  for (const m of await d.masterNodes())
    for (const s of Object.values(scripts)) await m.cli("SCRIPT", "LOAD", s.source);
}

/** The scripts each master ran since the last reset (EVALSHA and EVAL), by port. */
async function ran(): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const m of await d.masterNodes()) {
    const s = await m.commandStats();
    out.set(m.port, (s.evalsha ?? 0) + (s.eval ?? 0));
  }
  return out;
}

const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

describe.runIf(run)("RedisSessionStore on a Redis Cluster", () => {
  it("spreads 300 sessions of 50 callers over the three masters: each command on the master of its one key", async () => {
    const client = await connected();
    const store = new RedisSessionStore(client, { bus: NO_BUS, prefix: "picomcp:spread:" });
    const caps = { ttlMs: 600_000, perCaller: 100, total: 10_000 };
    const ids = Array.from({ length: 300 }, hex);
    const callerOf = (i: number) => `principal:u${i % 50}`;
    const masters = (await d.masterNodes()).map((m) => m.port);
    const expect_ = (keysOf: (id: string, i: number) => string[]) => {
      const want = new Map(masters.map((p) => [p, 0]));
      ids.forEach((id, i) => {
        for (const key of keysOf(id, i))
          want.set(masterPort(client, key), want.get(masterPort(client, key))! + 1);
      });
      return want;
    };
    const hashOf = (id: string) => `picomcp:spread:s:${id}`;
    const setsOf = (i: number) => [`picomcp:spread:caller:${callerOf(i)}`, "picomcp:spread:all"];
    await teach();
    const figures: string[] = [];
    const phase = async (
      what: string,
      work: () => Promise<unknown>,
      keysOf: (id: string, i: number) => string[],
    ) => {
      await d.resetStats();
      await work();
      const got = await ran();
      expect([what, got]).toEqual([what, expect_(keysOf)]);
      figures.push(`${what}: ${[...got.values()].join(" / ")}`);
      return got;
    };
    const batches = async (each: (id: string, i: number) => Promise<unknown>) => {
      for (let at = 0; at < ids.length; at += 50)
        await Promise.all(ids.slice(at, at + 50).map((id, k) => each(id, at + k)));
    };
    await phase(
      "create (3 each)",
      () =>
        batches(async (id, i) =>
          expect(await store.create(id, { ...RECORD, caller: callerOf(i) }, caps)).toBe("ok"),
        ),
      (id, i) => [hashOf(id), ...setsOf(i)],
    );
    const touched = await phase(
      "touch (1 each)",
      () => batches(async (id, i) => expect((await store.touch(id, caps.ttlMs))?.caller).toBe(callerOf(i))),
      (id) => [hashOf(id)],
    );
    // the sessions themselves, the bulk of the load, spread: each master serves a fair share
    for (const n of touched.values()) expect(n).toBeGreaterThan(60);
    await phase(
      "end (3 each)",
      () => batches(async (id) => expect(await store.end(id)).toBe(true)),
      (id, i) => [hashOf(id), ...setsOf(i)],
    );
    expect(store.stats).toMatchObject({ ready: true, failures: 0, calls: 2100 });
    console.log(
      `300 sessions of 50 callers, scripts run per master (${masters.join(" / ")}): ${figures.join("; ")}`,
    );
  }, 60_000);

  it("works as well with a prefix whose hash tag puts every key in one slot, and moves a session of the layout before", async () => {
    const client = await connected();
    const prefix = "{app}:session:";
    const store = new RedisSessionStore(client, { bus: NO_BUS, prefix, log: () => {} });
    const caps = { ttlMs: 60_000, perCaller: 2, total: 3 };
    const [a, b, c, old] = [hex(), hex(), hex(), hex()];
    expect(await store.create(a, RECORD, caps)).toBe("ok");
    expect(await store.create(b, RECORD, caps)).toBe("ok");
    expect(await store.create(c, RECORD, caps)).toBe("caller");
    expect(await store.create(c, { ...RECORD, caller: "principal:bo" }, caps)).toBe("ok");
    expect(await store.create(hex(), { ...RECORD, caller: "principal:cy" }, caps)).toBe("total");
    await store.update(a, { logLevel: "debug", subscribe: ["note://a"] });
    expect(await store.touch(a, 60_000)).toMatchObject({ logLevel: "debug", subscriptions: ["note://a"] });
    // a session as the layout before kept it (prefix + id; only ever usable on a cluster with a tag)
    await client.hSet(prefix + old, {
      r: JSON.stringify({ v: "2025-11-25", c: {}, a: false }),
      k: "anonymous",
    });
    await client.pExpire(prefix + old, 60_000);
    expect((await store.touch(old, 60_000))?.caller).toBe("anonymous");
    expect([await client.exists(prefix + old), await client.exists(`${prefix}s:${old}`)]).toEqual([0, 1]);
    expect(await store.end(b)).toBe(true);
    // the moved session's first touch put it in the caps' sets: it holds the place b gave back
    expect(await store.create(hex(), RECORD, caps)).toBe("total");
    expect(await store.end(old)).toBe(true);
    expect(await store.create(hex(), RECORD, caps)).toBe("ok");
    // every key in the slot of the tag
    expect(new Set([`${prefix}s:${a}`, `${prefix}all`, `${prefix}caller:principal:ada`].map(slotOf))).toEqual(
      new Set([slotOf("app")]),
    );

    // without a tag, the key of the layout before is in another slot: not looked for (never CROSSSLOT)
    const plain = new RedisSessionStore(client, { bus: NO_BUS, prefix: "plain:", log: () => {} });
    const lost = hex();
    await client.hSet(`plain:${lost}`, { r: "{}", k: "anonymous" });
    expect(slotOf(`plain:${lost}`)).not.toBe(slotOf(`plain:s:${lost}`));
    expect(await plain.touch(lost, 60_000)).toBeUndefined();
    expect(await plain.end(lost)).toBe(false);
    expect(await client.exists(`plain:${lost}`)).toBe(1);
    expect([store.stats.failures, plain.stats.failures]).toEqual([0, 0]);
  });

  it("a paused master: its sessions' requests get 503 with Retry-After within the deadline, the others are served; all once it is back", async () => {
    const client = await connected();
    const timeoutMs = 500;
    const log: string[] = [];
    const prefix = "picomcp:paused:";
    const store = new RedisSessionStore(client, {
      bus: NO_BUS,
      prefix,
      timeoutMs,
      log: (l) => void log.push(l),
    });
    const server = new McpServer({ name: "paused", version: "1.0.0", onError: () => {} });
    // on the wire: a listener of its own on 127.0.0.1
    const http = await serve(server, { port: 0, sessions: store, authenticate });
    const headers = { accept: "application/json, text/event-stream", "content-type": "application/json" };
    const post = (body: unknown, more: Record<string, string>) =>
      fetch(http.url, { method: "POST", headers: { ...headers, ...more }, body: JSON.stringify(body) });
    const masters = await d.masterNodes();
    // the master of the total: sessions on it get 503, and so does every initialize (its place in the total)
    const paused = masters.find((m) => m.port === masterPort(client, `${prefix}all`))!;
    // sessions until every master holds two
    const sessions: { sid: string; auth: string; port: number }[] = [];
    await teach();
    await d.resetStats();
    const perMaster = () => masters.map((m) => sessions.filter((s) => s.port === m.port).length);
    while (perMaster().some((n) => n < 2)) {
      const auth = `Bearer p${sessions.length}`;
      const init = {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      };
      const res = await post(init, { authorization: auth });
      expect(res.status).toBe(200);
      await res.text();
      const sid = res.headers.get("mcp-session-id")!;
      sessions.push({ sid, auth, port: masterPort(client, `${prefix}s:${sid}`) });
    }
    const created = [...(await ran()).values()].reduce((a, b) => a + b);
    const ping = (s: (typeof sessions)[number]) =>
      post(
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { "mcp-session-id": s.sid, "mcp-protocol-version": "2025-11-25", authorization: s.auth },
      );
    await d.resetStats();
    for (const s of sessions) expect((await ping(s)).status).toBe(200);
    const requested = [...(await ran()).values()].reduce((a, b) => a + b);
    expect([created, requested]).toEqual([3 * sessions.length, sessions.length]);

    paused.pause();
    try {
      const answers = await Promise.all(
        sessions.map(async (s) => {
          const began = performance.now();
          const res = await ping(s);
          return { s, res, ms: performance.now() - began, body: await res.json() };
        }),
      );
      for (const { s, res, ms, body } of answers) {
        if (s.port === paused.port) {
          expect([res.status, res.headers.get("retry-after"), body]).toEqual([
            503,
            "1",
            {
              jsonrpc: "2.0",
              error: { code: -32000, message: "Service Unavailable: the session store is unreachable" },
            },
          ]);
          // the deadline, and the little a loaded machine adds to it
          expect(ms).toBeLessThan(timeoutMs + 1500);
        } else {
          expect([res.status, body]).toEqual([200, { jsonrpc: "2.0", id: 1, result: {} }]);
        }
      }
      const slowest = Math.max(...answers.filter((a) => a.s.port === paused.port).map((a) => a.ms));
      console.log(
        `a paused master: ${answers.filter((a) => a.res.status === 503).length} of ${sessions.length} sessions answered 503 (the slowest in ${Math.round(slowest)} ms, deadline ${timeoutMs} ms), the others 200`,
      );
      expect(store.stats.timeouts).toBeGreaterThan(0);
      // an initialize: its caller's place reserved on a master that answers, the total's on the paused
      // one: 503 within the deadline, and the caller's place taken back
      let n = 0;
      while (masterPort(client, `${prefix}caller:principal:new${n}`) === paused.port) n++;
      const began = performance.now();
      const refused = await post(INIT, { authorization: `Bearer new${n}` });
      expect([refused.status, refused.headers.get("retry-after")]).toEqual([503, "1"]);
      expect(performance.now() - began).toBeLessThan(timeoutMs + 1500);
      await until(
        async () => (await client.zCard(`${prefix}caller:principal:new${n}`)) === 0,
        5_000,
        "the caller's place taken back",
      );
    } finally {
      await d.resume(paused);
    }
    // back (as a master, or as the replica of the one that took over): every session served again, and
    // the store ready once calls have answered a deadline after the last failure
    await until(
      async () => (await Promise.all(sessions.map(ping))).every((r) => r.status === 200) && store.stats.ready,
      20_000,
      "every session to be served again",
    );
    // told: down (with its cause), and back last
    expect(log[0]).toMatch(
      /^picomcp\/redis: Redis is unreachable \(.+\); requests of shared sessions get 503 until it is back$/,
    );
    expect(log.at(-1)).toBe("picomcp/redis: Redis is back; shared sessions are served again");
    await http.close();
  }, 60_000);

  it("loses no session when a master is killed (its replica takes over), nor when every node restarts", async () => {
    const client = await connected();
    const store = new RedisSessionStore(client, { bus: NO_BUS, prefix: "picomcp:failover:", log: () => {} });
    const caps = { ttlMs: 600_000, perCaller: 100, total: 10_000 };
    const ids = Array.from({ length: 60 }, hex);
    for (const id of ids) expect(await store.create(id, RECORD, caps)).toBe("ok");
    for (const id of ids.slice(0, 10)) await store.update(id, { logLevel: "debug" });
    await replicated(() => d.masterNodes());
    const victim = (await d.masterNodes())[1]!;
    const onVictim = ids.filter(
      (id) => masterPort(client, `picomcp:failover:s:${id}`) === victim.port,
    ).length;
    const killedAt = Date.now();
    await d.killMaster(1);
    const failedOver = Date.now() - killedAt;
    const afterKill = await everySession(store, ids, 10, "a master killed");
    await d.restart(victim);
    await replicated(() => d.masterNodes());
    const restartedAt = Date.now();
    await d.restartAll();
    const up = Date.now() - restartedAt;
    const afterRestart = await everySession(store, ids, 10, "every node restarted");
    console.log(
      `a master killed (${onVictim} of ${ids.length} sessions on it): the cluster failed over in ${failedOver} ms, every session served ${afterKill} ms later; every node restarted: up in ${up} ms, every session served ${afterRestart} ms later; none lost`,
    );
  }, 120_000);
});

// a type check: a cluster client is a RedisClient as it is (no cast)
void ((c: Cluster) => new RedisSessionStore(c, { bus: NO_BUS }));
