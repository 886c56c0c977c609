// picomcp/redis against a real redis-server: two picomcp processes behind a round-robin proxy share
// change events (2026-07-28 listen streams and 2025 session subscribers alike), survive a Redis
// restart, degrade to local delivery while it is down; sessions need sticky routing (404 otherwise).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisBus } from "../../src/redis/index.js";
import {
  freePort,
  type Instance,
  RUN,
  SseMessages,
  startInstance,
  startProxy,
  startRedis,
  until,
  useRedis,
  withRedis,
  withRedisServer,
} from "../redis-helpers.js";

const V = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
};
const JSON_SSE = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const URIS = ["note://a", "note://end"];
const UNREACHABLE = "picomcp/redis: Redis is unreachable";
const BUS_DOWN = "change events reach this instance's clients only until it is back";
const BUS_BACK = "picomcp/redis: Redis is back; change events cross instances again";

let redisUrl: string;
let redis: { url: string; port: number; stop(): Promise<void> };
const instances: Instance[] = [];
let proxy: { url: string; close(): Promise<void> };

// without a Redis (and outside CI) the tests that need one are skipped: test/redis-setup.ts says so once
beforeAll(async () => {
  if (!withRedis) return;
  redis = await useRedis();
  redisUrl = redis.url;
  const env = { REDIS_URL: redisUrl };
  instances.push(...(await Promise.all([startInstance("A", env), startInstance("B", env)])));
  proxy = await startProxy(
    instances.map((i) => i.url),
    true,
  );
}, 20_000);

afterAll(async () => {
  await proxy?.close();
  await Promise.all(instances.map((i) => i.stop()));
  await redis?.stop();
});

/** A 2026-07-28 request through the proxy (`to`: the instance it must reach). */
function modern(method: string, params: object, id: number | string, to?: number) {
  return fetch(proxy.url, {
    method: "POST",
    headers: {
      ...JSON_SSE,
      "mcp-protocol-version": V,
      "mcp-method": method,
      ...(method === "tools/call" ? { "mcp-name": (params as { name: string }).name } : {}),
      ...(to === undefined ? {} : { "x-to": String(to) }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: META, ...params } }),
  });
}

/** `touch` on instance `to`: it announces `uri` changed; resolves with the instance's name. */
async function touch(uri: string, to: number): Promise<string> {
  const res = await modern("tools/call", { name: "touch", arguments: { uri } }, `t-${uri}`, to);
  const body = (await res.json()) as { result: { content: { text: string }[] } };
  return body.result.content[0]!.text;
}

/** A legacy (2025-11-25) POST of session `sid` through the proxy. */
function legacy(body: object, sid?: string, url = proxy.url) {
  return fetch(url, {
    method: "POST",
    headers: { ...JSON_SSE, "mcp-protocol-version": "2025-11-25", ...(sid ? { "mcp-session-id": sid } : {}) },
    body: JSON.stringify(body),
  });
}

const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** A 2025-11-25 session subscribed to {@link URIS}, with its GET stream open. */
async function legacySubscriber(): Promise<{ backend: string; sse: SseMessages }> {
  const init = await legacy(INIT);
  const sid = init.headers.get("mcp-session-id")!;
  await init.text();
  expect((await legacy({ jsonrpc: "2.0", method: "notifications/initialized" }, sid)).status).toBe(202);
  for (const [i, uri] of URIS.entries()) {
    const res = await legacy(
      { jsonrpc: "2.0", id: i + 1, method: "resources/subscribe", params: { uri } },
      sid,
    );
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: i + 1, result: {} });
  }
  const get = await fetch(proxy.url, {
    headers: { accept: "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
  });
  expect(get.status).toBe(200);
  return { backend: init.headers.get("x-backend")!, sse: new SseMessages(get) };
}

/** A 2026-07-28 listen on {@link URIS}, acknowledged. */
async function listener(id: string): Promise<{ backend: string; sse: SseMessages }> {
  const res = await modern("subscriptions/listen", { notifications: { resourceSubscriptions: URIS } }, id);
  expect(res.status).toBe(200);
  const sse = new SseMessages(res);
  await sse.until((m) => m.length === 1);
  expect(sse.messages[0].method).toBe("notifications/subscriptions/acknowledged");
  return { backend: res.headers.get("x-backend")!, sse };
}

/** The URIs a stream heard of, sorted (listen streams and sessions word them differently). */
function heard(sse: SseMessages): string[] {
  return sse.messages
    .filter((m) => m.method === "notifications/resources/updated")
    .map((m) => m.params.uri as string)
    .sort();
}

const count = (uri: string, n: number) => (m: any[]) =>
  m.filter((x) => x.method === "notifications/resources/updated" && x.params.uri === uri).length >= n;

describe.runIf(withRedis)("two instances on one Redis, behind a round-robin proxy", () => {
  const streams: { backend: string; sse: SseMessages }[] = [];

  afterAll(async () => {
    for (const s of streams) await s.sse.close();
  });

  it("fans a resourceUpdated out to listen streams and session subscribers on both, once each", async () => {
    streams.push(
      await listener("L1"),
      await listener("L2"),
      await legacySubscriber(),
      await legacySubscriber(),
    );
    expect(streams.map((s) => s.backend)).toEqual(["0", "1", "0", "1"]);
    expect([await touch("note://a", 0), await touch("note://a", 1)]).toEqual(["A", "B"]);
    // the end marks come after every earlier message on the channel: a duplicate would be in by then
    await touch("note://end", 0);
    await touch("note://end", 1);
    for (const s of streams) await s.sse.until(count("note://end", 2));
    for (const s of streams)
      expect(heard(s.sse)).toEqual(["note://a", "note://a", "note://end", "note://end"]);
    const listen = streams[0]!.sse.messages[1];
    expect(listen).toEqual({
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "note://a", _meta: { "io.modelcontextprotocol/subscriptionId": "L1" } },
    });
    expect(streams[2]!.sse.messages[0]).toEqual({
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "note://a" },
    });
  });

  // it stops the test's own redis-server: not one that REDIS_URL names
  it.runIf(withRedisServer)(
    "Redis down: local delivery, one log line, no crash; Redis back: every subscription hears again",
    async () => {
      await redis.stop();
      for (const i of instances) await until(() => i.stderr.includes(BUS_DOWN));
      // A still answers and tells its own clients; B's cannot hear it (and never will: it was not queued)
      expect(await touch("note://a", 0)).toBe("A");
      for (const s of streams.filter((s) => s.backend === "0")) await s.sse.until(count("note://a", 3));
      redis = { ...redis, ...(await startRedis(redis.port)) };
      for (const i of instances) await until(() => i.stderr.includes(BUS_BACK));
      expect(await touch("note://a", 1)).toBe("B");
      await touch("note://end", 0);
      await touch("note://end", 1);
      for (const s of streams) await s.sse.until(count("note://end", 4));
      const a = (n: number) => Array<string>(n).fill("note://a");
      const end = Array<string>(4).fill("note://end");
      expect(streams.map((s) => heard(s.sse))).toEqual([
        [...a(4), ...end],
        [...a(3), ...end],
        [...a(4), ...end],
        [...a(3), ...end],
      ]);
      for (const i of instances) {
        expect(i.child.exitCode).toBe(null);
        const busLines = i.stderr
          .split("\n")
          .filter((l) => l.startsWith(UNREACHABLE) && l.includes(BUS_DOWN));
        expect(busLines).toHaveLength(1);
        expect(i.stderr.split("\n").filter((l) => l === BUS_BACK)).toHaveLength(1);
      }
    },
    30_000,
  );

  it("sessions need sticky routing: elsewhere a session is a clean 404, and a new initialize works", async () => {
    const roundRobin = await startProxy(
      instances.map((i) => i.url),
      false,
    );
    try {
      const init = await legacy(INIT, undefined, roundRobin.url);
      const sid = init.headers.get("mcp-session-id")!;
      expect([init.status, init.headers.get("x-backend")]).toEqual([200, "0"]);
      await init.text();
      const lost = await legacy({ jsonrpc: "2.0", method: "notifications/initialized" }, sid, roundRobin.url);
      expect([lost.status, lost.headers.get("x-backend")]).toEqual([404, "1"]);
      expect(await lost.json()).toEqual({
        jsonrpc: "2.0",
        error: { code: -32001, message: "Session not found" },
      });
      const again = await legacy(INIT, undefined, roundRobin.url);
      expect([again.status, again.headers.get("x-backend")]).toEqual([200, "0"]);
      expect(again.headers.get("mcp-session-id")).not.toBe(sid);
      expect(await again.json()).toMatchObject({ id: 0, result: { protocolVersion: "2025-11-25" } });
      // the official SDK client fails cleanly on the 404 (it is the application's to start over)
      const client = new Client({ name: "sdk", version: "1.0.0" });
      await expect(
        client.connect(new StreamableHTTPClientTransport(new URL(roundRobin.url))),
      ).rejects.toMatchObject({
        code: 404,
      });
      await client.close();
    } finally {
      await roundRobin.close();
    }
  });

  it("the official SDK client keeps its session through the sticky proxy", async () => {
    const client = new Client({ name: "sdk", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
    try {
      for (let i = 0; i < 4; i++) {
        const r = await client.callTool({ name: "touch", arguments: { uri: "note://sdk" } });
        expect(r.content).toEqual([{ type: "text", text: expect.stringMatching(/^[AB]$/) }]);
      }
      const served = new Set<string>();
      for (let i = 0; i < 4; i++)
        served.add(
          ((await client.callTool({ name: "touch", arguments: { uri: "x" } })).content as any)[0].text,
        );
      expect(served.size).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe("without Redis", () => {
  it("the default in-process bus fans out on one instance with no Redis anywhere", async () => {
    const solo = await startInstance("solo");
    const front = await startProxy([solo.url], true);
    const saved = proxy;
    proxy = front;
    try {
      const [l, s] = [await listener("solo"), await legacySubscriber()];
      expect(await touch("note://a", 0)).toBe("solo");
      await touch("note://end", 0);
      for (const x of [l, s]) await x.sse.until(count("note://end", 1));
      for (const x of [l, s]) expect(heard(x.sse)).toEqual(["note://a", "note://end"]);
      await Promise.all([l.sse.close(), s.sse.close()]);
      expect(solo.stderr).toBe("");
    } finally {
      proxy = saved;
      await front.close();
      await solo.stop();
    }
  });
});

describe.runIf(withRedis)("RedisBus in-process", () => {
  it("shares list changes only with share: 'all'; ignores its own echo and foreign messages", async () => {
    const url = redisUrl;
    const channel = `picomcp:test-lists:${RUN}`;
    const log = () => {};
    const buses = [
      new RedisBus(createClient({ url }), { channel, share: "all", log }),
      new RedisBus(createClient({ url }), { channel, share: "all", log }),
      new RedisBus(createClient({ url }), { channel, log }),
    ];
    const raw = createClient({ url });
    await raw.connect();
    try {
      await Promise.all(buses.map((b) => b.ready));
      const got = buses.map(() => [] as unknown[]);
      for (const [i, b] of buses.entries()) b.subscribe((e) => void got[i]!.push(e));
      await raw.publish(channel, "not json");
      await raw.publish(channel, JSON.stringify({ from: "x", event: { type: "resource_updated" } }));
      buses[0]!.publish({ type: "list_changed", kind: "tools" });
      buses[0]!.publish({ type: "resource_updated", uri: "note://end" });
      const end = (i: number) =>
        until(() => got[i]!.length > 0 && JSON.stringify(got[i]).includes("note://end"));
      await Promise.all([end(1), end(2)]);
      const tools = { type: "list_changed", kind: "tools" };
      const updated = { type: "resource_updated", uri: "note://end" };
      expect(got).toEqual([[tools, updated], [tools, updated], [updated]]);
    } finally {
      for (const b of buses) b.close();
      await raw.close();
    }
  });
});

describe.runIf(withRedisServer)("RedisBus started while Redis is down", () => {
  it("subscribes once the client is back after a first connect that failed; one line each way, one delivery", async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const lines: string[] = [];
    const client = createClient({ url, socket: { reconnectStrategy: false } });
    const bus = new RedisBus(client, { channel: "picomcp:test-late", log: (l) => lines.push(l) });
    const got: unknown[] = [];
    bus.subscribe((e) => void got.push(e));
    let ready = false;
    void bus.ready.then(() => {
      ready = true;
    });
    await until(() => lines.length > 0);
    expect(lines).toEqual([
      `picomcp/redis: Redis is unreachable (connect ECONNREFUSED 127.0.0.1:${port}); ${BUS_DOWN}`,
    ]);
    // it waits (retrying) for the subscription
    expect(ready).toBe(false);
    const late = await startRedis(port);
    const raw = createClient({ url });
    try {
      await raw.connect();
      await bus.ready;
      await client.connect();
      await until(() => lines.length === 2);
      expect(lines[1]).toBe(BUS_BACK);
      const message = (uri: string) =>
        JSON.stringify({ from: "other", event: { type: "resource_updated", uri } });
      await raw.publish("picomcp:test-late", message("note://a"));
      await raw.publish("picomcp:test-late", message("note://end"));
      await until(() => got.length >= 2);
      expect(got).toEqual([
        { type: "resource_updated", uri: "note://a" },
        { type: "resource_updated", uri: "note://end" },
      ]);
      expect(await raw.sendCommand(["PUBSUB", "NUMSUB", "picomcp:test-late"])).toEqual([
        "picomcp:test-late",
        1,
      ]);
      expect(lines).toHaveLength(2);
    } finally {
      bus.close();
      client.destroy();
      await raw.close();
      await late.stop();
    }
  });
});

describe("RedisBus with no Redis at all", () => {
  it("delivers locally, says so once, never throws, and logs nothing after close", async () => {
    const lines: string[] = [];
    const client = createClient({ url: `redis://127.0.0.1:${await freePort()}` });
    const bus = new RedisBus(client, { log: (l) => lines.push(l) });
    const got: unknown[] = [];
    bus.subscribe((e) => void got.push(e));
    await until(() => lines.length > 0);
    for (let i = 0; i < 3; i++) bus.publish({ type: "resource_updated", uri: `note://${i}` });
    expect(got).toEqual([0, 1, 2].map((i) => ({ type: "resource_updated", uri: `note://${i}` })));
    expect(lines).toEqual([
      "picomcp/redis: Redis is unreachable (connect ECONNREFUSED " +
        `${client.options?.url?.slice("redis://".length)}); ${BUS_DOWN}`,
    ]);
    bus.close();
    client.destroy();
    bus.publish({ type: "resource_updated", uri: "note://closed" });
    expect(lines).toHaveLength(1);
    expect(got).toHaveLength(4);
  });
});
