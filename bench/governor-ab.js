// What the governor costs: two builds of picomcp in one process, measured in turns (A, B, B, A, …) so
// that a shared, noisy machine slows both alike. Phases: stdio (serveStdio on in-memory streams,
// `tools/call` echo lines in, answers out), and the fetch handler in-process (a stateless POST, a
// 2025-11-25 session POST, a 2026-07-28 POST). Prints each phase's median CPU time per request (the
// process's user + system time: waiting for a core a neighbour holds does not count) for each build,
// their ratio, and the spread of the per-round ratios (how noisy the machine was); and the tenth
// percentile and the best turn of each (noise only ever adds time, so the fastest turns are the
// steadiest estimate of the cost itself). Give the same build twice to see how far apart noise alone puts them.
//   node bench/governor-ab.js <dist of the build before> [rounds] [ms per turn]
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";

const before = process.argv[2];
if (!before) throw new Error("usage: node bench/governor-ab.js <dist of the build before> [rounds] [ms]");
const rounds = Number(process.argv[3] ?? 15);
const turnMs = Number(process.argv[4] ?? 400);

async function load(dir) {
  const base = pathToFileURL(`${dir}/`).href;
  const { McpServer } = await import(`${base}index.js`);
  const { createHttpHandler } = await import(`${base}http/index.js`);
  const { serveStdio } = await import(`${base}stdio.js`);
  return { McpServer, createHttpHandler, serveStdio };
}

const builds = {
  after: await load(new URL("../dist", import.meta.url).pathname),
  before: await load(before),
};

const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const echo = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"}}}`;
const modernEcho = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"},${META}}}`;

function server(b) {
  const s = new b.McpServer({ name: "bench", version: "1.0.0" });
  s.tool("echo", {
    description: "echo",
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: ({ text }) => text,
  });
  return s;
}

/** stdio: a burst of lines written at once, answers counted; ns per request. */
async function stdioPhase(b) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  b.serveStdio(server(b), { stdin, stdout, onEnd: () => {}, guardConsole: false });
  let answers = 0;
  let waiter;
  stdout.on("data", (c) => {
    for (let i = 0; i < c.length; i++) if (c[i] === 10) answers++;
    waiter?.();
  });
  const upTo = (n) =>
    new Promise((resolve) => {
      waiter = () => answers >= n && resolve();
      waiter();
    });
  stdin.write(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}\n',
  );
  await upTo(1);
  let id = 1;
  const burst = 256;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let done = 0;
  while (performance.now() - t0 < turnMs) {
    let lines = "";
    for (let i = 0; i < burst; i++) lines += `${echo(id++)}\n`;
    stdin.write(lines);
    done += burst;
    await upTo(done + 1);
  }
  const ns = cpuNs(cpu0) / done;
  stdin.end();
  return ns;
}

/** CPU nanoseconds this process spent since `from` (a `process.cpuUsage()`). */
const cpuNs = (from) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) * 1000;
};

const HEADERS = {
  host: "127.0.0.1:3000",
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
};
const URL_ = "http://127.0.0.1:3000/mcp";

/** The fetch handler: 32 requests at a time, each built, answered and read; ns per request. */
async function httpPhase(b, mode) {
  const handler = b.createHttpHandler(server(b), mode === "stateless" ? { sessions: false } : {});
  let headers = HEADERS;
  if (mode === "session") {
    const init = await handler(
      new Request(URL_, {
        method: "POST",
        headers: HEADERS,
        body: '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}',
      }),
    );
    await init.text();
    headers = {
      ...HEADERS,
      "mcp-session-id": init.headers.get("mcp-session-id"),
      "mcp-protocol-version": "2025-11-25",
    };
  } else if (mode === "modern") {
    headers = {
      ...HEADERS,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "echo",
    };
  }
  const make = mode === "modern" ? modernEcho : echo;
  let id = 1;
  const one = async () => {
    const res = await handler(new Request(URL_, { method: "POST", headers, body: make(id++) }));
    if (res.status !== 200) throw new Error(`${mode}: ${res.status} ${await res.text()}`);
    await res.text();
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let done = 0;
  while (performance.now() - t0 < turnMs) {
    await Promise.all(Array.from({ length: 32 }, one));
    done += 32;
  }
  const ns = cpuNs(cpu0) / done;
  handler.close();
  return ns;
}

const PHASES = {
  stdio: stdioPhase,
  "HTTP stateless": (b) => httpPhase(b, "stateless"),
  "HTTP session": (b) => httpPhase(b, "session"),
  "HTTP 2026-07-28": (b) => httpPhase(b, "modern"),
};

const samples = {};
for (const phase of Object.keys(PHASES)) samples[phase] = { after: [], before: [] };
// a warm-up turn each, not counted
for (const [, run] of Object.entries(PHASES)) for (const b of Object.values(builds)) await run(b);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ["after", "before"] : ["before", "after"];
  for (const [phase, run] of Object.entries(PHASES))
    for (const name of order) samples[phase][name].push(await run(builds[name]));
  process.stderr.write(`round ${r + 1}/${rounds}\n`);
}

// The governor's own work per request, alone in a loop: what the dispatcher adds to every request
// (the caller's key, the admission), and what the HTTP handler adds (the caller again, and one body
// in eight large enough to be counted: its bytes taken and given back). Steadier than the A/B turns: it is a few hundred nanoseconds of work.
// The modules one by one, from the unbundled tree `npm run build` writes beside the published dist/.
const dist = new URL("../build/lib/", import.meta.url).href;
const { Governor } = await import(`${dist}limits/governor.js`);
const { callerKey } = await import(`${dist}limits/key.js`);
const { HttpGovernor } = await import(`${dist}http/limits.js`);
const conn = server(builds.after).connect({ send: () => {} });
const params = { name: "echo", arguments: { text: "hello" } };
const governor = new Governor({});
const http = new HttpGovernor({});
const request = new Request(URL_, { method: "POST", headers: HEADERS, body: "{}" });
const alone = { core: [], http: [] };
// what the loops give is kept, so that nothing in them can be left out as unused
let refused = 0;
for (let r = 0; r < 21; r++) {
  const n = 200_000;
  let t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) if (governor.admit(callerKey(undefined, conn), "tools/call", params)) refused++;
  alone.core.push(cpuNs(t0) / n);
  t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    // what a POST adds: its caller, and its body counted (a small one is not)
    if (http.caller(request, undefined) === "") refused++;
    const count = http.count(request, undefined);
    if (count.grow(i % 8 === 0 ? 4096 : 120)) refused++;
    count.end();
  }
  alone.http.push(cpuNs(t0) / n);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(
  `${rounds} rounds of ${turnMs} ms turns, builds alternating; CPU ns per request (lower is better)\n`,
);
const p10 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 10)];
console.log(
  "| phase | before (median) | after (median) | after ÷ before (median of round ratios) | round ratios min … max | before (p10) | after (p10) | after ÷ before (p10) | after ÷ before (best) |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const [phase, { after, before: b }] of Object.entries(samples)) {
  const ratios = after.map((a, i) => a / b[i]);
  console.log(
    `| ${phase} | ${median(b).toFixed(0)} | ${median(after).toFixed(0)} | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(2)} … ${Math.max(...ratios).toFixed(2)} | ${p10(b).toFixed(0)} | ${p10(after).toFixed(0)} | ${(p10(after) / p10(b)).toFixed(3)} | ${(Math.min(...after) / Math.min(...b)).toFixed(3)} |`,
  );
}
console.log(
  `\n${refused === 0 ? "" : "(refused: the loops measured a refusal) "}The governor alone (best and median of 21 loops of 200000): the dispatcher's part ${Math.min(...alone.core).toFixed(0)} / ${median(alone.core).toFixed(0)} ns per request; the HTTP handler's part ${Math.min(...alone.http).toFixed(0)} / ${median(alone.http).toFixed(0)} ns per request`,
);
