// Heap bytes allocated per request on the stdio request path (handleNow of parsed messages), with
// telemetry off, measured in a child with a young generation large enough that no scavenge runs
// during the loop (a run that saw one is measured again); the median of seven runs. With a second build (`--baseline DIR`,
// say main's dist) the same loop runs on it: "before" and "after" side by side.
//   node bench/heap.js [--baseline dir-of-another-build]
import { execFileSync } from "node:child_process";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const N = 5000;
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

async function measure(dist, mode) {
  const { McpServer } = await import(`${dist}index.js`);
  const server = new McpServer({ name: "heap", version: "1" });
  server.tool("echo", { input: { type: "object" }, run: () => "hello" });
  if (mode === "noop") (await import(`${dist}otel/index.js`)).instrument(server);
  const conn = server.connect({ send: () => {} });
  const stateless = mode === "2026-07-28";
  if (!stateless) {
    const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "b", version: "1" } };
    server.handleNow({ jsonrpc: "2.0", id: 0, method: "initialize", params: init }, conn);
  }
  const params = (i) => ({ name: "echo", arguments: { i }, ...(stateless ? { _meta: META } : {}) });
  const make = (n) =>
    Array.from({ length: n }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: params(i),
    }));
  const options = Object.freeze({ carrier: "pipe" });
  for (let w = 0; w < 20; w++) for (const m of make(N)) server.handleNow(m, conn, options); // warm: the JIT settles
  let gcs = 0;
  const obs = new PerformanceObserver((list) => {
    gcs += list.getEntries().length;
  });
  obs.observe({ entryTypes: ["gc"] });
  const runs = [];
  for (let attempt = 0; attempt < 15 && runs.length < 7; attempt++) {
    const messages = make(N);
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
    gcs = 0;
    const before = process.memoryUsage().heapUsed;
    for (const m of messages) server.handleNow(m, conn, options);
    const after = process.memoryUsage().heapUsed;
    await new Promise((r) => setTimeout(r, 10));
    if (gcs === 0) runs.push((after - before) / N);
  }
  runs.sort((a, b) => a - b);
  obs.disconnect();
  return runs.length ? runs[runs.length >> 1] : Number.NaN;
}

if (process.argv[2] === "--child") {
  process.stdout.write(JSON.stringify(await measure(process.argv[3], process.argv[4])));
} else {
  const i = process.argv.indexOf("--baseline");
  const builds = [["this build", new URL("../dist/", import.meta.url).href]];
  if (i !== -1) builds.unshift(["--baseline", pathToFileURL(`${process.argv[i + 1]}/`).href]);
  const rows = [];
  for (const mode of ["2025-11-25", "2026-07-28", "noop"]) {
    const row = {
      request: mode === "noop" ? "2025-11-25, instrument() on no-op providers" : `tools/call ${mode}`,
    };
    for (const [name, dist] of builds) {
      if (mode === "noop" && name === "--baseline") continue;
      const out = execFileSync(process.execPath, [
        "--expose-gc",
        "--min-semi-space-size=64",
        "--max-semi-space-size=64",
        fileURLToPath(import.meta.url),
        "--child",
        dist,
        mode,
      ]);
      row[`${name} (bytes/request)`] = Math.round(Number(out.toString()));
    }
    rows.push(row);
  }
  console.log(
    "\n## Heap bytes allocated per request, stdio path, telemetry off (no scavenge during the loop)",
  );
  console.table(rows);
}
