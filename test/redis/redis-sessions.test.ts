// Shared 2025 sessions on a real redis-server: three instances behind a round-robin proxy (every
// request on another instance) serve one SDK v1 client on 2025-11-25 from initialize to DELETE,
// through a restart of the instance holding its GET stream; another principal gets the same 404
// everywhere; the caps and idle expiry hold across instances; with Redis down a session's requests
// get a clean 503 and stateless ones go on.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RUN,
  SseMessages,
  startRedis,
  until,
  useRedis,
  withRedis,
  withRedisServer,
} from "../redis-helpers.js";
import {
  gate,
  type SharedInstance,
  startRoundRobin,
  startSharedInstance,
} from "../redis-sessions-helpers.js";

const JSON_SSE = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const V = "2025-11-25";

let redis: { url: string; port: number; stop(): Promise<void> };
const instances: SharedInstance[] = [];
let proxy: Awaited<ReturnType<typeof startRoundRobin>>;

beforeAll(async () => {
  if (!withRedis) return;
  redis = await useRedis();
  for (const name of ["A", "B", "C"]) instances.push(await startSharedInstance(name, redis.url));
  proxy = await startRoundRobin(instances.map((i) => i.port));
}, 30_000);

afterAll(async () => {
  await proxy?.close();
  await Promise.all(instances.map((i) => i.stop()));
  await redis?.stop();
});

const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** A raw POST to `url` (an instance's, bypassing the proxy). */
function postTo(url: string, body: unknown, headers: { [k: string]: string }) {
  return fetch(url, {
    method: "POST",
    headers: { ...JSON_SSE, "mcp-protocol-version": V, ...headers },
    body: JSON.stringify(body),
  });
}

/** A raw POST to instance `i` of the three. */
const rawPost = (i: number, body: unknown, headers: { [k: string]: string }) =>
  postTo(instances[i]!.url, body, headers);

/** Opens a session on `url` (for `principal`): its id. */
async function initAt(url: string, principal?: string): Promise<string> {
  const res = await postTo(url, INIT, principal ? { authorization: `Bearer ${principal}` } : {});
  expect(res.status).toBe(200);
  return res.headers.get("mcp-session-id")!;
}

const initRaw = (i: number, principal?: string) => initAt(instances[i]!.url, principal);

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
};
const NOT_FOUND = { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" } };

describe.runIf(withRedis)("shared 2025 sessions: RedisSessionStore", () => {
  it("serves an SDK v1 client with every request on another instance, through a restart, until DELETE", async () => {
    const logs: string[] = [];
    const updates: string[] = [];
    const client = new Client({ name: "sdk-v1", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (r) => {
      expect(r.params.message).toBe("Your name?");
      return { action: "accept", content: { name: "Ada" } };
    });
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void logs.push(String(n.params.data)),
    );
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url), {
      requestInit: { headers: { authorization: "Bearer alice" } },
      reconnectionOptions: {
        initialReconnectionDelay: 20,
        maxReconnectionDelay: 200,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 50,
      },
    });
    await client.connect(transport);
    expect(transport.protocolVersion ?? V).toBe(V);
    const sid = transport.sessionId!;
    expect(sid).toMatch(/^[0-9a-f]{32}$/);
    await until(
      () => proxy.served.some((s) => s.method === "GET" && s.status === 200),
      10_000,
      "the GET stream",
    );
    const get = proxy.served.find((s) => s.method === "GET" && s.status === 200)!;

    await client.setLoggingLevel("info");
    await client.subscribeResource({ uri: "note://a" });
    // the update is made on one instance and delivered by the one holding the GET stream, once
    await client.callTool({ name: "touch", arguments: { uri: "note://a" } });
    await until(() => updates.length >= 1, 10_000, "the update");
    await client.callTool({ name: "touch", arguments: { uri: "note://b" } });
    await client.callTool({ name: "touch", arguments: { uri: "note://a" } });
    await until(() => updates.length >= 2, 10_000, "the second update");
    await client.listTools();
    expect(updates).toEqual(["note://a", "note://a"]);

    // the question is asked on one instance, answered through the next
    const asked = await client.callTool({ name: "ask", arguments: {} });
    const text = (asked.content as { text: string }[])[0]!.text;
    expect(text).toMatch(/^\{"name":"Ada"\} asked on [ABC]$/);
    expect(logs).toContain(`asking on ${text.slice(-1)}`);
    const askAt = proxy.served.findLastIndex((s) => s.rpc === "tools/call");
    const answerAt = proxy.served.findLastIndex((s) => s.rpc === "answer");
    expect(proxy.served[answerAt]!.to).not.toBe(proxy.served[askAt]!.to);
    expect(proxy.served[answerAt]!.status).toBe(202);

    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(["ask", "later", "touch", "where"]);

    // the instance holding the GET stream restarts: the client resumes it on another, and hears updates there
    const home = instances[get.to]!;
    const gets = proxy.served.filter((s) => s.method === "GET").length;
    await home.stop();
    instances[get.to] = await startSharedInstance(home.name, redis.url, home.port);
    await until(
      () => proxy.served.filter((s) => s.method === "GET" && s.status === 200).length > 1,
      15_000,
      "the GET stream resumed",
    );
    // resumed from the last event the client had, on an instance that did not write it
    const resumed = proxy.served
      .filter((s) => s.method === "GET")
      .slice(gets)
      .find((s) => s.status === 200)!;
    expect(resumed.last).toMatch(new RegExp(`^${sid}_g[0-9a-f]{24}\\.\\d+$`));
    await client.callTool({ name: "touch", arguments: { uri: "note://a" } });
    await until(() => updates.length >= 3, 10_000, "an update after the restart");
    const where = await client.callTool({ name: "where", arguments: {} });
    expect((where.content as { text: string }[])[0]!.text).toMatch(/^[ABC]$/);

    // every request went to another instance than the one before
    for (let i = 1; i < proxy.served.length; i++)
      expect(proxy.served[i]!.to).not.toBe(proxy.served[i - 1]!.to);
    expect(new Set(proxy.served.map((s) => s.to))).toEqual(new Set([0, 1, 2]));
    expect(
      proxy.served.filter((s) => s.method === "POST").every((s) => s.status === 200 || s.status === 202),
    ).toBe(true);

    // another principal: the same 404 on every instance, for every method; no credentials: 401
    for (let i = 0; i < 3; i++) {
      const res = await rawPost(
        i,
        { jsonrpc: "2.0", id: 9, method: "tools/list" },
        {
          "mcp-session-id": sid,
          authorization: "Bearer mallory",
        },
      );
      expect([res.status, await res.json()]).toEqual([404, NOT_FOUND]);
      const unknown = await rawPost(
        i,
        { jsonrpc: "2.0", id: 9, method: "tools/list" },
        {
          "mcp-session-id": "f".repeat(32),
          authorization: "Bearer mallory",
        },
      );
      expect([unknown.status, await unknown.json()]).toEqual([404, NOT_FOUND]);
      for (const method of ["GET", "DELETE"]) {
        const r = await fetch(instances[i]!.url, {
          method,
          headers: { accept: "text/event-stream", "mcp-session-id": sid, authorization: "Bearer mallory" },
        });
        expect([method, r.status, await r.json()]).toEqual([method, 404, NOT_FOUND]);
      }
      const anonymous = await rawPost(
        i,
        { jsonrpc: "2.0", id: 9, method: "tools/list" },
        { "mcp-session-id": sid },
      );
      expect(anonymous.status).toBe(401);
    }

    // DELETE through one instance ends it on all
    await transport.terminateSession();
    expect(proxy.served.at(-1)).toMatchObject({ method: "DELETE", status: 204 });
    for (let i = 0; i < 3; i++) {
      const res = await rawPost(
        i,
        { jsonrpc: "2.0", id: 10, method: "tools/list" },
        {
          "mcp-session-id": sid,
          authorization: "Bearer alice",
        },
      );
      expect([res.status, await res.json()]).toEqual([404, NOT_FOUND]);
    }
    await client.close();
  }, 60_000);

  it("costs a session request one Redis call on any instance, a stateless request none; a create three, a DELETE one and three", async () => {
    const a = instances[0]!;
    const b = instances[1]!;
    const del = (sid: string) =>
      fetch(b.url, {
        method: "DELETE",
        headers: { "mcp-session-id": sid, authorization: "Bearer gus", "mcp-protocol-version": V },
      });
    // Redis learns the scripts once (EVAL after a NOSCRIPT): a session made and ended first
    expect((await del(await initRaw(0, "gus"))).status).toBe(204);
    let before = a.commands.length;
    const sid = await initRaw(0, "gus");
    // the caller's set and the total (in parallel), then the hash
    expect(a.commands.slice(before)).toEqual(["evalSha", "evalSha", "evalSha"]);
    const list = (i: number) =>
      rawPost(
        i,
        { jsonrpc: "2.0", id: 1, method: "tools/list" },
        { "mcp-session-id": sid, authorization: "Bearer gus" },
      );
    for (const round of ["a copy made", "the copy kept"]) {
      const before = b.commands.length;
      const res = await list(1);
      expect([round, res.status]).toEqual([round, 200]);
      await res.text();
      expect([round, b.commands.slice(before)]).toEqual([round, ["evalSha"]]);
    }
    before = b.commands.length;
    const modern = await fetch(b.url, {
      method: "POST",
      headers: { ...JSON_SSE, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: META } }),
    });
    expect(modern.status).toBe(200);
    await modern.text();
    expect(b.commands.slice(before)).toEqual([]);
    // DELETE: the session found (one), then ended (its hash, then both sets in parallel); besides, the
    // end told to the other instances (the bus) and its streams' events dropped (the event store)
    before = b.commands.length;
    expect((await del(sid)).status).toBe(204);
    expect(b.commands.slice(before).filter((c) => c === "evalSha")).toEqual([
      "evalSha",
      "evalSha",
      "evalSha",
      "evalSha",
    ]);
  });

  it("resumes a POST's stream on another instance: its kept events, then what the first still writes", async () => {
    const sid = await initRaw(0, "hal");
    const auth = { "mcp-session-id": sid, authorization: "Bearer hal" };
    const res = await rawPost(
      0,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "later", arguments: { gate: "hal" } } },
      auth,
    );
    expect(res.status).toBe(200);
    const first = await res.text();
    const ids = [...first.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!);
    expect(first).toContain('"data":"before"');
    const last = ids.at(-1)!;
    expect(last).toMatch(new RegExp(`^${sid}_p[0-9a-f]{24}\\.\\d+$`));
    const resumed = await fetch(instances[1]!.url, {
      headers: { accept: "text/event-stream", "mcp-protocol-version": V, "last-event-id": last, ...auth },
    });
    expect(resumed.status).toBe(200);
    gate("hal").open();
    const rest = new SseMessages(resumed);
    await rest.until((m) => m.some((x) => x.id === 7));
    expect(rest.messages).toEqual([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "after" } },
      { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "answered on A" }] } },
    ]);
    // a stream id of another session is unknown here, as anywhere
    const stranger = await initRaw(1, "hal");
    const wrong = await fetch(instances[2]!.url, {
      headers: {
        accept: "text/event-stream",
        "mcp-protocol-version": V,
        "last-event-id": last,
        "mcp-session-id": stranger,
        authorization: "Bearer hal",
      },
    });
    expect(wrong.status).toBe(400);
  });

  it("holds the per-principal cap across instances, and frees a place on DELETE through another", async () => {
    const ids = [await initRaw(0, "carol"), await initRaw(1, "carol")];
    const more = await Promise.all(Array.from({ length: 30 }, (_, k) => initRaw(k % 3, "carol")));
    ids.push(...more);
    const over = await rawPost(2, INIT, { authorization: "Bearer carol" });
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("5");
    expect((await over.json()).error).toMatchObject({
      code: -32000,
      data: { limit: "sessions", scope: "principal", max: 32 },
    });
    // another principal is not held by carol's share
    await initRaw(2, "dave");
    const del = await fetch(instances[1]!.url, {
      method: "DELETE",
      headers: { "mcp-session-id": ids[0]!, authorization: "Bearer carol" },
    });
    expect(del.status).toBe(204);
    await initRaw(2, "carol");
  }, 30_000);

  it("ends a session idle on every instance, and keeps one alive that any instance serves", async () => {
    const port = 0;
    const short = await Promise.all(
      ["X", "Y"].map((n) => startSharedInstance(n, redis.url, port, { sessionIdleMs: 400 })),
    );
    try {
      const sid = await initAt(short[0]!.url, "erin");
      const ping = (i: number) =>
        postTo(
          short[i]!.url,
          { jsonrpc: "2.0", id: 1, method: "ping" },
          {
            "mcp-session-id": sid,
            authorization: "Bearer erin",
          },
        );
      // requests on the other instance keep it alive past one idle time
      const start = Date.now();
      while (Date.now() - start < 900) {
        const r = await ping(1);
        expect(r.status).toBe(200);
      }
      // left alone, it ends everywhere (watched in Redis: a request would keep it alive)
      const raw = createClient({ url: redis.url });
      await raw.connect();
      try {
        await until(
          async () => (await raw.exists(`picomcp:session:${RUN}:s:${sid}`)) === 0,
          10_000,
          "expiry",
        );
      } finally {
        raw.destroy();
      }
      expect((await ping(0)).status).toBe(404);
      expect((await ping(1)).status).toBe(404);
    } finally {
      await Promise.all(short.map((s) => s.stop()));
    }
  }, 30_000);

  it.runIf(withRedisServer)(
    "answers a session's requests with 503 while Redis is down; stateless ones go on",
    async () => {
      const own = await useRedis();
      const port = own.port;
      const pair = await Promise.all(["P", "Q"].map((n) => startSharedInstance(n, own.url)));
      try {
        const sid = await initAt(pair[0]!.url, "fay");
        const listed = (i: number) =>
          postTo(
            pair[i]!.url,
            { jsonrpc: "2.0", id: 1, method: "tools/list" },
            {
              "mcp-session-id": sid,
              authorization: "Bearer fay",
            },
          );
        expect((await listed(1)).status).toBe(200);
        await own.stop();
        await until(async () => (await listed(1)).status === 503, 10_000, "503");
        const down = await listed(0);
        expect(down.status).toBe(503);
        expect(down.headers.get("retry-after")).toBe("1");
        expect(await down.json()).toEqual({
          jsonrpc: "2.0",
          error: { code: -32000, message: "Service Unavailable: the session store is unreachable" },
        });
        expect(
          pair[0]!.log.some((l) => l.includes("requests of shared sessions get 503 until it is back")),
        ).toBe(true);
        // a 2026-07-28 request needs no session: served
        const modern = await fetch(pair[1]!.url, {
          method: "POST",
          headers: { ...JSON_SSE, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 2,
            method: "tools/list",
            params: {
              _meta: {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
              },
            },
          }),
        });
        expect(modern.status).toBe(200);
        // Redis back, empty (no persistence): the session is gone, a clean 404, and a new one works
        const back = await startRedis(port);
        try {
          await until(async () => (await listed(0)).status === 404, 15_000, "404 once Redis is back");
        } finally {
          await back.stop();
        }
      } finally {
        await Promise.all(pair.map((s) => s.stop()));
      }
    },
    40_000,
  );
});
