// Task control across instances: three instances in this process, each with its own HTTP handler,
// Redis connections and RedisTaskStore, on a redis-server of the bench's own; beside them one
// instance on the in-process MemoryTaskStore, where every request reaches the process running the
// task. Latency (ms, p50/p99 over the rounds): `tasks/cancel` sent to C until the handler's signal
// aborts on A, and `tasks/update` sent to B until the handler resumes on A; `tasks/get` answered.
// Round trips: Redis commands processed per request (INFO's total_commands_processed, with the lease
// ticks too rare to fall in the window). Needs `redis-server` on PATH (apt-get install redis-server).
import { benchRedis } from "./fanout.js";

const dist = new URL("../dist/", import.meta.url).href;
const { McpServer } = await import(`${dist}index.js`);
const { createHttpHandler } = await import(`${dist}http/index.js`);
const { RedisTaskStore } = await import(`${dist}redis/index.js`);

const ROUNDS = Number(process.env.ROUNDS || 200);
const GETS = 500;
const TASKS = "io.modelcontextprotocol/tasks";
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} }, elicitation: {} },
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
};

/** An instance: its handler, and the times its handlers were aborted and resumed, by task id. */
function instance(store) {
  const seen = { aborted: new Map(), resumed: new Map(), waiting: new Map() };
  const limits = { runningTasks: { perPrincipal: 2 * ROUNDS }, tasks: { perPrincipal: 4 * ROUNDS } };
  const server = new McpServer({ name: "bench", version: "1", limits, tasks: store ? { store } : {} });
  server.tool("hang", {
    task: "required",
    run: async (_a, ctx) => {
      const task = await ctx.task();
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
      seen.aborted.set(task.taskId, performance.now());
      return "";
    },
  });
  server.tool("ask", {
    task: "required",
    run: async (_a, ctx) => {
      const task = await ctx.task();
      await ctx.elicit(
        { message: "ok?", requestedSchema: { type: "object", properties: {} } },
        { key: "ok" },
      );
      seen.resumed.set(task.taskId, performance.now());
      return "";
    },
  });
  return { handler: createHttpHandler(server), seen };
}

let ids = 0;
/** One 2026-07-28 request to `handler`: its JSON-RPC answer. */
async function send(handler, method, params) {
  const id = ++ids;
  const headers = {
    host: "127.0.0.1",
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  };
  const name = params.name ?? params.taskId;
  if (name) headers["mcp-name"] = name;
  const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: META, ...params } });
  const res = await handler(new Request("http://127.0.0.1/mcp", { method: "POST", headers, body }));
  return res.json();
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const row = (what, ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return { what, p50Ms: +quantile(s, 0.5).toFixed(2), p99Ms: +quantile(s, 0.99).toFixed(2) };
};

/** Until `check` holds; the bench waits on conditions too, polling without a timer. */
async function until(check) {
  while (!check()) await new Promise((r) => setImmediate(r));
}

/** The rounds over `a` (runs the handlers), `b` (takes the answers) and `c` (takes the cancels). */
async function measure(label, a, b, c) {
  const cancel = [];
  const update = [];
  const get = [];
  for (let i = 0; i < ROUNDS; i++) {
    const hang = (await send(a.handler, "tools/call", { name: "hang" })).result.taskId;
    const t0 = performance.now();
    await send(c.handler, "tasks/cancel", { taskId: hang });
    await until(() => a.seen.aborted.has(hang));
    cancel.push(a.seen.aborted.get(hang) - t0);
    const ask = (await send(a.handler, "tools/call", { name: "ask" })).result.taskId;
    const t1 = performance.now();
    await send(b.handler, "tasks/update", {
      taskId: ask,
      inputResponses: { ok: { action: "accept", content: {} } },
    });
    await until(() => a.seen.resumed.has(ask));
    update.push(a.seen.resumed.get(ask) - t1);
    const t2 = performance.now();
    await send(b.handler, "tasks/get", { taskId: ask });
    get.push(performance.now() - t2);
  }
  return [
    row(`${label}: tasks/cancel until the handler aborts`, cancel),
    row(`${label}: tasks/update until the handler resumes`, update),
    row(`${label}: tasks/get answered`, get),
  ];
}

/** `client`, counting in `count.n` each command it sends (each one a round trip: nothing is pipelined). */
function counting(client, count) {
  const sent = new Set(["evalSha", "EVAL", "publish", "sPublish"]);
  return new Proxy(client, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      // the client bound to a call's deadline sends the call's commands
      if (key === "withCommandOptions") return (...args) => counting(value.apply(target, args), count);
      if (!sent.has(key)) return value.bind(target);
      return (...args) => {
        count.n++;
        return value.apply(target, args);
      };
    },
  });
}

/** Redis commands processed so far (those inside scripts too). */
async function commands(client) {
  const info = await client.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)[1]);
}

/** The rows: one instance on the memory store, then three on Redis; and Redis round trips per request. */
export async function benchRedisTasks() {
  console.log(`\n## Task control: 1 instance in memory vs 3 instances on Redis (${ROUNDS} rounds, ms)`);
  const solo = instance();
  const rows = await measure("memory, 1 instance", solo, solo, solo);
  const own = await benchRedis("rows");
  if (!own) return { rows };
  const { redis, url } = own;
  const { createClient } = await import("redis");
  const clients = await Promise.all([0, 1, 2, 3].map(() => createClient({ url }).connect()));
  // ticks every 10 min: none falls inside the counted windows
  const count = { n: 0 };
  const stores = clients
    .slice(0, 3)
    .map((cl) => new RedisTaskStore(counting(cl, count), { renewMs: 600_000, leaseMs: 1_200_000 }));
  const [a, b, c] = stores.map((s) => instance(s));
  await Promise.all(stores.map((s) => s.ready));
  rows.push(...(await measure("Redis, 3 instances", a, b, c)));
  const counter = clients[3];
  /** Round trips of the instances, and commands Redis ran (those inside scripts too), per run of `run`. */
  const counted = async (run, times = 1) => {
    const [trips, ran] = [count.n, await commands(counter)];
    for (let i = 0; i < times; i++) await run();
    const commandsRun = (await commands(counter)) - ran - 1;
    return { roundTrips: (count.n - trips) / times, commandsRun: commandsRun / times };
  };
  const taskId = (await send(a.handler, "tools/call", { name: "ask" })).result.taskId;
  const trips = [];
  const add = async (request, run, times) => trips.push({ request, ...(await counted(run, times)) });
  await add("tasks/get (another instance)", () => send(b.handler, "tasks/get", { taskId }), GETS);
  await add("tasks/get (the running instance)", () => send(a.handler, "tasks/get", { taskId }), GETS);
  let hang;
  await add("tools/call that becomes a task", async () => {
    hang = (await send(a.handler, "tools/call", { name: "hang" })).result.taskId;
  });
  await add("tasks/cancel on another instance, until the handler aborts", async () => {
    await send(c.handler, "tasks/cancel", { taskId: hang });
    await until(() => a.seen.aborted.has(hang));
  });
  for (const s of stores) s.close();
  for (const cl of clients) cl.destroy();
  redis.kill();
  return { rows, trips };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { rows, trips } = await benchRedisTasks();
  console.table(rows);
  if (trips) console.table(trips);
  process.exit(0);
}
