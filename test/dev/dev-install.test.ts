/**
 * The README's "In your own project" steps with picomcp linked from a clone (`npm install ../picomcp zod`),
 * then more `npm install`s in that project, as a user goes on: each runs picomcp's `prepare` again. A
 * current dist/ is left alone (the bin npm made executable with it), and a dist/ built again (a pulled
 * source) keeps `npx picomcp` working. The clone is a copy of this checkout's sources and dist/ with its
 * node_modules linked; every package comes from this checkout's node_modules: no network.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
// npm run by `npm test` passes npm_* settings down; a new user's shell has none of them
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

let work = "";
let clone = "";
let project = "";
const npm = (...args: string[]) =>
  execFileSync("npm", [...args, "--offline", "--no-audit", "--no-fund"], {
    cwd: project,
    env,
    encoding: "utf8",
  });
const picomcp = () => spawnSync("npx", ["picomcp", "--version"], { cwd: project, env, encoding: "utf8" });
/** The identity of the clone's dist/: a build swaps in a new directory. */
const distId = () => statSync(join(clone, "dist")).ino;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "picomcp-install-"));
  clone = join(work, "picomcp");
  project = join(work, "project");
  mkdirSync(clone);
  mkdirSync(project);
  for (const part of ["package.json", "tsconfig.json", "tsconfig.build.json", "scripts", "src", "dist"])
    cpSync(join(root, part), join(clone, part), { recursive: true });
  // the clone after its own `npm install`: its dev dependencies in place
  symlinkSync(join(root, "node_modules"), join(clone, "node_modules"));
}, 120_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("npx picomcp after the README's install and more npm installs", { timeout: 300_000 }, () => {
  it("works after a second npm install, which leaves a current dist/ alone", () => {
    npm("init", "-y");
    npm("pkg", "set", "type=module");
    npm("install", clone, join(root, "node_modules", "zod"));
    expect(picomcp()).toMatchObject({ status: 0, stdout: `${version}\n` });
    const built = distId();
    npm("install", "-D", join(root, "node_modules", "typescript"));
    expect(distId()).toBe(built);
    expect(picomcp()).toMatchObject({ status: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("works after an npm install that builds dist/ again, its sources changed", () => {
    const before = distId();
    appendFileSync(join(clone, "src", "index.ts"), "\n// a pulled change\n");
    npm("install", "-D", join(root, "node_modules", "@types", "node"));
    expect(distId()).not.toBe(before);
    expect(statSync(join(clone, "dist", "dev", "cli.js")).mode & 0o777).toBe(0o755);
    expect(picomcp()).toMatchObject({ status: 0, stdout: `${version}\n`, stderr: "" });
    // and the next install leaves that build alone
    const rebuilt = distId();
    npm("install");
    expect(distId()).toBe(rebuilt);
  });
});
