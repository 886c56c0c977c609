// The mcp-use benchmark workload (`--phases mcp-use`), from the public harness of mcp-use's SDK-v2
// benchmark of 2026-07-27 (MCP Drill over Streamable HTTP): each virtual user keeps one request in
// flight, no think time, over its own keep-alive connection; 90% `tools/call` of an echo tool with
// `"hello"`, 10% `tools/list`; three stages, 1 user for 3 s, 5 users for 5 s, then 5 → 50 users over
// 15 s (raised linearly here; their config gives the stage's target only); throughput is every answered
// operation over the whole 23 s, as theirs. One operation is one JSON-RPC request and its answer (a
// legacy era's initialize per user is not counted). Each contender speaks the era their harness gave it
// (mcp-use and SDK v2 2026-07-28, tmcp 2025-06-18 with its session reused, mcp-handler 2025-11-25);
// picomcp and the floor speak 2026-07-28, and picomcp once more with a 2025-11-25 session, like for
// like with tmcp. Every server is a child process; this process is the load generator (the bench's raw
// HTTP/1.1 client, not MCP Drill), so the two share the machine's cores as in the other HTTP phases;
// each user connects from an address of its own.
// The rounds rotate the order as their harness does. What it gives is ratios from one machine and one
// run, which place picomcp in their published table; not their machine, nor their load generator.
import { answerOf, cpuMicros, HttpConnection, HttpPeer, INIT_PARAMS, rssMiB } from "./clients.js";
import { median } from "./report.js";

/** [key, server, label, era, server args]; the key of a server `--only` leaves out is skipped. */
export const MCPUSE = [
  ["floor", "floor", "floor (no library)", "2026-07-28", []],
  ["picomcp", "picomcp", "picomcp", "2026-07-28", []],
  ["picomcp-session", "picomcp", "picomcp, 2025-11-25 session", "2025-11-25", ["--sessions"]],
  ["tmcp", "tmcp", "tmcp 1.20.0", "2025-06-18", []],
  ["sdk2", "sdk2", "SDK v2 2.4.0", "2026-07-28", []],
  ["mcp-use", "mcp-use", "mcp-use 2.5.2", "2026-07-28", []],
  ["mcp-handler", "mcp-handler", "mcp-handler 2.4.0", "2025-11-25", []],
];
/** Their published medians (ops/s) of the libraries also measured here, with the versions they ran. */
const PUBLISHED = [
  ["tmcp", "tmcp 1.19.4", 18_424],
  ["mcp-use", "mcp-use v2 (2.0.0-beta.61)", 10_982],
  ["sdk2", "SDK v2 (2.0.0-beta.5)", 8_050],
];
/** Stage lengths in ms: theirs (full), and a correctness check of the same shape (quick). */
export const MCPUSE_TIMES = {
  full: { preflight: 3000, baseline: 5000, ramp: 15_000 },
  quick: { preflight: 100, baseline: 150, ramp: 400 },
};
/** One answer in this many is parsed and checked (every one's status is). */
const CHECK_EVERY = 16;

const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const bodies = (modern) => {
  const meta = modern ? `,${META}` : "";
  return {
    call: (id) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}${meta}}}`,
    list: (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{${meta.slice(1)}}}`,
  };
};
const callOk = (m) => m?.result?.content?.[0]?.text === "hello" && !m.result.isError;
const listOk = (m) => Array.isArray(m?.result?.tools) && m.result.tools.some((t) => t.name === "echo");

/** samples[metric][key] = numbers. */
const samples = {};
const add = (metric, name, value) => {
  samples[metric] ??= {};
  samples[metric][name] ??= [];
  samples[metric][name].push(value);
};
let round = 0;

/** The phase's samples and rounds, for `--json`; `restore` puts saved ones back (`--from`). */
export const mcpUseSaved = {
  save: () => (samples.ops ? { round, samples } : undefined),
  restore: (saved) => {
    if (!saved) return;
    round = saved.round;
    Object.assign(samples, saved.samples);
  },
};

/** Users wanted at `t` ms into the run: 1, then 5, then 5 → 50 linearly. */
function usersAt(t, T) {
  if (t < T.preflight) return 1;
  if (t < T.preflight + T.baseline) return 5;
  const f = Math.min(1, (t - T.preflight - T.baseline) / T.ramp);
  return 5 + Math.floor(45 * f);
}

/** A virtual user's connection, ready for operations: legacy eras initialize (and keep a session). */
async function openUser(port, era, user) {
  // each user a caller of its own (127.0.0.2, .3, …), as 50 users are: a per-caller session cap (picomcp
  // keeps 32 per anonymous address) is for one client opening many, which this workload is not
  const c = new HttpConnection(port, `127.0.0.${2 + user}`);
  await c.ready;
  if (era === "2026-07-28") return c;
  const init = await c.request(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { ...INIT_PARAMS, protocolVersion: era },
    }),
  );
  if (init.status !== 200) throw new Error(`initialize answered ${init.status}: ${init.body.slice(0, 200)}`);
  const version = answerOf(init.headers, init.body)?.result?.protocolVersion;
  if (version !== era) throw new Error(`initialize negotiated ${version}, not ${era}`);
  c.headers["MCP-Protocol-Version"] = version;
  const session = init.headers["mcp-session-id"];
  if (session) c.headers["Mcp-Session-Id"] = session;
  await c.request('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  return c;
}

/** The workload against one server: ops/s over the whole run, latencies (ms), server CPU per op, errors. */
function workload(peer, era, T) {
  const total = T.preflight + T.baseline + T.ramp;
  const modern = era === "2026-07-28";
  const make = bodies(modern);
  const callHeaders = { "MCP-Protocol-Version": era, "Mcp-Method": "tools/call", "Mcp-Name": "echo" };
  const listHeaders = { "MCP-Protocol-Version": era, "Mcp-Method": "tools/list" };
  return new Promise((resolve, reject) => {
    const lat = [];
    const conns = [];
    let ops = 0;
    let errors = 0;
    let firstError;
    let n = 0;
    let starting = 0;
    let busy = 0;
    let ended = false;
    const cpu0 = cpuMicros(peer.pid);
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    const end = t0 + total;
    let done = false;
    const finish = () => {
      if (done || busy > 0 || starting > 0) return;
      done = true;
      clearTimeout(guard);
      for (const c of conns) c.close();
      const own = process.cpuUsage(own0);
      lat.sort((a, b) => a - b);
      resolve({
        clientCpu: (own.user + own.system) / Math.max(1, ops),
        opsPerSec: (ops * 1000) / total,
        ops,
        p50: lat[lat.length >> 1],
        p99: lat[Math.floor(lat.length * 0.99)],
        cpu: (cpuMicros(peer.pid) - cpu0) / Math.max(1, ops),
        errors,
        firstError,
      });
    };
    const operate = (c) => {
      if (performance.now() >= end) {
        busy--;
        if (ended) finish();
        return;
      }
      const id = ++n;
      const list = id % 10 === 0;
      if (modern) c.headers = list ? listHeaders : callHeaders;
      const sent = performance.now();
      c.post(list ? make.list(id) : make.call(id), (status, h, body) => {
        const now = performance.now();
        if (now <= end) {
          ops++;
          lat.push(now - sent);
        }
        let good = status === 200;
        if (good && id % CHECK_EVERY < 2) {
          try {
            good = (list ? listOk : callOk)(answerOf(h, body));
          } catch {
            good = false;
          }
        }
        if (!good) {
          errors++;
          firstError ??= `${list ? "tools/list" : "tools/call"} answered ${status} ${body.slice(0, 160)}`;
        }
        operate(c);
      });
    };
    const grow = () => {
      const now = performance.now();
      if (now >= end) {
        clearInterval(ticker);
        ended = true;
        finish();
        return;
      }
      while (conns.length + starting < usersAt(now - t0, T)) {
        openUser(peer.port, era, conns.length + starting++).then(
          (c) => {
            starting--;
            conns.push(c);
            busy++;
            operate(c);
          },
          (error) => {
            starting--;
            clearInterval(ticker);
            clearTimeout(guard);
            for (const c of conns) c.close();
            reject(error);
          },
        );
      }
    };
    const ticker = setInterval(grow, 10);
    // a server that stops answering fails the phase instead of hanging the bench
    const guard = setTimeout(() => {
      clearInterval(ticker);
      for (const c of conns) c.close();
      reject(new Error(`no end: ${busy} operation(s) never answered`));
    }, total + 30_000);
    grow();
  });
}

/** One round: every contender `names` (run.js's `--only`) keeps, in their harness's rotated order. */
export async function mcpUsePhase(T, names, fail, log) {
  const list = MCPUSE.filter(([, server]) => names.includes(server));
  round++;
  // their order: rotated by 3 a round, reversed on even rounds
  const offset = ((round - 1) * 3) % list.length;
  const rotated = [...list.slice(offset), ...list.slice(0, offset)];
  const order = round % 2 === 0 ? rotated.reverse() : rotated;
  log(`  mcp-use workload, round ${round}: ${order.map(([key]) => key).join(", ")}`);
  for (const [key, server, , era, args] of order) {
    let peer;
    try {
      peer = await HttpPeer.start(server, args);
      const r = await workload(peer, era, T);
      if (r.errors) fail(key, `mcp-use workload: ${r.errors} bad answers, the first: ${r.firstError}`);
      add("ops", key, r.opsPerSec);
      add("p50", key, r.p50);
      add("p99", key, r.p99);
      add("cpu", key, r.cpu);
      add("clientCpu", key, r.clientCpu);
      add("rss", key, rssMiB(peer.pid));
    } catch (error) {
      fail(key, `mcp-use workload: ${error.message}`);
    } finally {
      await peer?.stop();
    }
  }
}

const ROWS = [
  ["ops", "operations per second, the whole run (their `throughput`)", "high"],
  ["p50", "… p50 latency (ms)", "low"],
  ["p99", "… p99 latency (ms)", "low"],
  ["cpu", "… server CPU per operation (µs)", "low"],
  // beside the server's: a load generator near a core's worth (1e6 µs/s ÷ ops/s) would be the limit
  ["clientCpu", "… the load generator's CPU per operation (µs)", "low"],
  ["rss", "RSS after the run (MiB)", "low"],
];

const cell = (v, key) =>
  v === undefined || Number.isNaN(v)
    ? "–"
    : key === "ops"
      ? Math.round(v).toLocaleString("en-US")
      : v >= 100
        ? v.toFixed(0)
        : v >= 10
          ? v.toFixed(1)
          : v.toFixed(2);

/** The phase's markdown: the table, picomcp's ratios, and its place in their published table. */
export function mcpUseReport(quick = false) {
  if (!samples.ops) return "";
  const keys = MCPUSE.map(([key]) => key).filter((k) => samples.ops[k]);
  const label = Object.fromEntries(MCPUSE.map(([key, , l, era]) => [key, `${l} (${era})`]));
  const value = (metric, key) => median(samples[metric]?.[key]);
  const lines = [
    "",
    `## mcp-use workload: 90% \`tools/call\` echo, 10% \`tools/list\`, 1 → 5 → 50 virtual users (one request in flight each), Streamable HTTP; ${round} round(s), medians`,
    "",
    quick
      ? "--quick: stages of 0.1 + 0.15 + 0.4 s, a correctness check; the figures are cold starts, not throughput."
      : "Ratios from this machine and this run; the era each contender spoke is beside its name (their harness's).",
    "",
    `| | ${keys.map((k) => label[k]).join(" | ")} |`,
    `|---|${keys.map(() => "---:").join("|")}|`,
  ];
  for (const [metric, text] of ROWS)
    lines.push(`| ${text} | ${keys.map((k) => cell(value(metric, k), metric)).join(" | ")} |`);
  const ratio = (a, b, better = "high") => {
    const x = value("ops", a);
    const y = value("ops", b);
    if (x === undefined || y === undefined) return undefined;
    return better === "high" ? x / y : y / x;
  };
  lines.push("", "| picomcp's ops/s ÷ | ratio | server CPU per op, theirs ÷ picomcp's |", "|---|---:|---:|");
  for (const k of keys) {
    if (k === "picomcp") continue;
    const mine = k === "tmcp" && samples.ops["picomcp-session"] ? "picomcp-session" : "picomcp";
    const r = ratio(mine, k);
    const c = value("cpu", k) / value("cpu", mine);
    const who = mine === "picomcp" ? "" : " (picomcp with a 2025-11-25 session)";
    lines.push(
      `| ${label[k]}${who} | ${r === undefined ? "–" : `${r.toFixed(2)}×`} | ${Number.isFinite(c) ? `${c.toFixed(2)}×` : "–"} |`,
    );
  }
  const placed = PUBLISHED.filter(([k]) => samples.ops[k]);
  if (placed.length && samples.ops.picomcp && !quick) {
    lines.push(
      "",
      "Their published medians (2026-07-27, their machine and versions) and picomcp's place by each: their figure × picomcp's ratio here, by ops/s and by server CPU per operation (a single-threaded server at 50 users is CPU-bound, and the CPU ratio moves less with the machine's load than the ops/s one).",
      "",
      "| by | their ops/s | picomcp ÷ it here, ops/s | placed at | picomcp ÷ it here, CPU per op | placed at |",
      "|---|---:|---:|---:|---:|---:|",
    );
    for (const [k, name, ops] of placed) {
      const mine = k === "tmcp" && samples.ops["picomcp-session"] ? "picomcp-session" : "picomcp";
      const r = ratio(mine, k);
      const c = value("cpu", k) / value("cpu", mine);
      const n = (x) => Math.round(x).toLocaleString("en-US");
      lines.push(
        `| ${name}${mine === "picomcp" ? "" : ", beside picomcp with a session"} | ${n(ops)} | ${r.toFixed(2)}× | ${n(ops * r)} | ${c.toFixed(2)}× | ${n(ops * c)} |`,
      );
    }
    lines.push(
      "",
      "Their table also has Prefect's FastMCP-TS at 6,628 ops/s (not on the registry, so not run here).",
    );
  }
  return `${lines.join("\n")}\n`;
}
