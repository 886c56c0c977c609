// `npm run bench`: picomcp beside the hand-written floor and every peer library, one fixture
// (bench/servers/fixture.js), every contender a child process, interleaved round by round (the order
// rotates each round), medians and ratios from the same run. Progress goes to stderr, the report to
// stdout (markdown) and the chart to docs/performance.svg.
//   node bench/run.js [--quick] [--rounds N] [--only floor,picomcp,…] [--phases stdio,HTTP-stateless,…]
//                     [--baseline dir-of-another-build] [--json file] [--svg file] [--from saved.json]
// --quick checks that every contender answers every phase correctly, with no timing assertion (CI).
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { answerOf, cpuMicros, HttpPeer, httpLoad, openConnections, rssMiB, StdioPeer } from "./clients.js";
import { heapPhase } from "./heap-phase.js";
import { MCPUSE_TIMES, mcpUsePhase, mcpUseReport, mcpUseSaved } from "./mcpuse.js";
import { report } from "./report.js";
import { installedSizes } from "./sizes.js";
import { telemetryPhase, telemetryReport } from "./telemetry.js";
import { TMDEVLAB_TIMES, tmdevlabPhase, tmdevlabReport } from "./tmdevlab.js";

const argv = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = argv.indexOf(name);
  return i === -1 ? fallback : argv[i + 1];
};
const quick = argv.includes("--quick");
const rounds = Number(flag("--rounds", quick ? 1 : 3));
const CONTENDERS = {
  floor: "floor (no library)",
  picomcp: "picomcp",
  "mcp-lite": "mcp-lite 0.10.0",
  tmcp: "tmcp 1.20.0",
  sdk1: "SDK 1.32.2",
  sdk2: "SDK v2 2.4.0",
  "mcp-use": "mcp-use 2.5.2",
  "mcp-handler": "mcp-handler 2.4.0",
};
// Contenders that serve Streamable HTTP only (neither ships a stdio transport: mcp-use's MCPServer
// listens on HTTP or is a fetch handler; mcp-handler is a route handler for Next.js-style apps): the
// stdio phases (stdio, cold start, template scaling, resources/list, the heap phase's stdio half) show
// "–" for them, not a failure.
const HTTP_ONLY = new Set(["mcp-use", "mcp-handler"]);
// Contenders with no sessions at all (a fresh SDK server per request, by design): "–" in the sessions row.
const STATELESS_ONLY = new Set(["mcp-use", "mcp-handler"]);
// --baseline DIR: picomcp from another build too (say main's dist), as "before" beside "after"
const baseline = flag("--baseline");
if (baseline) {
  process.env.PICOMCP_BASELINE = baseline;
  CONTENDERS.baseline = "picomcp before (--baseline)";
}
const names = flag("--only", Object.keys(CONTENDERS).join(",")).split(",");
// the build --baseline names runs beside whatever --only lists
if (baseline && !names.includes("baseline")) names.push("baseline");
const T = quick
  ? { load: 150, latency: 20, cold: 1, scaling: [10, 1000], list: 1, conns: 4, http: 200, warm: 50 }
  : {
      load: 1000,
      latency: 300,
      cold: 3,
      scaling: [10, 100, 1000, 5000],
      list: 5,
      conns: 50,
      http: 1500,
      warm: 300,
    };

const echo = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"}}}`;
const read = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"resources/read","params":{"uri":"users://${id % 1000}/profile"}}`;
const miss = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"resources/read","params":{"uri":"users://${id % 1000}/settings"}}`;
const list = (id, cursor) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "resources/list", params: cursor ? { cursor } : {} });

const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const modernEcho = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"},${META}}}`;
const echoOk = (m, id) => m?.result?.content?.[0]?.text === `hello ${id}` && !m.result.isError;
const readOk = (m, id) => m?.result?.contents?.[0]?.text === `profile ${id % 1000}`;

/** samples[metric][contender] = numbers; each phase pushes one per round. */
const samples = {};
const add = (metric, name, value) => {
  samples[metric] ??= {};
  samples[metric][name] ??= [];
  samples[metric][name].push(value);
};
const failures = [];
const fail = (name, what) => {
  failures.push(`${name}: ${what}`);
  log(`  FAIL ${name}: ${what}`);
};
const log = (text) => process.stderr.write(`${text}\n`);

async function check(peer, name, line, id, ok, what) {
  const answer = await peer.call(line, id);
  if (!ok(answer, id)) fail(name, `${what} answered ${JSON.stringify(answer).slice(0, 200)}`);
}

async function stdioPhase(name) {
  const peer = await StdioPeer.start(name);
  add("cold", name, peer.coldMs);
  add("rssStart", name, rssMiB(peer.pid));
  await check(peer, name, echo(7), 7, echoOk, "tools/call echo");
  await check(peer, name, read(8), 8, readOk, "resources/read users://8/profile");
  await check(peer, name, miss(9), 9, (m) => m?.error !== undefined, "a read of an unknown URI");
  const e = await peer.load(echo, { ms: T.load });
  add("echoRps", name, e.rps);
  add("echoCpu", name, e.cpuUs);
  const r = await peer.load(read, { ms: T.load });
  add("readRps", name, r.rps);
  add("readCpu", name, r.cpuUs);
  const lat = await peer.latency(echo, T.latency);
  add("latP50", name, lat[lat.length >> 1]);
  add("latP99", name, lat[Math.floor(lat.length * 0.99)]);
  add("rssLoad", name, rssMiB(peer.pid));
  await peer.stop();
  if (name !== "floor" && name !== "picomcp" && name !== "baseline") return;
  if (name === "floor") {
    // the floor that imports zod, under the same load: beside it, picomcp's own rows with zod
    const zod = await StdioPeer.start(name, ["--zod"]);
    await zod.load(echo, { ms: T.load });
    await zod.load(read, { ms: T.load });
    await zod.latency(echo, T.latency);
    add("rssLoadZod", name, rssMiB(zod.pid));
    await zod.stop();
  } else add("rssLoadZod", name, samples.rssLoad[name].at(-1));
  // the same load on the server whose tool's input is plain JSON Schema: the memory without zod's modules
  const plain = await StdioPeer.start(name, ["--plain"]);
  await check(plain, name, echo(7), 7, echoOk, "tools/call echo (plain JSON Schema)");
  await plain.load(echo, { ms: T.load });
  await plain.load(read, { ms: T.load });
  add("rssLoadPlain", name, rssMiB(plain.pid));
  await plain.stop();
}

async function coldPhase(name) {
  for (let i = 0; i < T.cold; i++) {
    const peer = await StdioPeer.start(name);
    add("cold", name, peer.coldMs);
    await peer.stop();
    if (name !== "floor" && name !== "picomcp" && name !== "baseline") continue;
    if (name === "floor") {
      const zod = await StdioPeer.start(name, ["--zod"]);
      add("coldZod", name, zod.coldMs);
      await zod.stop();
    } else add("coldZod", name, peer.coldMs);
    // the same server with its tool's input as plain JSON Schema: the start without zod's import
    const plain = await StdioPeer.start(name, ["--plain"]);
    await check(plain, name, echo(7), 7, echoOk, "tools/call echo (plain JSON Schema)");
    add("coldPlain", name, plain.coldMs);
    await plain.stop();
  }
}

async function scalingPhase(name) {
  for (const n of T.scaling) {
    const peer = await StdioPeer.start(name, ["--templates", String(n)]);
    await check(peer, name, read(5), 5, readOk, `a read among ${n} templates`);
    add(`hit${n}`, name, (await peer.load(read, { ms: T.load / 2 })).rps);
    add(`miss${n}`, name, (await peer.load(miss, { ms: T.load / 2 })).rps);
    await peer.stop();
  }
}

async function listPhase(name) {
  const peer = await StdioPeer.start(name, ["--statics", "10000"]);
  const times = [];
  for (let i = 0; i < T.list; i++) {
    const t0 = performance.now();
    let total = 0;
    let cursor;
    let id = 100 * i + 1;
    do {
      const answer = await peer.call(list(id, cursor), id);
      id++;
      total += answer.result?.resources?.length ?? 0;
      cursor = answer.result?.nextCursor;
    } while (cursor);
    times.push(performance.now() - t0);
    if (total !== 10000) fail(name, `resources/list listed ${total} of 10000`);
  }
  add("list", name, times.sort((a, b) => a - b)[times.length >> 1]);
  await peer.stop();
}

/** Contenders that serve 2026-07-28 over HTTP; the others get "–" in that row, not a failure. */
const MODERN = new Set(["floor", "picomcp", "baseline", "tmcp", "sdk2", "mcp-use", "mcp-handler"]);

async function httpPhase(name, sessions, modern = false) {
  if (sessions && STATELESS_ONLY.has(name)) return;
  const mode = modern ? "Modern" : sessions ? "Sessions" : "Stateless";
  const make = modern ? modernEcho : echo;
  const peer = await HttpPeer.start(name, sessions ? ["--sessions"] : []);
  try {
    const conns = await openConnections(peer.port, T.conns, { sessions, modern });
    const first = await conns[0].request(make(3));
    let answer;
    try {
      answer = answerOf(first.headers, first.body);
    } catch {}
    if (!echoOk(answer, 3)) {
      const what = `HTTP ${mode.toLowerCase()} echo answered ${first.status} ${first.body.slice(0, 200)}`;
      if (modern && !MODERN.has(name)) log(`  ${name} does not serve 2026-07-28 (${what.slice(0, 120)})`);
      else fail(name, what);
      for (const c of conns) c.close();
      return;
    }
    await httpLoad(conns, make, T.warm);
    const cpu0 = cpuMicros(peer.pid);
    const r = await httpLoad(conns, make, T.http, (m) => m?.result?.content?.[0]?.type === "text");
    add(`http${mode}Cpu`, name, (cpuMicros(peer.pid) - cpu0) / r.count);
    if (r.bad) fail(name, `${r.bad} bad HTTP answers`);
    add(`http${mode}Rps`, name, r.rps);
    add(`http${mode}P50`, name, r.p50);
    add(`http${mode}P99`, name, r.p99);
    if (sessions) add("rssHttp", name, rssMiB(peer.pid));
    for (const c of conns) c.close();
  } catch (error) {
    fail(name, `HTTP ${mode.toLowerCase()}: ${error.message}`);
  } finally {
    await peer.stop();
  }
}

/** A stdio phase: contenders without stdio skip it. */
const stdio = (run) => (name) => (HTTP_ONLY.has(name) ? undefined : run(name));

const ALL_PHASES = [
  ["stdio", stdio(stdioPhase)],
  ["cold start", stdio(coldPhase)],
  ["template scaling", stdio(scalingPhase)],
  ["resources/list", stdio(listPhase)],
  ["HTTP stateless", (n) => httpPhase(n, false)],
  ["HTTP sessions", (n) => httpPhase(n, true)],
  ["HTTP 2026-07-28", (n) => httpPhase(n, false, true)],
  ["heap", (n) => heapPhase(n, { echo, read }, add, fail, quick, !HTTP_ONLY.has(n))],
  // picomcp alone, three telemetry set-ups side by side (a table of its own)
  ["telemetry", (n) => (n === "picomcp" ? telemetryPhase(T, fail) : undefined)],
  // the TM Dev Lab v1 workload: picomcp and the official SDK 1.x, each pinned to one core (a table of its own)
  [
    "tmdevlab",
    (n) => (n === "picomcp" ? tmdevlabPhase(TMDEVLAB_TIMES[quick ? "quick" : "full"], fail) : undefined),
  ],
  // the workload of mcp-use's public benchmark: picomcp, the floor and the HTTP libraries it has in common
  // with their table, in their rotated order (a table of its own)
  [
    "mcp-use",
    (n) =>
      n === "picomcp" ? mcpUsePhase(MCPUSE_TIMES[quick ? "quick" : "full"], names, fail, log) : undefined,
  ],
];

const only = flag("--phases");
const PHASES = only ? ALL_PHASES.filter(([p]) => only.split(",").includes(p.replace(/ /g, "-"))) : ALL_PHASES;

// --from FILE: the report and chart again from the samples a run saved with --json, without measuring
const from = flag("--from");
const saved = from ? JSON.parse(readFileSync(from, "utf8")) : undefined;
// JSON keeps a NaN sample (a contender the phase could not measure) as null: NaN again, as measured
if (saved)
  for (const [metric, byName] of Object.entries(saved.samples))
    samples[metric] = Object.fromEntries(
      Object.entries(byName).map(([n, values]) => [n, values.map((v) => (v === null ? Number.NaN : v))]),
    );
mcpUseSaved.restore(saved?.mcpUse);
const started = performance.now();
for (let round = 0; round < (saved ? 0 : rounds); round++) {
  for (const [phase, run] of PHASES) {
    // rotate the order every round so that no contender always runs first (or right after the slowest)
    const order = names.map((_, i) => names[(i + round) % names.length]);
    log(`round ${round + 1}/${rounds}, ${phase}: ${order.join(", ")}`);
    for (const name of order) {
      try {
        await run(name);
      } catch (error) {
        fail(name, `${phase}: ${error.message}`);
      }
    }
  }
}
log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);

const sizes = saved?.sizes ?? installedSizes(names);
const machine =
  saved?.machine ??
  `${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, Node ${process.version}, ${process.platform}`;
const out = report({
  samples,
  sizes,
  names,
  labels: CONTENDERS,
  machine,
  rounds: saved?.rounds ?? rounds,
  quick,
  scaling: T.scaling,
});
process.stdout.write(out.markdown + telemetryReport(quick) + tmdevlabReport() + mcpUseReport(quick));
const json = flag("--json");
if (json)
  writeFileSync(
    json,
    JSON.stringify({ machine, rounds, samples, sizes, mcpUse: mcpUseSaved.save() }, null, 1),
  );
if (!quick) {
  const svg = flag("--svg", fileURLToPath(new URL("../docs/performance.svg", import.meta.url)));
  writeFileSync(svg, out.svg);
  log(`chart written to ${svg}`);
}
if (failures.length) {
  log(`\n${failures.length} failure(s):\n${failures.join("\n")}`);
  process.exit(1);
}
if (quick) log(`every contender answered every phase correctly (${names.length} contenders)`);
