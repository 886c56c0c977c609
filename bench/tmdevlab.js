// The TM Dev Lab cross-language MCP server benchmark, v1 workload (`--phases tmdevlab`): their k6 script
// drives 50 virtual users against a server on one CPU, over stateless Streamable HTTP; each user's
// iteration is, for each of the four tools (servers/tmdevlab-tools.js), initialize →
// notifications/initialized → tools/call, then initialize → notifications/initialized → tools/list,
// then a 100 ms pause. Here 50 virtual users of a Node load generator (one keep-alive connection each,
// the bench's raw HTTP/1.1 client, not k6) run that loop against picomcp and the official SDK 1.x
// (their Node server's set-up: Express, a server and transport per request), each pinned to one core
// with `taskset -c 0`, one after the other in the same run. What it gives is picomcp's ratio to the
// SDK on this machine, which places picomcp in their table; it is not their machine.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { answerOf, cpuMicros, HttpConnection, listening, rssMiB } from "./clients.js";
import { median } from "./report.js";

const SERVERS = fileURLToPath(new URL("./servers/", import.meta.url));
export const TMDEVLAB = [
  ["picomcp", "picomcp"],
  ["sdk1", "SDK 1.32.2 (Express)"],
];
/** How long each server is warmed up and then measured, in ms. */
export const TMDEVLAB_TIMES = { full: { warm: 2000, ms: 8000 }, quick: { warm: 200, ms: 600 } };
const VUS = 50;
const PAUSE_MS = 100;
const pinned = spawnSync("taskset", ["-c", "0", "true"]).status === 0;

/** samples[metric][contender] = numbers. */
const samples = {};
const add = (metric, name, value) => {
  samples[metric] ??= {};
  samples[metric][name] ??= [];
  samples[metric][name].push(value);
};
let round = 0;

/** A child process that prints `PORT <n>`; pinned to core 0 when asked (and taskset exists). */
async function startChild(file, pin) {
  const pinning = pin && pinned;
  const { child, port } = await (pinning
    ? listening("taskset", ["-c", "0", process.execPath, file])
    : listening(process.execPath, [file]));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const stop = () => {
    child.kill();
    return exited;
  };
  return { pid: child.pid, port, stop };
}

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2024-11-05",
    capabilities: {},
    clientInfo: { name: "k6-bench", version: "1.0" },
  },
});
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const call = (name, args) =>
  JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } });
const text = (m) => JSON.parse(m?.result?.content?.[0]?.text ?? "null");

/** The iteration's tool calls with the check k6 makes of each answer. */
const calls = (mockUrl) => [
  [call("calculate_fibonacci", { n: 10 }), (m) => text(m)?.result === 55],
  [call("fetch_external_data", { endpoint: mockUrl }), (m) => text(m)?.status_code === 200],
  [
    call("process_json_data", { data: { name: "benchmark", count: 42, nested: { key: "value" } } }),
    (m) => text(m)?.transformed_data?.name === "BENCHMARK",
  ],
  [
    call("simulate_database_query", { query: "SELECT * FROM benchmarks", delay_ms: 10 }),
    (m) => text(m)?.query === "SELECT * FROM benchmarks",
  ],
  ['{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}', (m) => m?.result?.tools?.length === 4],
];

/** One virtual user's loop until `until` (performance.now()): every HTTP request's latency into `lat`. */
async function virtualUser(port, steps, until, lat, counts) {
  const c = new HttpConnection(port);
  await c.ready;
  const post = async (body) => {
    const t0 = performance.now();
    const r = await c.request(body);
    lat.push(performance.now() - t0);
    counts.requests++;
    return r;
  };
  try {
    while (performance.now() < until) {
      for (const [body, ok] of steps) {
        const init = await post(INIT);
        if (init.status !== 200) counts.errors++;
        const session = init.headers["mcp-session-id"];
        if (session) c.headers["Mcp-Session-Id"] = session;
        await post(INITIALIZED);
        const r = await post(body);
        let answer;
        try {
          answer = answerOf(r.headers, r.body);
        } catch {}
        let good = false;
        try {
          good = r.status === 200 && ok(answer);
        } catch {}
        if (!good) counts.errors++;
        counts.iterations += 0.2;
        delete c.headers["Mcp-Session-Id"];
      }
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
  } finally {
    c.close();
  }
}

/** The 50 users for `ms` against `port`: req/s over all requests, latencies, server CPU per request. */
async function runLoad(server, steps, ms) {
  const lat = [];
  const counts = { requests: 0, errors: 0, iterations: 0 };
  const cpu0 = cpuMicros(server.pid);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: VUS }, () => virtualUser(server.port, steps, t0 + ms, lat, counts)));
  const elapsed = performance.now() - t0;
  lat.sort((a, b) => a - b);
  return {
    rps: (counts.requests * 1000) / elapsed,
    avg: lat.reduce((a, b) => a + b, 0) / lat.length,
    p99: lat[Math.floor(lat.length * 0.99)],
    cpu: (cpuMicros(server.pid) - cpu0) / counts.requests,
    errors: counts.errors,
  };
}

/** One round: both servers, the order alternating by round, each warmed up for `T.warm` ms, then loaded for `T.ms`. */
export async function tmdevlabPhase(T, fail) {
  const mock = await startChild(`${SERVERS}tmdevlab-mock.js`, false);
  const steps = calls(`http://127.0.0.1:${mock.port}/api`);
  const order = round++ % 2 ? [...TMDEVLAB].reverse() : TMDEVLAB;
  try {
    for (const [name] of order) {
      const server = await startChild(`${SERVERS}tmdevlab-${name}.js`, true);
      try {
        await runLoad(server, steps, T.warm);
        const r = await runLoad(server, steps, T.ms);
        if (r.errors) fail(name, `TM Dev Lab workload: ${r.errors} failed checks`);
        add("rps", name, r.rps);
        add("avg", name, r.avg);
        add("p99", name, r.p99);
        add("cpu", name, r.cpu);
        add("rss", name, rssMiB(server.pid));
      } finally {
        await server.stop();
      }
    }
  } finally {
    await mock.stop();
  }
}

const ROWS = [
  ["rps", "HTTP requests per second, all of them (their `http_reqs` rate)", true],
  ["avg", "… mean latency (ms) (their `http_req_duration` avg)", false],
  ["p99", "… p99 latency (ms)", false],
  ["cpu", "… server CPU per HTTP request (µs)", false],
  ["rss", "RSS after the load (MiB)", false],
];

/** The phase's markdown table (empty when it did not run). */
export function tmdevlabReport() {
  if (!samples.rps) return "";
  const names = TMDEVLAB.map(([n]) => n);
  const lines = [
    "",
    `## TM Dev Lab v1 workload: ${VUS} virtual users, stateless Streamable HTTP, the server on one core (${pinned ? "taskset -c 0" : "taskset missing: NOT pinned"}); ${round} round(s), medians`,
    "",
    "A ratio from this machine, not their machine: their Node SDK's req/s times the ratio (its latency divided by it) places picomcp in their table.",
    "",
    `| | ${TMDEVLAB.map(([, label]) => label).join(" | ")} | picomcp ÷ SDK |`,
    "|---|---:|---:|---:|",
  ];
  for (const [key, label, higherIsBetter] of ROWS) {
    const [p, s] = names.map((n) => (samples[key]?.[n] ? median(samples[key][n]) : undefined));
    const ratio = p === undefined || s === undefined ? undefined : higherIsBetter ? p / s : s / p;
    const cell = (v) => (v === undefined ? "–" : v >= 1000 ? `${(v / 1000).toFixed(1)}k` : v.toFixed(2));
    lines.push(
      `| ${label} | ${cell(p)} | ${cell(s)} | ${ratio === undefined ? "–" : `${ratio.toFixed(2)}×`} |`,
    );
  }
  return `${lines.join("\n")}\n`;
}
