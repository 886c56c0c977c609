// A 2025-11-25 session's requests, local versus shared: one instance with its sessions in memory,
// beside two instances on a RedisSessionStore (a redis-server of the bench's own), a round robin
// between them so that every request lands on the other instance. The instances run in this process,
// each with its own handler and Redis connections. Rows are measured interleaved (one local request,
// then one shared) so that a busy machine slows both alike. Latency: one `tools/call` (a JSON answer)
// from the Request to its read body, ms p50/p99 over the rounds; Redis round trips: the commands the
// instances sent per request (a counting wrapper of their clients). Needs `redis-server` on PATH.
// Run: npm run build && node bench/redis-sessions.js [rounds]
import { freePort, startRedis } from "./fanout.js";

const dist = new URL("../dist/", import.meta.url).href;
const { McpServer } = await import(`${dist}index.js`);
const { createHttpHandler } = await import(`${dist}http/index.js`);
const { RedisBus, RedisSessionStore } = await import(`${dist}redis/index.js`);
const { createClient } = await import("redis");

const ROUNDS = Number(process.argv[2] ?? 2000);
const WARMUP = 200;
const V = "2025-11-25";
const HEADERS = {
  host: "127.0.0.1",
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": V,
};

function makeServer(bus) {
  const server = new McpServer({ name: "sessions", version: "1", ...(bus ? { bus } : {}) });
  server.tool("echo", { description: "echo", run: ({ text }) => String(text ?? "") });
  return server;
}

/** Counts the commands a client sends (every command, scripts too, goes through one of its methods). */
function counted(client, counter) {
  return new Proxy(client, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      if (["on", "duplicate", "connect", "destroy"].includes(String(key))) return value.bind(target);
      // the client bound to a call's deadline sends the call's commands
      if (key === "withCommandOptions") return (...args) => counted(value.apply(target, args), counter);
      return (...args) => {
        counter.n++;
        return value.apply(target, args);
      };
    },
  });
}

async function post(handler, body, sid) {
  const res = await handler(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: sid ? { ...HEADERS, "mcp-session-id": sid } : HEADERS,
      body: JSON.stringify(body),
    }),
  );
  await res.text();
  if (res.status !== 200 && res.status !== 202) throw new Error(`status ${res.status}`);
  return res;
}

async function open(handler) {
  const init = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  };
  const sid = (await post(handler, init)).headers.get("mcp-session-id");
  await post(handler, { jsonrpc: "2.0", method: "notifications/initialized" }, sid);
  return sid;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

export async function benchRedisSessions(rounds = ROUNDS) {
  const port = await freePort();
  const redis = await startRedis(port);
  const url = `redis://127.0.0.1:${port}`;
  const counter = { n: 0 };
  const raws = [createClient({ url }), createClient({ url })];
  const buses = raws.map((c) => new RedisBus(counted(c, counter)));
  await Promise.all(buses.map((b) => b.ready));
  const shared = buses.map((bus, i) =>
    createHttpHandler(makeServer(bus), {
      sessions: new RedisSessionStore(counted(raws[i], counter), { bus }),
    }),
  );
  const local = createHttpHandler(makeServer());
  const localSid = await open(local);
  const sharedSid = await open(shared[0]);
  const call = (id) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "hi" } },
  });
  const times = { local: [], shared: [] };
  let commands = 0;
  for (let i = 0; i < WARMUP + rounds; i++) {
    let t = performance.now();
    await post(local, call(i), localSid);
    const l = performance.now() - t;
    const before = counter.n;
    t = performance.now();
    await post(shared[i % 2], call(i), sharedSid);
    const s = performance.now() - t;
    if (i < WARMUP) continue;
    commands += counter.n - before;
    times.local.push(l);
    times.shared.push(s);
  }
  // a stateless 2026-07-28 request on the shared instances: no Redis call at all
  const before = counter.n;
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
  };
  for (let i = 0; i < 100; i++) {
    const res = await shared[i % 2](
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: { ...HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list", params: { _meta: meta } }),
      }),
    );
    await res.text();
  }
  const statelessCommands = (counter.n - before) / 100;
  for (const h of [...shared, local]) h.close();
  for (const b of buses) b.close();
  for (const c of raws) c.destroy();
  redis.kill("SIGKILL");
  const row = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return { p50Ms: +quantile(s, 0.5).toFixed(3), p99Ms: +quantile(s, 0.99).toFixed(3) };
  };
  const l = row(times.local);
  const s = row(times.shared);
  return {
    rounds,
    local: l,
    shared: s,
    addedP50Ms: +(s.p50Ms - l.p50Ms).toFixed(3),
    addedP99Ms: +(s.p99Ms - l.p99Ms).toFixed(3),
    redisCommandsPerSessionRequest: commands / rounds,
    redisCommandsPerStatelessRequest: statelessCommands,
  };
}

if (import.meta.url === `file://${process.argv[1]}`)
  console.log(JSON.stringify(await benchRedisSessions(), null, 2));
