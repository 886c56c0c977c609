// Cold start: spawn → the initialize answer on stdout, for the bench's fixture (bench/servers/), picomcp
// beside the floor: its tool's input as plain JSON Schema beside the floor, and with zod beside the floor
// that imports zod (and the official SDK, which imports zod too, beside that floor). Run after `npm run build`. The targets run in turns, round after round, so that a
// machine whose speed drifts slows them alike; each ratio is taken run by run against the floor of the
// same round, and the report gives min and median.
//   node bench/cold-start.js [--runs N] [--dist DIR …]   (each --dist: picomcp from another build too)
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const servers = fileURLToPath(new URL("./servers/", import.meta.url));
const init = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } })}\n`;

/** Milliseconds from spawning `node file args` to the first bytes of its answer. */
function once({ file, args, env }) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [file, "stdio", ...args], {
      stdio: ["pipe", "pipe", "ignore"],
      env: env ?? process.env,
    });
    child.stdin.write(init);
    child.stdout.once("data", () => {
      const ms = performance.now() - t0;
      child.stdin.end();
      child.on("exit", () => resolve(ms));
    });
    child.on("error", reject);
  });
}

const floor = (args) => ({ file: `${servers}floor.js`, args });
const picomcp = (args, dist) => ({
  file: `${servers}picomcp.js`,
  args,
  env: dist ? { ...process.env, PICOMCP_DIST: dist } : undefined,
});

/** The targets: [name, how to start it, the floor it is compared with]. */
function targets(dists = []) {
  const list = [
    ["floor", floor([]), "floor"],
    ["floor that imports zod", floor(["--zod"]), "floor that imports zod"],
    ["picomcp, plain JSON Schema", picomcp(["--plain"]), "floor"],
    ["picomcp, zod", picomcp([]), "floor that imports zod"],
    ["official SDK v1, zod", { file: `${servers}sdk1.js`, args: [] }, "floor that imports zod"],
  ];
  for (const dist of dists) {
    list.push([`picomcp (${dist}), plain JSON Schema`, picomcp(["--plain"], dist), "floor"]);
    list.push([`picomcp (${dist}), zod`, picomcp([], dist), "floor that imports zod"]);
  }
  return list;
}

/** Min and median of each target's cold starts in ms, and of its ratios to its floor, run by run. */
export async function benchColdStart(runs = 15, dists = []) {
  const list = targets(dists);
  const times = new Map(list.map(([name]) => [name, []]));
  for (let i = 0; i < runs; i++) {
    // the order rotates every round: no target always runs first, or right after the slowest
    for (let j = 0; j < list.length; j++) {
      const [name, target] = list[(i + j) % list.length];
      times.get(name).push(await once(target));
    }
  }
  const stats = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { min: sorted[0], median: sorted[sorted.length >> 1] };
  };
  return list.map(([name, , base]) => {
    const t = times.get(name);
    const ratios = t.map((ms, i) => ms / times.get(base)[i]);
    const ms = stats(t);
    const ratio = stats(ratios);
    return {
      server: name,
      runs,
      minMs: +ms.min.toFixed(1),
      medianMs: +ms.median.toFixed(1),
      "÷ its floor (min)": +ratio.min.toFixed(3),
      "÷ its floor (median)": +ratio.median.toFixed(3),
    };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2);
  const runs = argv.includes("--runs") ? Number(argv[argv.indexOf("--runs") + 1]) : 15;
  const dists = argv.flatMap((a, i) => (a === "--dist" ? [argv[i + 1]] : []));
  console.table(await benchColdStart(runs, dists));
}
