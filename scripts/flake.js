// Runs the whole vitest suite several times in a row while other processes keep the cores busy, and
// names every test that failed at least once: a test that waits on time instead of on its condition
// shows here long before it fails in CI. `npm run flake` (5 runs, 2 busy processes), or
// `node scripts/flake.js --runs 3 --burners 2 [vitest args, e.g. a test file]`.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} wants a whole number, got ${args[at + 1]}`);
    process.exit(2);
  }
  args.splice(at, 2);
  return value;
};
const runs = option("--runs", 5);
const burnerCount = option("--burners", 2);
const build = !args.includes("--no-build");
const vitestArgs = args.filter((a) => a !== "--no-build");

if (build) {
  // several tests start dist/ in child processes: build it once, before the load starts
  const built = spawnSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

// the load: busy loops, one per core by default on this project's 2-core machines
const burners = Array.from({ length: burnerCount }, () =>
  spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }),
);
const stopBurners = () => {
  for (const b of burners) if (b.exitCode === null && b.signalCode === null) process.kill(b.pid, "SIGKILL");
};
process.on("exit", stopBurners);
for (const signal of ["SIGINT", "SIGTERM"])
  process.on(signal, () => {
    stopBurners();
    process.exit(130);
  });

const dir = mkdtempSync(join(tmpdir(), "picomcp-flake-"));
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
/** Each failing test's full name → the runs it failed in. */
const failures = new Map();
let failedRuns = 0;

for (let run = 1; run <= runs; run++) {
  const report = join(dir, `run-${run}.json`);
  const started = Date.now();
  const code = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [vitest, "run", "--reporter=dot", "--reporter=json", `--outputFile.json=${report}`, ...vitestArgs],
      { cwd: root, stdio: ["ignore", "inherit", "inherit"] },
    );
    child.on("exit", (c, signal) => resolve(c ?? signal));
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  let summary = `exit ${code}, no report`;
  try {
    const json = JSON.parse(readFileSync(report, "utf8"));
    for (const file of json.testResults) {
      // a file that failed to load has no assertions: count the file itself
      if (file.status === "failed" && file.assertionResults.every((a) => a.status !== "failed"))
        note(`${file.name.slice(root.length)}: ${file.message || "failed to run"}`, run);
      for (const a of file.assertionResults)
        if (a.status === "failed") note(`${file.name.slice(root.length)} > ${a.fullName}`, run);
    }
    summary = `${json.numPassedTests} passed, ${json.numFailedTests} failed, ${json.numPendingTests} skipped`;
  } catch {
    // no report: the run itself broke; its exit code says so below
  }
  if (code !== 0) failedRuns++;
  console.log(`flake: run ${run}/${runs}: ${summary} (${seconds} s, ${burnerCount} busy processes)`);
}
stopBurners();
rmSync(dir, { recursive: true, force: true });

if (failures.size === 0 && failedRuns === 0) {
  console.log(`flake: ${runs} runs under load, no test failed`);
} else {
  console.log(`flake: ${failedRuns} of ${runs} runs failed; each test that failed, and in which runs:`);
  for (const [name, inRuns] of failures) console.log(`  ${name}  (run ${inRuns.join(", ")})`);
  process.exitCode = 1;
}

function note(name, run) {
  const seen = failures.get(name) ?? [];
  seen.push(run);
  failures.set(name, seen);
}
