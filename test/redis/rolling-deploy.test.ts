// A rolling deploy that loses nothing, on a real redis-server: two replicas (processes of
// test/fixtures/rolling-instance.js, every store in Redis) behind a round-robin proxy that retries
// nothing, deployed from the release before's session store (test/fixtures/previous-session-store.js)
// to this one: while one replica is new and the other old, both serve the same sessions. Under continuous load (2025 sessions subscribed to a resource with their GET streams open
// and calling tools, 2026-07-28 tools/call and subscriptions/listen, tasks running) each replica in
// turn gets SIGTERM (it drains: `close({ graceMs })`) and is started again on its port. Every request
// ends in an answer a client wanted, retrying only what a spec-following client retries by itself
// (503 with Retry-After; no connection is reset); no task is lost; every GET and listen stream hears
// an event made after the restart.
import { fileURLToPath } from "node:url";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  type Instance,
  RUN,
  startInstance,
  startRedis,
  until,
  withRedisServer,
} from "../redis-helpers.js";
import { LoadClient, readSse, startRoundRobin } from "../rolling-helpers.js";

const SCRIPT = fileURLToPath(new URL("../fixtures/rolling-instance.js", import.meta.url));
const V = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const GRACE_MS = 1500;
const JSON_SSE = { accept: "application/json, text/event-stream", "content-type": "application/json" };

const meta = (capabilities: object = {}) => ({
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "load", version: "1" },
});
const modernHeaders = (method: string, name?: string) => ({
  ...JSON_SSE,
  "mcp-protocol-version": V,
  "mcp-method": method,
  ...(name ? { "mcp-name": name } : {}),
});
let nextId = 1;
const modernCall = (name: string, args: object, capabilities: object = {}) => ({
  jsonrpc: "2.0",
  id: nextId++,
  method: "tools/call",
  params: { _meta: meta(capabilities), name, arguments: args },
});

let redis: { stop(): Promise<void> };
let redisUrl: string;
const ports: number[] = [];
const replicas: Instance[] = [];
let proxy: Awaited<ReturnType<typeof startRoundRobin>>;

async function startReplica(index: number, generation: number): Promise<Instance> {
  const name = `${"AB"[index]}${generation}`;
  // the first generation keeps sessions as the release before did; the second as this one does
  const previous = generation === 1 ? "1" : "";
  return startInstance(
    name,
    {
      REDIS_URL: redisUrl,
      PORT: String(ports[index]),
      GRACE_MS: String(GRACE_MS),
      PREVIOUS_SESSIONS: previous,
    },
    SCRIPT,
  );
}

beforeAll(async () => {
  if (!withRedisServer) return;
  const port = await freePort();
  redis = await startRedis(port);
  redisUrl = `redis://127.0.0.1:${port}`;
  ports.push(await freePort(), await freePort());
  replicas.push(...(await Promise.all([startReplica(0, 1), startReplica(1, 1)])));
  proxy = await startRoundRobin(ports);
}, 30_000);

afterAll(async () => {
  await proxy?.close();
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

/** What the load saw go wrong: any answer a client did not want, after its own retries. */
const failures: string[] = [];
let stopped = false;
const stop = new AbortController();

/** A 2025-11-25 session: subscribed to note://s, its GET stream reopened (Last-Event-ID) whenever it ends, calling `work`. */
function sessionClient(n: number) {
  const client = new LoadClient(proxy.port, `127.0.0.${10 + n}`);
  const s = { client, sid: "", updates: 0, gets: 0, lastGetAt: 0, backend: "", done: Promise.resolve() };
  const headers = () => ({ ...JSON_SSE, "mcp-session-id": s.sid, "mcp-protocol-version": "2025-11-25" });
  const expectOk = (what: string, status: number, body: any) => {
    if (status !== 200 && status !== 202)
      failures.push(`session ${n} ${what}: ${status} ${JSON.stringify(body)}`);
    else if (body?.error) failures.push(`session ${n} ${what}: ${JSON.stringify(body.error)}`);
  };
  s.done = (async () => {
    const init = await client.send("POST", JSON_SSE, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "load", version: "1" } },
    });
    s.sid = String(init.headers["mcp-session-id"]);
    init.res.resume();
    const ack = await client.json(headers(), { jsonrpc: "2.0", method: "notifications/initialized" });
    expectOk("initialized", ack.status, ack.body);
    const sub = await client.json(headers(), {
      jsonrpc: "2.0",
      id: 1,
      method: "resources/subscribe",
      params: { uri: "note://s" },
    });
    expectOk("subscribe", sub.status, sub.body);
    const get = (async () => {
      let last: string | undefined;
      let retryMs = 0;
      while (!stopped) {
        const h: { [k: string]: string } = { ...headers(), accept: "text/event-stream" };
        if (last) h["last-event-id"] = last;
        const answer = await client.send("GET", h, undefined, stop.signal).catch(() => undefined);
        if (!answer) return;
        if (answer.status !== 200) {
          failures.push(`session ${n} GET: ${answer.status}`);
          return;
        }
        s.gets++;
        s.lastGetAt = Date.now();
        s.backend = String(answer.headers["x-backend"]);
        await readSse(answer.res, (e) => {
          if (e.id) last = e.id;
          if (e.retry !== undefined) retryMs = e.retry;
          if (e.data?.method === "notifications/resources/updated") s.updates++;
        });
        // as the SSE standard asks: wait the retry the server gave, then reconnect from the last id
        if (!stopped) await new Promise((r) => setTimeout(r, retryMs));
      }
    })();
    let id = 2;
    while (!stopped) {
      const r = await client.json(headers(), {
        jsonrpc: "2.0",
        id: id++,
        method: "tools/call",
        params: { name: "work", arguments: {} },
      });
      expectOk("work", r.status, r.body);
    }
    await get;
  })();
  return s;
}

/** A 2026-07-28 listener of note://l: it listens again whenever its stream ends with its final result. */
function listener(n: number) {
  const client = new LoadClient(proxy.port, `127.0.0.${30 + n}`);
  const l = { client, updates: 0, listens: 0, lastListenAt: 0, backend: "", done: Promise.resolve() };
  l.done = (async () => {
    while (!stopped) {
      const id = `listen-${n}-${nextId++}`;
      const answer = await client
        .send(
          "POST",
          modernHeaders("subscriptions/listen"),
          {
            jsonrpc: "2.0",
            id,
            method: "subscriptions/listen",
            params: { _meta: meta(), notifications: { resourceSubscriptions: ["note://l"] } },
          },
          stop.signal,
        )
        .catch(() => undefined);
      if (!answer) return;
      if (answer.status !== 200 || !String(answer.headers["content-type"]).startsWith("text/event-stream")) {
        failures.push(`listener ${n}: ${answer.status}`);
        return;
      }
      let complete = false;
      l.backend = String(answer.headers["x-backend"]);
      await readSse(answer.res, (e) => {
        if (e.data?.method === "notifications/subscriptions/acknowledged") {
          l.listens++;
          l.lastListenAt = Date.now();
        }
        if (e.data?.method === "notifications/resources/updated") l.updates++;
        if (e.data?.id === id && e.data.result?.resultType === "complete") complete = true;
      });
      if (!complete && !stopped) failures.push(`listener ${n}: the stream ended without its final result`);
    }
  })();
  return l;
}

/** A 2026-07-28 caller of `work`, as fast as answers come; tallies who answered. */
function caller(n: number, servedBy: Map<string, number>) {
  const client = new LoadClient(proxy.port, `127.0.0.${50 + n}`);
  const c = { client, done: Promise.resolve() };
  c.done = (async () => {
    while (!stopped) {
      const r = await client.json(modernHeaders("tools/call", "work"), modernCall("work", {}));
      const text = r.body?.result?.content?.[0]?.text;
      if (r.status !== 200 || typeof text !== "string")
        failures.push(`caller ${n}: ${r.status} ${JSON.stringify(r.body)}`);
      else servedBy.set(text, (servedBy.get(text) ?? 0) + 1);
    }
  })();
  return c;
}

describe.runIf(withRedisServer)(
  "a rolling deploy of two replicas under load, from the release before's session store",
  () => {
    it("drains and restarts each replica in turn: no failed request, no lost task, every stream heard again", async () => {
      const servedBy = new Map<string, number>();
      const sessions = [0, 1, 2].map(sessionClient);
      const listeners = [0, 1, 2].map(listener);
      const callers = [0, 1, 2, 3].map((n) => caller(n, servedBy));
      const control = new LoadClient(proxy.port, "127.0.0.70");
      const clients = [...sessions, ...listeners, ...callers].map((x) => x.client).concat(control);
      const touch = async (uri: string) => {
        const r = await control.json(modernHeaders("tools/call", "touch"), modernCall("touch", { uri }));
        expect(r.status).toBe(200);
      };
      const task = async (to: number, name: string, args: object) => {
        const r = await control.json(
          { ...modernHeaders("tools/call", name), "x-to": String(to) },
          modernCall(name, args, { extensions: { [TASKS]: {} } }),
        );
        expect(r.body.result.resultType).toBe("task");
        return r.body.result.taskId as string;
      };
      const taskGet = async (taskId: string) => {
        const r = await control.json(modernHeaders("tasks/get", taskId), {
          jsonrpc: "2.0",
          id: nextId++,
          method: "tasks/get",
          params: { _meta: meta({ extensions: { [TASKS]: {} } }), taskId },
        });
        if (!r.body?.result) throw new Error(`tasks/get: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.result;
      };
      // everyone is connected and heard once before the deploy begins
      await until(
        () => sessions.every((s) => s.gets > 0) && listeners.every((l) => l.listens > 0),
        15_000,
        "the load",
      );
      await touch("note://s");
      await touch("note://l");
      await until(
        () => sessions.every((s) => s.updates > 0) && listeners.every((l) => l.updates > 0),
        15_000,
        "the first updates",
      );

      const figures: string[] = [];
      const jobs: string[] = [];
      let forever: string | undefined;
      for (const index of [0, 1]) {
        const old = replicas[index]!;
        // tasks running on the replica about to go: one that ends within the grace, and (first round)
        // one that would run forever
        jobs.push(await task(index, "job", { ms: 300 }));
        if (index === 0) forever = await task(index, "forever", {});
        // the streams the replica holds: each must come back on another
        const moved = [
          ...sessions.filter((s) => s.backend === String(index)).map((s) => () => s.lastGetAt),
          ...listeners.filter((l) => l.backend === String(index)).map((l) => () => l.lastListenAt),
        ];
        const began = Date.now();
        const exited = new Promise((r) => old.child.once("exit", r));
        old.child.kill("SIGTERM");
        // measured while the replica drains: its streams need not wait for it to exit
        const back = until(() => moved.every((at) => at() > began), 15_000, "the streams to come back").then(
          () => Date.now(),
          (e: Error) => {
            throw new Error(`${e.message}: ${JSON.stringify({ failures, proxy: proxy.stats })}`);
          },
        );
        await exited;
        const drained = /drained in (\d+) ms; cancelled (\d+)/.exec(old.stderr);
        expect(drained, old.stderr).not.toBeNull();
        // no request in flight had to be cut: every one finished within the grace
        expect(drained![2]).toBe("0");
        if (index === 0) {
          // the forever task is failed as its instance went away, at once (not after its 30 s lease)
          expect(await taskGet(forever!)).toMatchObject({
            status: "failed",
            error: { code: -32603, message: "The server running the task went away" },
          });
        }
        const name = `${"AB"[index]}2`;
        // streams came back (on any replica), and the new replica serves
        const backAt = await back;
        replicas[index] = await startReplica(index, 2);
        await until(() => (servedBy.get(name) ?? 0) > 0, 15_000, `${name} to serve`);
        const serving = Date.now();
        const touched = Date.now();
        const heard = { s: sessions.map((s) => s.updates), l: listeners.map((l) => l.updates) };
        await touch("note://s");
        await touch("note://l");
        await until(
          () =>
            sessions.every((s, i) => s.updates > heard.s[i]!) &&
            listeners.every((l, i) => l.updates > heard.l[i]!),
          15_000,
          "every stream to hear an update made after the restart",
        );
        figures.push(
          `${"AB"[index]}: drained in ${drained![1]} ms, its ${moved.length} streams back on the other replica ${backAt - began} ms after SIGTERM, the new process serving after ${serving - began} ms, an update after it heard on every stream in ${Date.now() - touched} ms`,
        );
      }
      for (const id of jobs) {
        await until(async () => (await taskGet(id)).status === "completed", 15_000, `task ${id}`);
        expect((await taskGet(id)).result.content[0].text).toMatch(/^job done on [AB]1$/);
      }

      stopped = true;
      stop.abort();
      await Promise.all([...sessions, ...listeners, ...callers].map((x) => x.done));
      for (const c of clients) c.close();
      expect(failures).toEqual([]);
      expect(proxy.stats.cut).toBe(0);
      // the sessions the release before made are this one's now: each hash holds the score of its places
      const raw = createClient({ url: redisUrl });
      await raw.connect();
      try {
        for (const s of sessions)
          expect(await raw.hGet(`picomcp:session:${RUN}:s:${s.sid}`, "e")).toMatch(/^\d+$/);
      } finally {
        raw.destroy();
      }
      const total = clients.reduce(
        (t, c) => ({
          requests: t.requests + c.stats.requests,
          retried503: t.retried503 + c.stats.retried503,
          resets: t.resets + c.stats.resets,
        }),
        { requests: 0, retried503: 0, resets: 0 },
      );
      // a reset may hide a request served twice or lost: there must be none
      expect([total.resets, proxy.stats.resets]).toEqual([0, 0]);
      console.log(
        `rolling deploy: ${total.requests} requests, ${total.retried503} retried after 503, ${total.resets} reset, ${proxy.stats.refused} refused connections sent on by the proxy; ${figures.join("; ")}`,
      );
    }, 60_000);
  },
);
