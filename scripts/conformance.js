// `npm run conformance`: the official MCP conformance suite (both installed versions, devDependencies)
// against ONE examples/conformance-server process on 127.0.0.1: the 2025 era with both, then 2026-07-28
// with 0.2.x, so one endpoint is shown to serve both eras, then the extension scenarios (tasks, skills);
// then the authorization-server scenarios against examples/conformance-auth (scripts/conformance/
// authorization.js). Prints one line per scenario and ends with "N passed, N failed" (the server
// scenarios) and "authorization server: N passed, N failed" (counted apart); exits 1 if any scenario
// failed or a run had fewer than expected.
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { AUTHORIZATION_SCENARIOS, runAuthorizationScenarios } from "./conformance/authorization.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const register = fileURLToPath(new URL("./conformance/register.mjs", import.meta.url));
const runs = [
  {
    name: "0.1.16 --suite all",
    cli: "node_modules/@modelcontextprotocol/conformance/dist/index.js",
    args: ["--suite", "all"],
    expect: 32,
  },
  {
    name: "0.2.0-alpha.12 --suite all --spec-version 2025-11-25",
    cli: "node_modules/conformance-next/dist/index.js",
    args: ["--suite", "all", "--spec-version", "2025-11-25"],
    expect: 33,
  },
  {
    name: "0.2.0-alpha.12 --suite all --spec-version 2026-07-28",
    cli: "node_modules/conformance-next/dist/index.js",
    args: ["--suite", "all", "--spec-version", "2026-07-28"],
    expect: 40,
  },
  {
    // without --spec-version, --suite all also runs the extension scenarios (at 2026-07-28); the
    // rest of that run repeats the runs above, so only the extensions' rows are counted
    name: "0.2.0-alpha.12 --suite all (extensions: tasks, skills)",
    cli: "node_modules/conformance-next/dist/index.js",
    args: ["--suite", "all"],
    only: /^(tasks-|sep-2640-skills-)/,
    expect: 13,
  },
];

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const waitForPort = async (port, ms = 15_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const ok = await new Promise((r) => {
      const c = connect(port, "127.0.0.1", () => {
        c.destroy();
        r(true);
      });
      c.once("error", () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the conformance server did not listen on ${port}`);
};

function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 600_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

let passed = 0;
let failed = 0;
const port = await freePort();
const server = spawn(process.execPath, ["build/examples/conformance-server.js"], {
  cwd: root,
  env: { ...process.env, PORT: String(port), HOST: "127.0.0.1" },
  stdio: ["ignore", "ignore", "inherit"],
});
try {
  await waitForPort(port);
  const url = `http://127.0.0.1:${port}/mcp`;
  for (const r of runs) {
    const { out } = await run(
      process.execPath,
      ["--import", register, r.cli, "server", "--url", url, ...r.args],
      {},
    );
    const rows = [...out.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gm)].filter(
      ([, , name]) => !r.only || r.only.test(name),
    );
    console.log(`\n# @modelcontextprotocol/conformance ${r.name}`);
    for (const [, mark, name, ok, bad] of rows) {
      const good = mark === "✓" && bad === "0";
      console.log(`${good ? "PASS" : "FAIL"}  ${name.padEnd(45)} ${ok}/${Number(ok) + Number(bad)} checks`);
      if (good) passed++;
      else failed++;
    }
    if (rows.length < r.expect) {
      console.log(`FAIL  only ${rows.length} of ${r.expect} scenarios ran`);
      console.log(out.split("\n").slice(-30).join("\n").slice(0, 4000));
      failed += r.expect - rows.length;
    }
  }
} finally {
  server.kill("SIGTERM");
}

// the authorization server: a server of its own, and the suite's `authorization` command
let asPassed = 0;
let asFailed = 0;
{
  const { rows, out } = await runAuthorizationScenarios();
  console.log(
    "\n# @modelcontextprotocol/conformance 0.2.0-alpha.12 authorization (picomcp's authorization server)",
  );
  for (const { mark, name, passed: ok, failed: bad } of rows) {
    const good = mark === "✓" && bad === 0;
    console.log(`${good ? "PASS" : "FAIL"}  ${name.padEnd(45)} ${ok}/${ok + bad} checks`);
    if (good) asPassed++;
    else asFailed++;
  }
  if (rows.length < AUTHORIZATION_SCENARIOS.length) {
    console.log(`FAIL  only ${rows.length} of ${AUTHORIZATION_SCENARIOS.length} scenarios ran`);
    console.log(out.split("\n").slice(-30).join("\n").slice(0, 4000));
    asFailed += AUTHORIZATION_SCENARIOS.length - rows.length;
  }
}
console.log(`\n${passed} passed, ${failed} failed`);
console.log(`authorization server: ${asPassed} passed, ${asFailed} failed`);
process.exit(failed > 0 || asFailed > 0 ? 1 : 0);
