// The telemetry phase of `npm run bench` (`--phases telemetry`): picomcp's echo with telemetry off,
// with picomcp/otel on the API's no-op providers, and with the real SDK (batch processor, OTLP/HTTP
// export to a sink; see servers/otel.js), stdio and HTTP, the three interleaved (the order rotates
// each round), medians and ratios to "off" from the same run.
import { answerOf, cpuMicros, HttpPeer, httpLoad, openConnections, StdioPeer } from "./clients.js";

const VARIANTS = [
  ["off", []],
  ["no-op tracer", ["--otel", "noop"]],
  ["SDK, batch + OTLP", ["--otel", "sdk"]],
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
  const lines = [
    "",
    `## Telemetry (picomcp/otel): ${round} round(s), variants interleaved; medians, ratios to "off" (above 1×: slower)`,
    "",
    `| | ${names.join(" | ")} | no-op ÷ off | SDK ÷ off |`,
    `|---|${names.map(() => "---:").join("|")}|---:|---:|`,
  ];
  const ratio = {};
  for (const [key, label, higherIsBetter] of ROWS) {
    const m = names.map((n) => (samples[key]?.[n] ? median(samples[key][n]) : undefined));
    const cost = (v) =>
      v === undefined || m[0] === undefined ? undefined : higherIsBetter ? m[0] / v : v / m[0];
    ratio[key] = [cost(m[1]), cost(m[2])];
    const cell = (v) => (v === undefined ? "–" : v >= 1000 ? `${(v / 1000).toFixed(1)}k` : v.toFixed(2));
    const r = (v) => (v === undefined ? "–" : `${v.toFixed(3)}×`);
    lines.push(`| ${label} | ${m.map(cell).join(" | ")} | ${r(ratio[key][0])} | ${r(ratio[key][1])} |`);
  }
  if (!quick) {
    const sdk = ratio.stdioRps[1];
    lines.push(
      "",
      `- stdio throughput with the SDK on: ${((1 - 1 / sdk) * 100).toFixed(1)}% less than off (target ≤ 15%)`,
      `- with the no-op tracer: ${((1 - 1 / ratio.stdioRps[0]) * 100).toFixed(1)}% (telemetry off costs nothing: see bench/micro.js for the heap bytes per request)`,
    );
  }
  return `${lines.join("\n")}\n`;
}
