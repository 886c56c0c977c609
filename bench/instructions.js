// Instructions per request on the five hot paths, counted by valgrind's callgrind in the server process
// (bench/servers/picomcp.js, the bench's fixture; node --single-threaded with fixed seeds, see `node`
// below). The paths, one per part of the request path:
//   stdio-echo      stdio `tools/call` echo, 2025-11-25: dispatch, zod validation, the result, serialization
//   stdio-read      stdio `resources/read` of users://{id}/profile behind 10 other templates: template matching
//   http-stateless  Streamable HTTP, 2026-07-28 `tools/call` echo, no session: the node:http bridge, the
//                   handler's checks, the per-request envelope of the stateless revision
//   http-sessionless Streamable HTTP, 2025-11-25 `tools/call` echo with `sessions: false` (the bench's
//                   "HTTP stateless"): the bridge, a connection of its own per request
//   http-session    Streamable HTTP, 2025-11-25 `tools/call` echo in a session: the bridge, a session looked
//                   up and touched per request
// Each path's server runs twice a round, serving W and then W + N requests in two processes; the
// difference of the two counts over N is one request's instructions (start-up, warm-up and exit cancel
// out). 2 rounds, and more (up to 5) for a path whose rounds disagree by 1% or more: now and then one
// run counts a few million more (a collection, say, whose timing a loaded machine moves), and the
// median of three is then not that run. stdio's lines come through a pipe filled at once (the client
// costs nothing in the count, and every read finds the pipe full; fed from a file, libuv's thread pool
// reads it and the counts moved more); HTTP's come from 8 keep-alive connections in this process,
// closed loop (see CONNECTIONS). Every answer is checked, else the count means nothing.
//   nice -n 10 node bench/instructions.js [--rounds N] [--only stdio-echo,http-session,…]
//                                         [--baseline <checkout or dist of another build>] [--json file]
//                                         [--connections N (HTTP; default 8)]
// Needs a built dist/ (`npm run build:dist`) and valgrind. About 8 minutes for the five paths at 2
// rounds on an idle machine (more when it is shared), twice that with --baseline, which runs the same
// fixture on the other build, the builds in turns, and prints the ratio. Progress goes to stderr, the
// markdown table to stdout (bench/results/instructions.md keeps the last one committed).
import { execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { answerOf, INIT_PARAMS, listening, openConnections } from "./clients.js";

const argv = process.argv.slice(2);
const flag = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const rounds = Number(flag("--rounds", 2));
const SERVER = fileURLToPath(new URL("./servers/picomcp.js", import.meta.url));
const FLOOR = fileURLToPath(new URL("./servers/floor.js", import.meta.url));
const here = fileURLToPath(new URL("../", import.meta.url));

/** A build: its dist/ directory, and a label with its commit when it is a checkout. */
function build(dir) {
  const root = resolve(dir);
  const dist = existsSync(join(root, "dist", "index.js")) ? join(root, "dist") : root;
  if (!existsSync(join(dist, "index.js"))) throw new Error(`no built dist/ in ${dir} (npm run build:dist)`);
  let commit = "";
  try {
    const head = execFileSync("git", ["-C", join(dist, ".."), "rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const dirty = execFileSync("git", ["-C", join(dist, ".."), "status", "--porcelain", "--", "src"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    commit = `${head}${dirty ? " + uncommitted src/" : ""}`;
  } catch {}
  return { dist, commit };
}

// --build: another checkout or dist/ measured as "this build" (a copy, say, while the worktree changes)
const builds = [{ name: "this build", ...build(flag("--build", here)) }];
const baseline = flag("--baseline");
if (baseline) builds.push({ name: "baseline", ...build(baseline) });
// --floor: the hand-written floor (servers/floor.js) in the same run, in turns with the build(s)
if (argv.includes("--floor")) builds.push({ name: "floor", dist: builds[0].dist, commit: "", server: FLOOR });

const echo = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"}}}`;
const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const modernEcho = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"},${META}}}`;
const read = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"resources/read","params":{"uri":"users://${id % 1000}/profile"}}`;
const echoed = (m, id) => m?.result?.content?.[0]?.text === `hello ${id}` && !m.result.isError;
const readBack = (m, id) => m?.result?.contents?.[0]?.text === `profile ${id % 1000}`;

const PATHS = {
  "stdio-echo": { label: "stdio `tools/call` echo (2025-11-25)", stdio: true, make: echo, ok: echoed },
  "stdio-read": {
    label: "stdio templated `resources/read`, 11 templates (2025-11-25)",
    stdio: true,
    make: read,
    ok: readBack,
  },
  "http-stateless": {
    label: "HTTP stateless `tools/call` echo (2026-07-28)",
    args: [],
    conns: { sessions: false, modern: true },
    make: modernEcho,
    ok: echoed,
  },
  "http-sessionless": {
    label: "HTTP `tools/call` echo without sessions (2025-11-25, `sessions: false`)",
    args: [],
    conns: { sessions: false },
    make: echo,
    ok: echoed,
  },
  "http-session": {
    label: "HTTP session `tools/call` echo (2025-11-25)",
    args: ["--sessions"],
    conns: { sessions: true },
    make: echo,
    ok: echoed,
  },
};
// W and W + N: stdio as the last round counted it, 20,000 after 4,000; HTTP 4,000 after 2,000 (8
// connections), longer than the last round's 2,000 after 2,000, which once gave 257 k against 209 k
const COUNTS = { stdio: [4000, 24_000], http: [2000, 6000] };
// how many requests a turn of the server's event loop finds, and so the count, depends on how fast the
// client answers beside it: run nothing else meanwhile, compare builds in one run (--baseline), or
// take --connections 1 (one request a turn, the same at any load)
const CONNECTIONS = Number(flag("--connections", 8));
for (const [key, path] of Object.entries(PATHS)) path.key = key;
const only = flag("--only", Object.keys(PATHS).join(",")).split(",");
for (const p of only) if (!PATHS[p]) throw new Error(`unknown path ${p}; the paths: ${Object.keys(PATHS)}`);

const work = mkdtempSync(join(tmpdir(), "picomcp-instructions-"));
process.once("SIGINT", () => {
  rmSync(work, { recursive: true, force: true });
  process.exit(130);
});
const log = (text) => process.stderr.write(`${text}\n`);
const valgrind = (out) => ["-q", "--tool=callgrind", `--callgrind-out-file=${out}`];
// One thread, so that no compiler or GC thread's timing moves the count; fixed seeds, so that start-up
// (a random hash seed tested for primality, say) costs the same every run (±3 M instructions without);
// V8's GC schedule fixed, since by default the heap grows by how fast GC and the program ran in wall
// time, which a loaded machine and valgrind's slowness move.
const node = (b) => [
  process.execPath,
  "--single-threaded",
  "--hash-seed=1",
  "--random-seed=1",
  "--predictable-gc-schedule",
  b.server ?? SERVER,
];

/** The total instruction count callgrind wrote, and the file removed. */
function total(file) {
  const count = Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(file, "utf8"))[1]);
  rmSync(file);
  return count;
}

/** Every request answered once, correctly; else the run's count means nothing. */
function checkAnswers(path, answers, n, what) {
  const seen = new Set();
  for (const m of answers) {
    if (m.id === 0) continue;
    if (!path.ok(m, m.id)) throw new Error(`${what}: a wrong answer ${JSON.stringify(m).slice(0, 300)}`);
    seen.add(m.id);
  }
  if (seen.size !== n) throw new Error(`${what}: ${seen.size} answers to ${n} requests`);
}

/**
 * The stdio server fed `n` requests (initialize first) through a pipe this process fills at once (the
 * server, slowed by valgrind, finds it full on every read), until the end of input exits it.
 */
async function stdioRun(path, b, n, what) {
  const input = join(work, `${path.key}-${n}.jsonl`);
  if (!existsSync(input)) {
    let text = `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: INIT_PARAMS })}\n`;
    text += '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
    for (let id = 1; id <= n; id++) text += `${path.make(id)}\n`;
    writeFileSync(input, text);
  }
  const out = join(work, "callgrind.out");
  const answers = join(work, "answers.jsonl");
  const fdOut = openSync(answers, "w");
  try {
    const child = spawn("valgrind", [...valgrind(out), ...node(b), "stdio"], {
      stdio: ["pipe", fdOut, "inherit"],
      env: { ...process.env, PICOMCP_DIST: b.dist },
    });
    const code = await new Promise((ok) => {
      child.on("exit", ok);
      child.stdin.on("error", () => {});
      child.stdin.end(readFileSync(input));
    });
    if (code !== 0) throw new Error(`${what}: the server exited with ${code}`);
  } finally {
    closeSync(fdOut);
  }
  const lines = readFileSync(answers, "utf8").split("\n").filter(Boolean);
  checkAnswers(
    path,
    lines.map((l) => JSON.parse(l)),
    n,
    what,
  );
  rmSync(answers);
  return total(out);
}

/** `n` requests over `conns`, closed loop (each connection sends its next when its answer came). */
function httpRequests(path, conns, n, first, what) {
  return new Promise((resolveAll, reject) => {
    let next = first;
    const last = first + n;
    let open = conns.length;
    const send = (c) => {
      if (next >= last) {
        if (--open === 0) resolveAll();
        return;
      }
      const id = next++;
      c.post(path.make(id), (status, headers, body) => {
        const m = status === 200 ? answerOf(headers, body) : undefined;
        if (!path.ok(m, id)) reject(new Error(`${what}: ${status} ${body.slice(0, 300)}`));
        else send(c);
      });
    };
    for (const c of conns) send(c);
  });
}

/** The HTTP server under callgrind, `n` requests over 8 connections, then SIGTERM (callgrind writes its count). */
async function httpRun(path, b, n, what) {
  const out = join(work, "callgrind.out");
  const { child, port } = await listening("valgrind", [...valgrind(out), ...node(b), "http", ...path.args], {
    ...process.env,
    PICOMCP_DIST: b.dist,
  });
  const exited = new Promise((ok) => child.on("exit", ok));
  try {
    const conns = await openConnections(port, CONNECTIONS, path.conns);
    await httpRequests(path, conns, n, 1, what);
    for (const c of conns) c.close();
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
  return total(out);
}

/** One request's instructions: (count(W + N) - count(W)) / N. */
async function perRequest(key, b, r) {
  const path = PATHS[key];
  const [w, wn] = path.stdio ? COUNTS.stdio : COUNTS.http;
  const run = path.stdio ? stdioRun : httpRun;
  const what = `${key}, ${b.name}, round ${r + 1}`;
  const t0 = performance.now();
  const small = await run(path, b, w, `${what}, ${w}`);
  const large = await run(path, b, wn, `${what}, ${wn}`);
  const ir = (large - small) / (wn - w);
  runs[key] ??= [];
  runs[key].push({ build: b.name, round: r + 1, [w]: small, [wn]: large });
  log(`${what}: ${Math.round(ir)} instructions/request (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  return ir;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const started = performance.now();
/** samples[path][build name] = instructions per request, one a round; runs: callgrind's totals of each run. */
const samples = {};
const runs = {};
const spreadOf = (xs) => (Math.max(...xs) - Math.min(...xs)) / median(xs);
try {
  for (let r = 0; r < rounds; r++)
    for (const key of only)
      for (let i = 0; i < builds.length; i++) {
        const b = builds[(i + r) % builds.length];
        samples[key] ??= {};
        samples[key][b.name] ??= [];
        samples[key][b.name].push(await perRequest(key, b, r));
      }
  // a path whose rounds disagree by 1% or more gets more rounds (up to 5), so that its median is not one outlier
  for (const key of only)
    for (const b of builds)
      for (let r = samples[key][b.name].length; r < 5 && spreadOf(samples[key][b.name]) >= 0.01; r++)
        samples[key][b.name].push(await perRequest(key, b, r));
} finally {
  rmSync(work, { recursive: true, force: true });
}

const int = (x) => Math.round(x).toLocaleString("en");
/** The rounds' spread: (max - min) / median, in %. */
const spread = (xs) => `${(spreadOf(xs) * 100).toFixed(2)}%`;

const [self, base] = builds;
const lines = [
  `## Instructions per request in the server process (callgrind, node --single-threaded), ${rounds} round(s)`,
  "",
  `Machine: ${cpus()[0]?.model ?? "CPU"}, Node ${process.version}, ${execFileSync("valgrind", ["--version"], { encoding: "utf8" }).trim()}.`,
  `stdio: (count of ${COUNTS.stdio[1]} requests - count of ${COUNTS.stdio[0]}) ÷ ${COUNTS.stdio[1] - COUNTS.stdio[0]}, lines through a pipe; HTTP: (${COUNTS.http[1]} - ${COUNTS.http[0]}) ÷ ${COUNTS.http[1] - COUNTS.http[0]}, ${CONNECTIONS} keep-alive connections, closed loop.`,
  `This build: ${self.commit || "not a git checkout"}${base ? `; baseline: ${base.commit || "not a git checkout"}` : ""}. Each cell is the median of the rounds (a path whose rounds disagree by 1% or more gets more, up to 5); the rounds' figures and their spread ((max - min) ÷ median) follow it.`,
  "",
  base
    ? "| path | this build | rounds | spread | baseline | rounds | spread | this ÷ baseline |"
    : "| path | instructions/request | rounds | spread |",
  base ? "|---|---:|---|---:|---:|---|---:|---:|" : "|---|---:|---|---:|",
];
for (const key of only) {
  const row = [PATHS[key].label];
  for (const b of builds) {
    const xs = samples[key][b.name];
    row.push(int(median(xs)), xs.map(int).join(", "), spread(xs));
  }
  if (base) row.push(`${(median(samples[key][self.name]) / median(samples[key][base.name])).toFixed(3)}×`);
  lines.push(`| ${row.join(" | ")} |`);
}
process.stdout.write(`${lines.join("\n")}\n`);
const json = flag("--json");
if (json)
  writeFileSync(
    json,
    `${JSON.stringify({ rounds, counts: COUNTS, connections: CONNECTIONS, builds: builds.map(({ name, commit }) => ({ name, commit })), samples, runs }, null, 1)}\n`,
  );
log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
