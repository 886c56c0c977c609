// Cold start of the example server: spawn → the initialize answer on stdout. Run after `npm run build`.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const targets = {
  picomcp: [fileURLToPath(new URL("../build/examples/bookshop.js", import.meta.url)), "--stdio"],
  "official SDK": [fileURLToPath(new URL("./fixtures/sdk-stdio-server.js", import.meta.url))],
  "bare node (floor)": [fileURLToPath(new URL("./fixtures/bare-stdio.js", import.meta.url))],
};
const init = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } })}\n`;

function once(args) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"] });
    child.stdin.write(init);
    child.stdout.once("data", () => {
      const ms = performance.now() - t0;
      child.stdin.end();
      child.on("exit", () => resolve(ms));
    });
    child.on("error", reject);
  });
}

/** Median and spread of `runs` cold starts of each target, in ms, interleaved so that load affects all alike. */
export async function benchColdStart(runs = 15) {
  const times = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  for (let i = 0; i < runs; i++)
    for (const [name, args] of Object.entries(targets)) times[name].push(await once(args));
  return Object.entries(times).map(([server, t]) => {
    t.sort((a, b) => a - b);
    return {
      server,
      runs,
      minMs: +t[0].toFixed(1),
      medianMs: +t[runs >> 1].toFixed(1),
      maxMs: +t[runs - 1].toFixed(1),
    };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) console.table(await benchColdStart());
