/**
 * docs/dev.md's commands, run as they are written, in the README's project: a fresh directory with
 * `"type": "module"`, `tsc --init`'s tsconfig, the README's server saved as `server.ts` (compiled to
 * `server.js` beside it), and picomcp, zod and TypeScript installed from this repository. The console
 * answers through the printed address; a change, rebuilt with the doc's second command, is served. Also:
 * the package ships every file of the console. Needs `npm run build` first (npm test does it).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevRunner } from "../../src/dev/runner.js";
import { call, status, toolCall } from "../dev-helpers.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const readme = readFileSync(join(root, "README.md"), "utf8");
const doc = readFileSync(join(root, "docs", "dev.md"), "utf8");
const example = readFileSync(join(root, "examples", "readme.ts"), "utf8");
// npm run by `npm test` passes npm_* settings down; a new user's shell has none of them
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

/** The commands of docs/dev.md's first sh block, comments dropped. */
const commands = (/```sh\n([\s\S]*?)```/.exec(doc)?.[1] ?? "")
  .split("\n")
  .map((line) => line.replace(/\s+#.*$/, "").trim())
  .filter(Boolean);

let dir = "";
let dev: ChildProcess | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "picomcp-dev-docs-"));
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: dir, env, encoding: "utf8" });
  // the README's set-up, with the packages from this repository instead of the registry
  run("npm", ["init", "-y"]);
  run("npm", ["pkg", "set", "type=module"]);
  const modules = join(root, "node_modules");
  const offline = ["--offline", "--no-audit", "--no-fund", "--ignore-scripts"];
  run("npm", ["install", root, join(modules, "zod"), ...offline]);
  run("npm", ["install", "-D", join(modules, "typescript"), ...offline]);
  run("npx", ["tsc", "--init"]);
  writeFileSync(join(dir, "server.ts"), example);
}, 120_000);

afterAll(() => {
  // the shell, npx and picomcp dev: the group this test started
  if (dev?.pid) process.kill(-dev.pid, "SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("docs/dev.md in the README's project", () => {
  it("names the file the README's project builds: server.js beside server.ts", () => {
    expect(readme).toContain("Save the server above as `server.ts`, then `npx tsc && node server.js`");
    expect(readme).toContain("`npx tsc && npx picomcp dev server.js`");
    expect(commands).toEqual(["npx tsc && npx picomcp dev server.js", "npx tsc"]);
  });

  it("runs the doc's commands: the console answers at the printed address, and serves the rebuilt server", async () => {
    // the first command runs on, as in a terminal: its own process group, ended in afterAll
    dev = spawn("sh", ["-c", commands[0]!], {
      cwd: dir,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    dev.stderr!.on("data", (c) => (stderr += c));
    const url = await new Promise<string>((done, fail) => {
      let out = "";
      dev!.stdout!.on("data", (c) => {
        out += c;
        if (out.includes("\n")) done(out.split("\n")[0]!);
      });
      dev!.on("exit", (code) => fail(new Error(`exited (${code}) before printing an address: ${stderr}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#[\w-]{43}$/);
    expect(readdirSync(dir).filter((f) => f.startsWith("server."))).toEqual(
      expect.arrayContaining(["server.js", "server.ts"]),
    );
    const runner = { url, origin: new URL(url).origin } as DevRunner;
    const search = async (id: number) =>
      (await call(runner, toolCall(id, "search_books", { query: "owls" }))).result.content[0].text;
    expect(await search(1)).toBe("No books about owls yet");

    const before = (await status(runner)).generation;
    writeFileSync(join(dir, "server.ts"), example.replace("No books about", "Nothing yet on"));
    execFileSync("sh", ["-c", commands[1]!], { cwd: dir, env, encoding: "utf8" });
    // saving server.ts restarts the old build, and tsc's server.js restarts the new one: a call sent
    // to a process on its way out gets no answer, so each try is bounded and the poll tries again
    let id = 2;
    const attempt = () =>
      Promise.race([
        search(id++),
        new Promise((_, fail) => setTimeout(() => fail(new Error("no answer yet")), 5_000)),
      ]);
    await expect.poll(attempt, { timeout: 60_000 }).toBe("Nothing yet on owls yet");
    expect((await status(runner)).generation).toBeGreaterThan(before);
    expect(stderr).toContain("picomcp dev: server.js over stdio");
  }, 120_000);
});

describe("the package", () => {
  it("ships every file of the console, served as it is", () => {
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
        cwd: root,
        env,
        encoding: "utf8",
      }),
    )[0].files.map((f: { path: string }) => f.path);
    const page = readdirSync(join(root, "src", "dev", "console")).map((f) => `src/dev/console/${f}`);
    expect(page.length).toBeGreaterThanOrEqual(10);
    // the bin is one file (dist/dev/cli.js, the console's server bundled in it), with its source map
    expect(packed).toEqual(expect.arrayContaining([...page, "dist/dev/cli.js", "dist/dev/cli.js.map"]));
  });
});
