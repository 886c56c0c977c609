// A client's Mcp-Session-Id never names a key of the session store: on a real redis-server, ids like
// `all` or `caller:anonymous` (the store's indexes) are unknown sessions (404), the store logs no false
// outage, the indexes stay whole, and a real outage afterwards is still told. The memory store alike.
import { createClient } from "redis";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler, MemorySessionStore } from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";
import { RedisBus, RedisSessionStore } from "../../src/redis/index.js";
import { RUN, until, useRedis, withRedis, withRedisServer } from "../redis-helpers.js";
import { type SharedInstance, startSharedInstance } from "../redis-sessions-helpers.js";

const JSON_SSE = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const PING = { jsonrpc: "2.0", id: 1, method: "ping" };
const NOT_FOUND = { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" } };
/** Ids that name the store's own keys, or have another form than the handler's ids. */
const FORGED = [
  "all",
  "caller:anonymous",
  "caller:anonymous:127.0.0.1",
  "caller:",
  "s:",
  "__proto__",
  "ALL",
  "A".repeat(32),
  "0".repeat(31),
];

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of cleanup.splice(0).reverse()) await stop();
});

type Fetch = (request: Request) => Promise<Response>;
const via =
  (_url: string): Fetch =>
  (request) =>
    fetch(request);

/** POST, GET and DELETE with `sid`: each must be the 404 of an unknown session. */
async function probe(send: Fetch, url: string, sid: string) {
  const headers = { ...JSON_SSE, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
  const answers = [
    await send(new Request(url, { method: "POST", headers, body: JSON.stringify(PING) })),
    await send(new Request(url, { method: "GET", headers: { ...headers, accept: "text/event-stream" } })),
    await send(new Request(url, { method: "DELETE", headers })),
  ];
  for (const a of answers) expect([sid, a.status, await a.json()]).toEqual([sid, 404, NOT_FOUND]);
}

async function init(send: Fetch, url: string): Promise<string> {
  const res = await send(new Request(url, { method: "POST", headers: JSON_SSE, body: JSON.stringify(INIT) }));
  expect(res.status).toBe(200);
  return res.headers.get("mcp-session-id")!;
}

async function ping(send: Fetch, url: string, sid: string): Promise<number> {
  const headers = { ...JSON_SSE, "mcp-session-id": sid };
  return (await send(new Request(url, { method: "POST", headers, body: JSON.stringify(PING) }))).status;
}

describe.runIf(withRedis)("RedisSessionStore: session ids and the store's keys", () => {
  it.runIf(withRedisServer)(
    "ids naming the indexes are unknown sessions: 404, no outage logged, the indexes whole; a real outage is still logged",
    async () => {
      const redis = await useRedis();
      cleanup.push(() => redis.stop());
      const a: SharedInstance = await startSharedInstance("A", redis.url);
      cleanup.push(() => a.stop());
      const send = via(a.url);
      const sid = await init(send, a.url);
      expect(sid).toMatch(/^[0-9a-f]{32}$/);
      for (const forged of FORGED) await probe(send, a.url, forged);
      expect(a.log).toEqual([]);
      // the indexes are what they were, and the real session is served
      const raw = createClient({ url: redis.url });
      raw.on("error", () => {});
      await raw.connect();
      cleanup.push(async () => raw.destroy());
      const prefix = `picomcp:session:${RUN}:`;
      expect(await raw.type(`${prefix}all`)).toBe("zset");
      // an anonymous caller's index is its address's (serve() tells anonymous callers apart by address)
      expect(await raw.type(`${prefix}caller:anonymous:127.0.0.1`)).toBe("zset");
      expect(await raw.zScore(`${prefix}all`, sid)).not.toBeNull();
      expect(await raw.type(`${prefix}s:${sid}`)).toBe("hash");
      expect(await ping(send, a.url, sid)).toBe(200);
      // a real outage: told once, with its cause
      await redis.stop();
      await until(async () => (await ping(send, a.url, sid)) === 503, 10_000, "503");
      const told = a.log.filter((l) => l.includes("requests of shared sessions get 503"));
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(/^picomcp\/redis: Redis is unreachable \(/);
      expect(a.log.join("\n")).not.toContain("WRONGTYPE");
    },
    30_000,
  );

  it("a session the release before kept at prefix + id is found there once and moved under s: (a rolling deploy)", async () => {
    const redis = await useRedis();
    cleanup.push(() => redis.stop());
    const client = createClient({ url: redis.url });
    client.on("error", () => {});
    await client.connect();
    cleanup.push(async () => client.destroy());
    const bus = new RedisBus(client as never, { channel: `picomcp:changes:${RUN}:moved` });
    await bus.ready;
    cleanup.push(async () => bus.close());
    const prefix = `picomcp:session:${RUN}:moved:`;
    const store = new RedisSessionStore(client as never, { bus, prefix, log: () => {} });
    const record = {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: undefined,
      principal: undefined,
      authenticated: false,
      caller: "anonymous",
      logLevel: undefined,
      subscriptions: [],
    };
    const caps = { ttlMs: 60_000, perCaller: 10, total: 10 };
    // three sessions as the release before left them: the hash at prefix + id, the indexes as now
    const [a, b, c] = ["a", "b", "c"].map((x) => x.repeat(32)) as [string, string, string];
    for (const id of [a, b, c]) {
      expect(await store.create(id, record, caps)).toBe("ok");
      await client.rename(`${prefix}s:${id}`, prefix + id);
    }
    // touched: found, moved, its expiry kept going
    expect((await store.touch(a, 60_000))?.caller).toBe("anonymous");
    expect([await client.exists(prefix + a), await client.type(`${prefix}s:${a}`)]).toEqual([0, "hash"]);
    expect(await client.pTTL(`${prefix}s:${a}`)).toBeGreaterThan(0);
    // updated: moved, and changed
    await store.update(b, { logLevel: "debug" });
    expect(await client.exists(prefix + b)).toBe(0);
    expect((await store.touch(b, 60_000))?.logLevel).toBe("debug");
    // ended: gone from its key and from the caps' sets
    expect(await store.end(c)).toBe(true);
    expect([await client.exists(prefix + c), await client.exists(`${prefix}s:${c}`)]).toEqual([0, 0]);
    expect(await client.zScore(`${prefix}all`, c)).toBeNull();
    expect(await client.zCard(`${prefix}all`)).toBe(2);
    // an id of another form is never looked for at prefix + id
    await client.hSet(`${prefix}forged`, { r: "{}", k: "anonymous" });
    expect(await store.touch("forged", 60_000)).toBeUndefined();
    expect(await client.type(`${prefix}forged`)).toBe("hash");
  });

  it("the store itself keeps records apart from its indexes: any id is read as a session's", async () => {
    const redis = await useRedis();
    cleanup.push(() => redis.stop());
    const client = createClient({ url: redis.url });
    client.on("error", () => {});
    await client.connect();
    cleanup.push(async () => client.destroy());
    const bus = new RedisBus(client as never, { channel: `picomcp:changes:${RUN}:keys` });
    await bus.ready;
    cleanup.push(async () => bus.close());
    const log: string[] = [];
    const store = new RedisSessionStore(client as never, {
      bus,
      prefix: `picomcp:session:${RUN}:store:`,
      log: (l) => void log.push(l),
    });
    const record = {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: undefined,
      principal: undefined,
      authenticated: false,
      caller: "anonymous",
      logLevel: undefined,
      subscriptions: [],
    };
    expect(await store.create("real", record, { ttlMs: 60_000, perCaller: 10, total: 10 })).toBe("ok");
    for (const id of ["all", "caller:anonymous", "caller:"]) {
      expect(await store.touch(id, 60_000)).toBeUndefined();
      await store.update(id, { logLevel: "debug" });
      expect(await store.end(id)).toBe(false);
    }
    expect(log).toEqual([]);
    expect((await store.touch("real", 60_000))?.caller).toBe("anonymous");
    expect(await store.end("real")).toBe(true);
  });

  it.runIf(withRedisServer)(
    "an error Redis answers with is no outage (nothing logged); a real outage is told once, with its cause, and counted",
    async () => {
      const redis = await useRedis();
      cleanup.push(() => redis.stop());
      const client = createClient({ url: redis.url });
      client.on("error", () => {});
      await client.connect();
      cleanup.push(async () => client.destroy());
      const bus = new RedisBus(client as never, { channel: `picomcp:changes:${RUN}:health`, log: () => {} });
      await bus.ready;
      cleanup.push(async () => bus.close());
      const log: string[] = [];
      const prefix = `picomcp:session:${RUN}:health:`;
      const store = new RedisSessionStore(client as never, { bus, prefix, log: (l) => void log.push(l) });
      // a key of another type where a session's hash would be (only an operator's hand can put it there)
      await client.set(`${prefix}s:odd`, "a string");
      await expect(store.touch("odd", 60_000)).rejects.toThrow(/WRONGTYPE/);
      expect(await store.touch("none", 60_000)).toBeUndefined();
      // the refused call is a failure of its own (an error reply), not an outage: still ready, nothing logged
      expect([log, store.stats]).toEqual([
        [],
        { ready: true, calls: 2, failures: 1, timeouts: 0, refused: 0, outages: 0 },
      ]);
      // the real outage afterwards is told
      await redis.stop();
      await until(
        async () =>
          await store.touch("none", 60_000).then(
            () => false,
            () => true,
          ),
        10_000,
        "failure",
      );
      expect(log).toHaveLength(1);
      expect(log[0]).toMatch(
        /^picomcp\/redis: Redis is unreachable \(.*\); requests of shared sessions get 503 until it is back$/,
      );
      expect(store.stats).toMatchObject({ ready: false, outages: 1 });
      expect(store.stats.failures).toBeGreaterThan(0);
    },
    30_000,
  );
});

describe("MemorySessionStore: session ids of another form", () => {
  it("are unknown sessions, and the real one is served", async () => {
    const server = new McpServer({ name: "keys", version: "1.0.0", onError: () => {} });
    const handler = createHttpHandler(server, { sessions: new MemorySessionStore() });
    cleanup.push(async () => handler.close());
    const url = "http://127.0.0.1:3000/mcp";
    const send: Fetch = (r) => handler(r);
    const sid = await init(send, url);
    for (const forged of FORGED) await probe(send, url, forged);
    expect(await ping(send, url, sid)).toBe(200);
  });
});
