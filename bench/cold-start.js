// Cold start of the example server: spawn → the initialize answer on stdout. Run after `npm run build`.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const example = fileURLToPath(new URL("../build/examples/bookshop.js", import.meta.url));
const init = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } })}\n`;

function once() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [example], { stdio: ["pipe", "pipe", "ignore"] });
    child.stdin.write(init);
    child.stdout.once("data", () => {
      const ms = performance.now() - t0;
      child.stdin.end();
      child.on("exit", () => resolve(ms));
    });
    child.on("error", reject);
  });
}

/** Median and spread of `runs` cold starts, in ms. */
export async function benchColdStart(runs = 15) {
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await once());
  times.sort((a, b) => a - b);
  return { runs, min: times[0], median: times[Math.floor(runs / 2)], max: times[runs - 1] };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await benchColdStart();
  console.log(
    `cold start (spawn → initialize answer), ${r.runs} runs: min ${r.min.toFixed(1)} ms, median ${r.median.toFixed(1)} ms, max ${r.max.toFixed(1)} ms`,
  );
}
