// Fan-out of change events to 1,000 2026-07-28 listen streams: one instance on the in-process bus,
// beside two instances (500 streams each) on a RedisBus through a redis-server of the bench's own.
// The instances run in this process, each with its own handler and Redis connections, so the only
// difference between the two rows is the bus. Latency: from `resourceUpdated` to the notification
// read off each stream's body (ms, medians of the rounds' p50/p99); throughput: notifications read
// per second in a burst of 50 events. Needs `redis-server` on PATH (apt-get install redis-server).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";

const dist = new URL("../dist/", import.meta.url).href;
const { McpServer } = await import(`${dist}index.js`);
const { createHttpHandler } = await import(`${dist}http/index.js`);
const { RedisBus } = await import(`${dist}redis/index.js`);

const STREAMS = 1000;
const ROUNDS = 15;
const BURST = 50;
const URI = "note://bench";
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
};

function instance(bus) {
  // every stream is the one anonymous caller's: its shares of listens and requests must hold them all
  const limits = { listens: { perPrincipal: STREAMS }, requests: { perPrincipal: 2 * STREAMS } };
  const server = new McpServer({ name: "fanout", version: "1", limits, ...(bus ? { bus } : {}) });
  server.resource("note://{id}", { description: "a note", read: ({ id }) => id });
  return { server, handler: createHttpHandler(server, { maxListenStreams: STREAMS }) };
}

/** Opens a listen on `handler`; `counts[i]` counts its notifications, `arrived[i]` times the last. */
async function listen(handler, i, state) {
  const body = {
    jsonrpc: "2.0",
    id: i,
    method: "subscriptions/listen",
    params: { _meta: META, notifications: { resourceSubscriptions: [URI] } },
  };
  const res = await handler(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: {
        host: "127.0.0.1",
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
      },
      body: JSON.stringify(body),
    }),
  );
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  state.readers.push(reader);
  (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const text = decoder.decode(value, { stream: true });
      let at = text.indexOf("resources/updated");
      while (at !== -1) {
        state.counts[i]++;
        state.arrived[i] = performance.now();
        state.check();
        at = text.indexOf("resources/updated", at + 1);
      }
    }
  })().catch(() => {});
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs the rounds and the burst over `handlers` (streams split evenly) publishing on `publishers`. */
async function measure(handlers, publishers) {
  const state = {
    counts: new Array(STREAMS).fill(0),
    arrived: new Array(STREAMS).fill(0),
    readers: [],
    target: 0,
    done: undefined,
    check() {
      if (this.done && this.counts.every((c) => c >= this.target)) {
        const d = this.done;
        this.done = undefined;
        d();
      }
    },
  };
  const reached = (target) =>
    new Promise((resolve) => {
      state.target = target;
      state.done = resolve;
      state.check();
    });
  for (let i = 0; i < STREAMS; i++) await listen(handlers[i % handlers.length], i, state);
  await new Promise((r) => setTimeout(r, 200)); // every acknowledgement and subscription settles
  const p50 = [];
  const p99 = [];
  let sent = 0;
  for (let round = 0; round < ROUNDS + 3; round++) {
    const wait = reached(++sent);
    const t0 = performance.now();
    publishers[round % publishers.length].resourceUpdated(URI);
    await wait;
    if (round < 3) continue; // warm-up
    const lat = state.arrived.map((t) => t - t0).sort((a, b) => a - b);
    p50.push(quantile(lat, 0.5));
    p99.push(quantile(lat, 0.99));
  }
  const wait = reached(sent + BURST);
  const t0 = performance.now();
  for (let k = 0; k < BURST; k++) publishers[k % publishers.length].resourceUpdated(URI);
  await wait;
  const seconds = (performance.now() - t0) / 1000;
  for (const r of state.readers) await r.cancel().catch(() => {});
  return {
    p50Ms: +median(p50).toFixed(2),
    p99Ms: +median(p99).toFixed(2),
    notificationsPerSec: Math.round((STREAMS * BURST) / seconds),
  };
}

/** A free TCP port on 127.0.0.1. */
export async function freePort() {
  const s = createServer();
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  const { port } = s.address();
  s.close();
  await once(s, "close");
  return port;
}

/** A redis-server of the bench's own on `port`, without persistence. */
export async function startRedis(port) {
  const child = spawn("redis-server", [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
  ]);
  await new Promise((resolve, reject) => {
    let out = "";
    child.once("error", reject);
    child.stdout.on("data", (c) => {
      out += c;
      if (out.includes("Ready to accept connections")) resolve();
    });
  });
  return child;
}

/** A redis-server of the bench's own and its URL; undefined, said once, when it does not start. */
export async function benchRedis(rows) {
  try {
    const port = await freePort();
    return { redis: await startRedis(port), url: `redis://127.0.0.1:${port}` };
  } catch (error) {
    console.log(`(skipped the Redis ${rows}: redis-server did not start: ${error.message})`);
    return undefined;
  }
}

/** The two rows: the in-process bus, and two instances on Redis. */
export async function benchFanout() {
  console.log(
    `\n## Fan-out of resourceUpdated to ${STREAMS} listen streams: in-process bus vs 2 instances on Redis (ms, notifications/s)`,
  );
  const rows = [];
  const solo = instance();
  rows.push({ bus: "in-process, 1 instance", ...(await measure([solo.handler], [solo.server])) });
  solo.handler.close();
  const own = await benchRedis("row");
  if (!own) return rows;
  const { redis, url } = own;
  const { createClient } = await import("redis");
  const clients = [createClient({ url }), createClient({ url })];
  const buses = clients.map((client) => new RedisBus(client));
  await Promise.all(buses.map((b) => b.ready));
  const pair = buses.map((bus) => instance(bus));
  rows.push({
    bus: "Redis, 2 instances",
    ...(await measure(
      pair.map((p) => p.handler),
      pair.map((p) => p.server),
    )),
  });
  for (const p of pair) p.handler.close();
  for (const b of buses) b.close();
  for (const c of clients) c.destroy();
  redis.kill();
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchFanout());
}
