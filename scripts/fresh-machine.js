// The README's path on a fresh machine, walked for real: a clone of this repository's committed HEAD in
// a temporary directory, with chromium and redis-server absent from the PATH, then the README's
// commands: `npm install` (no EBADENGINE warning but the ones the README explains), `npm start` (it
// serves; a ping is answered), `npm test` (passes; the Redis tests say in one line that they were
// skipped). Then picomcp installed into a project of its own, as the README says to before it is on
// the registry, from the clone's directory and from a git URL, and every subpath imported.
// `npm run fresh-machine`; .ci/run runs it. It takes minutes: it installs and tests a whole clone.
import { execFileSync, spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "picomcp-fresh-"));
const keep = process.argv.includes("--keep");
const step = (text) => console.log(`\nfresh-machine: ${text}`);

// every command of this PATH but chromium and redis-server, linked into one directory
const bin = join(work, "bin");
mkdirSync(bin);
for (const dir of (process.env.PATH ?? "").split(delimiter)) {
  let names = [];
  try {
    names = readdirSync(dir);
  } catch {
    continue;
  }
  for (const name of names) {
    if (/^(chromium|redis-)/.test(name)) continue;
    try {
      symlinkSync(join(dir, name), join(bin, name));
    } catch {
      // an earlier directory of the PATH has it: that one wins, as in a shell
    }
  }
}
const env = { ...process.env, PATH: bin };
for (const name of ["PICOMCP_REQUIRE_SERVICES", "REDIS_URL", "npm_config_prefix", "INIT_CWD"])
  delete env[name];
for (const name of Object.keys(env)) if (name.startsWith("npm_")) delete env[name];

/** Runs a command with the fresh PATH, its output shown; resolves with its stdout and with all of it. */
function sh(command, args, cwd) {
  console.log(`$ ${command} ${args.join(" ")}`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let all = "";
    let stdout = "";
    const show = (chunk) => {
      all += chunk;
      process.stdout.write(chunk);
    };
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      show(chunk);
    });
    child.stderr.on("data", show);
    child.on("exit", (code) =>
      code === 0
        ? resolve({ stdout, all })
        : reject(new Error(`${command} ${args.join(" ")} exited with ${code}`)),
    );
  });
}

try {
  for (const absent of ["chromium", "redis-server"])
    if (readdirSync(bin).includes(absent)) throw new Error(`${absent} is still on the PATH`);
  const clone = join(work, "picomcp");
  step("a clone of the committed HEAD");
  execFileSync("git", ["clone", "--quiet", repo, clone]);

  step("npm install (its prepare script builds dist/)");
  const install = (await sh("npm", ["install", "--no-audit", "--no-fund"], clone)).all;
  // the README explains the ones @ai-sdk/mcp and mcp-use bring; any other is new
  const engines = [...install.matchAll(/EBADENGINE\s+package: '([^']+)'/g)].map((m) => m[1]);
  const explained = (p) => p.startsWith("@ai-sdk/") || p.startsWith("@mcp-use/") || p.startsWith("mcp-use@");
  const unexplained = engines.filter((p) => !explained(p));
  if (unexplained.length) throw new Error(`EBADENGINE warnings the README does not explain: ${unexplained}`);

  step("npm start: it serves, and answers an initialize");
  await start(clone);

  step("npm test, without chromium and redis-server");
  const test = (await sh("npm", ["test"], clone)).all;
  const skipped = test.split("\n").filter((l) => l.includes("SKIPPED:"));
  if (skipped.length !== 1 || !skipped[0].includes("apt-get install -y redis-server"))
    throw new Error(`expected one SKIPPED line naming apt-get install -y redis-server, got ${skipped}`);

  step("PICOMCP_REQUIRE_SERVICES=1: the missing redis-server is a failure");
  const required = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["node_modules/vitest/vitest.mjs", "run", "test/redis/redis-store.test.ts"],
      {
        cwd: clone,
        env: { ...env, PICOMCP_REQUIRE_SERVICES: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    child.on("exit", (code) => resolve({ code, out }));
  });
  if (required.code === 0 || !required.out.includes("apt-get install -y redis-server"))
    throw new Error(`PICOMCP_REQUIRE_SERVICES=1 did not fail on the missing redis-server:\n${required.out}`);

  for (const [how, spec] of [
    ["the clone's directory", clone],
    ["a git URL", `git+file://${clone}`],
  ]) {
    step(`a project of its own installs picomcp from ${how}`);
    const project = join(work, `project-${how.split(" ").pop()}`);
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      '{ "name": "project", "version": "1.0.0", "type": "module" }\n',
    );
    // the directory: the clone above, its dev dependencies installed as the README says (prepare
    // builds dist/ in it again); the git URL: npm clones it, installs them and builds it itself
    const source = spec;
    await sh("npm", ["install", source, "jose", "@opentelemetry/api", "--no-audit", "--no-fund"], project);
    const pkg = JSON.parse(readFileSync(join(clone, "package.json"), "utf8"));
    const subpaths = Object.keys(pkg.exports)
      .filter((s) => s !== "./package.json")
      .map((s) => (s === "." ? "picomcp" : `picomcp/${s.slice(2)}`));
    writeFileSync(
      join(project, "check.js"),
      `for (const s of ${JSON.stringify(subpaths)}) {\n` +
        "  const m = await import(s);\n" +
        '  if (Object.keys(m).length === 0) throw new Error(s + " exports nothing");\n' +
        "}\n" +
        `console.log("imported ${subpaths.length} subpaths");\n`,
    );
    await sh(process.execPath, ["check.js"], project);
  }

  step("npm pack of a clone without dist/ packs a built tree");
  rmSync(join(clone, "dist"), { recursive: true, force: true });
  const [packed] = JSON.parse((await sh("npm", ["pack", "--json", "--silent", "--dry-run"], clone)).stdout);
  for (const f of ["dist/index.js", "dist/index.d.ts", "dist/http/node.js", "dist/dev/cli.js"])
    if (!packed.files.some((x) => x.path === f)) throw new Error(`npm pack left out ${f}`);
  step(`passed (${packed.files.length} files packed)`);
} finally {
  if (keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

/** `npm start` with PORT=0: waits for the URL it prints, initializes, then stops the server by its PID. */
async function start(cwd) {
  const child = spawn("npm", ["start"], {
    cwd,
    env: { ...env, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  try {
    const url = await new Promise((resolve, reject) => {
      let out = "";
      const look = (chunk) => {
        out += chunk;
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(out);
        if (m) resolve(m[1]);
      };
      child.stdout.on("data", look);
      child.stderr.on("data", look);
      child.on("exit", (code) => reject(new Error(`npm start exited with ${code}:\n${out}`)));
    });
    const res = await fetch(url, {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "fresh", version: "1" },
        },
      }),
    });
    const body = await res.text();
    if (res.status !== 200 || !body.includes('"serverInfo"'))
      throw new Error(`initialize: ${res.status} ${body}`);
    console.log(`${url} answered: ${body.trim().slice(0, 120)}…`);
  } finally {
    // npm start runs node under npm under sh: the group, by the PID of its leader
    if (child.exitCode === null) process.kill(-child.pid, "SIGTERM");
  }
}
