// The telemetry phase of `npm run bench` (`--phases telemetry`): picomcp's echo with telemetry off,
// with picomcp/otel on the API's no-op providers, with the real SDK (batch processor, OTLP/HTTP
// export to a sink; see servers/otel.js) sampling every trace and a tenth of them, stdio and HTTP,
// the four interleaved (the order rotates each round), medians and ratios to "off" from the same run.
// `node bench/telemetry.js --split` splits the cost in one process instead (see splitMain below).
import { pathToFileURL } from "node:url";
import { answerOf, cpuMicros, HttpPeer, httpLoad, openConnections, StdioPeer } from "./clients.js";

const VARIANTS = [
  ["off", []],
  ["no-op tracer", ["--otel", "noop"]],
  ["SDK, batch + OTLP", ["--otel", "sdk"]],
  ["SDK, 10% sampled", ["--otel", "sdk-sampled"]],
];
/** samples[metric][variant] = numbers. */
const samples = {};
const add = (metric, variant, value) => {
  samples[metric] ??= {};
  samples[metric][variant] ??= [];
  samples[metric][variant].push(value);
};
let round = 0;

const echo = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"}}}`;
const ok = (m, id) => m?.result?.content?.[0]?.text === `hello ${id}` && !m.result.isError;

/** One round of the phase: every variant over stdio, then over HTTP (stateless), in a rotated order. */
export async function telemetryPhase(T, fail) {
  const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]);
  round++;
  for (const [variant, args] of order) {
    const peer = await StdioPeer.start("picomcp", args);
    try {
      if (!ok(await peer.call(echo(7), 7), 7)) fail("picomcp", `telemetry ${variant}: a wrong stdio echo`);
      const e = await peer.load(echo, { ms: T.load });
      add("stdioRps", variant, e.rps);
      add("stdioCpu", variant, e.cpuUs);
    } finally {
      await peer.stop();
    }
  }
  for (const [variant, args] of order) {
    const peer = await HttpPeer.start("picomcp", args);
    try {
      const conns = await openConnections(peer.port, T.conns, { sessions: false });
      const first = await conns[0].request(echo(3));
      if (!ok(answerOf(first.headers, first.body), 3))
        fail("picomcp", `telemetry ${variant}: a wrong HTTP echo`);
      await httpLoad(conns, echo, T.warm);
      const cpu0 = cpuMicros(peer.pid);
      const r = await httpLoad(conns, echo, T.http, (m) => m?.result?.content?.[0]?.type === "text");
      add("httpCpu", variant, (cpuMicros(peer.pid) - cpu0) / r.count);
      add("httpRps", variant, r.rps);
      if (r.bad) fail("picomcp", `telemetry ${variant}: ${r.bad} bad HTTP answers`);
      for (const c of conns) c.close();
    } finally {
      await peer.stop();
    }
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const ROWS = [
  ["stdioRps", "stdio `tools/call` echo, 64 in flight (req/s)", true],
  ["stdioCpu", "… server CPU per request (µs)", false],
  ["httpRps", "Streamable HTTP stateless echo, 50 connections (req/s)", true],
  ["httpCpu", "… server CPU per request (µs)", false],
];

/** The phase's markdown table (empty when it did not run), and its targets. */
export function telemetryReport(quick) {
  if (!samples.stdioRps) return "";
  const names = VARIANTS.map(([v]) => v);
  const others = names.slice(1);
  const lines = [
    "",
    `## Telemetry (picomcp/otel): ${round} round(s), variants interleaved; medians, ratios to "off" (above 1×: slower)`,
    "",
    `| | ${names.join(" | ")} | ${others.map((n) => `${n} ÷ off`).join(" | ")} |`,
    `|---|${names.map(() => "---:").join("|")}|${others.map(() => "---:").join("|")}|`,
  ];
  const ratio = {};
  for (const [key, label, higherIsBetter] of ROWS) {
    const m = names.map((n) => (samples[key]?.[n] ? median(samples[key][n]) : undefined));
    const cost = (v) =>
      v === undefined || m[0] === undefined ? undefined : higherIsBetter ? m[0] / v : v / m[0];
    ratio[key] = m.slice(1).map(cost);
    const cell = (v) => (v === undefined ? "–" : v >= 1000 ? `${(v / 1000).toFixed(1)}k` : v.toFixed(2));
    const r = (v) => (v === undefined ? "–" : `${v.toFixed(3)}×`);
    lines.push(`| ${label} | ${m.map(cell).join(" | ")} | ${ratio[key].map(r).join(" | ")} |`);
  }
  if (!quick) {
    const less = (x) => `${((1 - 1 / x) * 100).toFixed(1)}%`;
    const [noop, sdk, sampled] = ratio.stdioRps;
    lines.push(
      "",
      `- stdio throughput less than off: no-op tracer ${less(noop)}, SDK ${less(sdk)}, SDK 10% sampled ${less(sampled)} (target for the SDK: ≤ 15%)`,
      "- telemetry off allocates and calls nothing for it: `node bench/heap.js` (heap bytes per request) and `node bench/telemetry.js --split --callgrind` (instructions per request)",
    );
  }
  return `${lines.join("\n")}\n`;
}

// ---------------------------------------------------------------------------------------------
// The split: where telemetry's cost goes, in one process per variant, on the stdio path (framing,
// JSON, dispatch, encoding; stdin and stdout in memory, so no system call is counted). Each variant
// adds one layer to the one before: the difference between two rows is what that layer costs.
//   node bench/telemetry.js --split [--rounds N] [--callgrind] [--baseline dir-of-another-build]
// CPU µs per request (process.cpuUsage over the measured requests, medians of interleaved rounds),
// and with --callgrind the instructions per request (valgrind's count for 4000 + 20000 requests minus
// the count for 4000, ÷ 20000: start-up and warm-up cancel out; node runs --single-threaded there, so
// that no concurrent compiler or GC thread's timing moves the count).
// --baseline runs "off" on another build too (say, the commit before picomcp/otel existed).
const SPLIT = [
  ["off", undefined],
  ["no-op providers (picomcp/otel's own work)", "noop"],
  ["SDK, 10% sampled", "sdk-sampled"],
  ["SDK, spans made and batched, export dropped", "sdk-drop"],
  ["SDK, batch + OTLP/HTTP export", "sdk"],
];

/** In the child: serve `warm` then `n` echo calls through serveStdio on in-memory streams. */
async function splitChild(dist, mode, warm, n) {
  const { EventEmitter } = await import("node:events");
  const { McpServer } = await import(`${dist}index.js`);
  const { serveStdio } = await import(`${dist}stdio.js`);
  const { z } = await import("zod");
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  server.tool("echo", { input: z.object({ text: z.string() }), run: ({ text }) => text });
  const otel = mode ? await (await import("./servers/otel.js")).instrumentFor(server, mode, dist) : {};
  const stdin = new EventEmitter();
  let lines = 0;
  let wake = () => {};
  const stdout = {
    write(chunk, done) {
      for (let i = chunk.indexOf("\n"); i !== -1; i = chunk.indexOf("\n", i + 1)) lines++;
      done?.();
      wake();
      return true;
    },
    once() {},
  };
  serveStdio(server, { stdin, stdout, guardConsole: false, onEnd: () => {} });
  const answered = (count) =>
    new Promise((resolve) => {
      wake = () => lines >= count && resolve();
      wake();
    });
  stdin.emit(
    "data",
    `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } })}\n`,
  );
  await answered(1);
  stdin.emit("data", '{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  let id = 1;
  const serve = async (count) => {
    for (let sent = 0; sent < count; sent += 64) {
      let text = "";
      for (let i = 0; i < 64; i++) text += `${echo(id++)}\n`;
      stdin.emit("data", text);
      await answered(id);
      // a turn of the event loop per window, as a pipe gives: the batch processor's timers and exports run
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await serve(warm);
  const cpu0 = process.cpuUsage();
  await serve(n);
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / n, dropped: otel.dropped?.() ?? 0 };
}

async function splitMain(argv) {
  const { execFileSync } = await import("node:child_process");
  const { readFileSync, rmSync } = await import("node:fs");
  const { fileURLToPath } = await import("node:url");
  const self = fileURLToPath(import.meta.url);
  const flag = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
  const rounds = Number(flag("--rounds", 3));
  const callgrind = argv.includes("--callgrind");
  const baseline = flag("--baseline", undefined);
  const dist = new URL("../dist/", import.meta.url).href;
  const variants = SPLIT.map(([label, mode]) => ({ label, mode, dist }));
  if (baseline)
    variants.unshift({
      label: `off, ${baseline}`,
      mode: undefined,
      dist: pathToFileURL(`${baseline}/`).href,
    });
  const child = (v, warm, n, prefix = [], flags = []) => {
    const args = [
      ...prefix,
      process.execPath,
      ...flags,
      self,
      "--split-child",
      v.dist,
      v.mode ?? "off",
      warm,
      n,
    ];
    return execFileSync(args[0], args.slice(1), { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  };
  const cpu = new Map(variants.map((v) => [v, []]));
  const dropped = new Map(variants.map((v) => [v, 0]));
  for (let r = 0; r < rounds; r++)
    for (let i = 0; i < variants.length; i++) {
      const v = variants[(i + r) % variants.length];
      const out = JSON.parse(child(v, 20_000, 40_000));
      cpu.get(v).push(out.cpuUs);
      dropped.set(v, dropped.get(v) + out.dropped);
    }
  const instructions = new Map();
  if (callgrind)
    for (const v of variants) {
      const ir = (n) => {
        const file = `/tmp/picomcp-callgrind-${process.pid}.out`;
        // one thread: no concurrent compiler or GC thread whose timing would move the count
        const valgrind = ["valgrind", "--tool=callgrind", `--callgrind-out-file=${file}`];
        child(v, 4000, n, valgrind, ["--single-threaded"]);
        const total = Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(file, "utf8"))[1]);
        rmSync(file);
        return total;
      };
      const small = ir(0);
      instructions.set(v, (ir(20_000) - small) / 20_000);
    }
  const off = variants.find((v) => v.mode === undefined && v.dist === dist);
  const lines = [
    `## Telemetry cost split, stdio path in one process: ${rounds} round(s) interleaved, medians${callgrind ? "; instructions from callgrind" : ""}`,
    "",
    `| variant | CPU µs/request | ÷ off |${callgrind ? " instructions/request | ÷ off |" : ""} spans dropped |`,
    `|---|---:|---:|${callgrind ? "---:|---:|" : ""}---:|`,
  ];
  for (const v of variants) {
    const us = median(cpu.get(v));
    const row = [v.label, us.toFixed(2), `${(us / median(cpu.get(off))).toFixed(3)}×`];
    if (callgrind)
      row.push(
        Math.round(instructions.get(v)).toLocaleString("en"),
        `${(instructions.get(v) / instructions.get(off)).toFixed(3)}×`,
      );
    row.push(String(dropped.get(v)));
    lines.push(`| ${row.join(" | ")} |`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

const main = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (main && process.argv[2] === "--split-child") {
  const [dist, mode, warm, n] = process.argv.slice(3);
  const out = await splitChild(dist, mode === "off" ? undefined : mode, Number(warm), Number(n));
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
} else if (main && process.argv.includes("--split")) await splitMain(process.argv.slice(2));
