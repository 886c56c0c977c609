// Shared 2025 sessions on a real Sentinel set of the file's own (a master, a replica, three sentinels:
// test/redis-sentinel.ts), through a Sentinel client as users create it. Faults: the master paused → a
// session's request gets 503 with Retry-After within the deadline (never a wait of the client's
// choosing), and is served once the set has a master again; the master killed (the replica takes
// over), a sentinel killed, and then every process restarted → no session lost. Replication is
// asynchronous: each fault waits for the replica to have every write first. A session of the layout
// before is found and moved, as on one node.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { RedisSessionStore } from "../../src/redis/index.js";
import { startSentinel, withDeployment } from "../redis-deployments.js";
import { until } from "../redis-helpers.js";
import { everySession, hex, NO_BUS, RECORD, replicated } from "../redis-sessions-faults.js";
import { authenticate } from "../redis-sessions-helpers.js";

const run = withDeployment("sentinel");
let d: Awaited<ReturnType<typeof startSentinel>>;
const clients: { destroy(): void }[] = [];

beforeAll(async () => {
  if (run) d = await startSentinel();
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

const masters = async () => [await d.master()];

describe.runIf(run)("RedisSessionStore on Sentinel", () => {
  it("the master paused: a session's request gets 503 with Retry-After within the deadline; served again once there is a master", async () => {
    const client = await connected();
    const timeoutMs = 500;
    const log: string[] = [];
    const store = new RedisSessionStore(client, {
      bus: NO_BUS,
      prefix: "picomcp:paused:",
      timeoutMs,
      log: (l) => void log.push(l),
    });
    const server = new McpServer({ name: "paused", version: "1.0.0", onError: () => {} });
    // on the wire: a listener of its own on 127.0.0.1
    const http = await serve(server, { port: 0, sessions: store, authenticate });
    const headers = {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      authorization: "Bearer ada",
    };
    const post = (body: unknown, more: Record<string, string> = {}) =>
      fetch(http.url, { method: "POST", headers: { ...headers, ...more }, body: JSON.stringify(body) });
    const init = await post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    expect(init.status).toBe(200);
    await init.text();
    const sid = init.headers.get("mcp-session-id")!;
    const ping = () =>
      post(
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
      );
    expect((await ping()).status).toBe(200);
    await replicated(masters);
    const master = await d.master();
    master.pause();
    let slowest = 0;
    try {
      for (let i = 0; i < 3; i++) {
        const began = performance.now();
        const res = await ping();
        const ms = performance.now() - began;
        slowest = Math.max(slowest, ms);
        expect([res.status, res.headers.get("retry-after"), await res.json()]).toEqual([
          503,
          "1",
          {
            jsonrpc: "2.0",
            error: { code: -32000, message: "Service Unavailable: the session store is unreachable" },
          },
        ]);
        expect(ms).toBeLessThan(timeoutMs + 1500);
      }
    } finally {
      await d.resume(master);
    }
    const back = Date.now();
    await until(
      async () => (await ping()).status === 200 && store.stats.ready,
      20_000,
      "the session to be served",
    );
    console.log(
      `Sentinel, the master paused: 503 in at most ${Math.round(slowest)} ms (deadline ${timeoutMs} ms); once resumed, served again after ${Date.now() - back} ms`,
    );
    expect(log[0]).toMatch(
      /^picomcp\/redis: Redis is unreachable \(.+\); requests of shared sessions get 503 until it is back$/,
    );
    expect(log.at(-1)).toBe("picomcp/redis: Redis is back; shared sessions are served again");
    await http.close();
  }, 60_000);

  it("finds a session of the layout before (prefix + id) and moves it, as on one node", async () => {
    const client = await connected();
    const prefix = "picomcp:layout:";
    const store = new RedisSessionStore(client, { bus: NO_BUS, prefix, log: () => {} });
    const id = hex();
    await client.hSet(prefix + id, {
      r: JSON.stringify({ v: "2025-11-25", c: {}, a: false }),
      k: "anonymous",
    });
    await client.pExpire(prefix + id, 60_000);
    expect((await store.touch(id, 60_000))?.caller).toBe("anonymous");
    expect([await client.exists(prefix + id), await client.exists(`${prefix}s:${id}`)]).toEqual([0, 1]);
    expect(await store.end(id)).toBe(true);
    expect(store.stats.failures).toBe(0);
  });

  it("loses no session when a sentinel is killed, every process restarts, or the master is killed (the replica takes over)", async () => {
    const client = await connected();
    const store = new RedisSessionStore(client, { bus: NO_BUS, prefix: "picomcp:failover:", log: () => {} });
    const caps = { ttlMs: 600_000, perCaller: 100, total: 10_000 };
    const ids = Array.from({ length: 40 }, hex);
    for (const id of ids) expect(await store.create(id, RECORD, caps)).toBe("ok");
    for (const id of ids.slice(0, 10)) await store.update(id, { logLevel: "debug" });
    // the failover last: a set restarted right after one waits ~10 s for its sentinels to make the old
    // master a replica
    await d.killSentinel(0);
    const afterSentinel = await everySession(store, ids, 10, "a sentinel killed");
    await replicated(masters);
    const restartedAt = Date.now();
    await d.restartAll();
    const up = Date.now() - restartedAt;
    const afterRestart = await everySession(store, ids, 10, "every process restarted");
    await replicated(masters);
    const killedAt = Date.now();
    await d.killMaster();
    const failedOver = Date.now() - killedAt;
    const afterKill = await everySession(store, ids, 10, "the master killed");
    console.log(
      `Sentinel: the master killed, failed over in ${failedOver} ms, every session served ${afterKill} ms later; a sentinel killed: served within ${afterSentinel} ms; every process restarted: up in ${up} ms, every session served ${afterRestart} ms later; none lost`,
    );
  }, 120_000);
});
