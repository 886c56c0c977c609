/**
 * The README's path for a new project (in full in docs/start.md), walked from `npm init -y` in a fresh directory outside the repo:
 * the packed tarball of picomcp and zod installed, the README's example compiled by the repo's tsc after
 * `tsc --init`, and run over stdio. Both ways: a CommonJS package as `npm init -y` leaves it (the example
 * fails with TS1295, `server.mts` and the README's `require` form work), then `"type": "module"`.
 * Needs `npm run build` first (npm test does it).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const readme = readFileSync(join(root, "README.md"), "utf8");
/** docs/start.md: the README's path in full, the CommonJS ways among it. */
const start = readFileSync(join(root, "docs", "start.md"), "utf8");
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
const example = readFileSync(join(root, "examples", "readme.ts"), "utf8");
/** docs/start.md's CommonJS block: the ```ts block that starts with its comment line. */
const cjsExample = /```ts\n(\/\/ server\.ts in a CommonJS package\n[\s\S]*?)```/.exec(start)?.[1];

// npm run by `npm test` passes npm_* settings down; a new user's shell has none of them
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
let dir = "";
const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: dir, env, encoding: "utf8" });
const compile = () => spawnSync(process.execPath, [tsc], { cwd: dir, env, encoding: "utf8" });

const session = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "n", version: "1" } },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "search_books", arguments: { query: "owls" } },
  },
];

/** Runs a compiled server over stdio with the session above; its answers, parsed. */
function serve(file: string): unknown[] {
  const input = `${session.map((m) => JSON.stringify(m)).join("\n")}\n`;
  const child = spawnSync(process.execPath, [file], {
    cwd: dir,
    env,
    input,
    encoding: "utf8",
    timeout: 10_000,
  });
  expect(child.stderr).toBe("");
  return child.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const searched = {
  jsonrpc: "2.0",
  id: 2,
  result: { content: [{ type: "text", text: "No books about owls yet" }] },
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "picomcp-newcomer-"));
  const pack = mkdtempSync(join(tmpdir(), "picomcp-pack-"));
  execFileSync("npm", ["pack", "--pack-destination", pack, "--silent"], { cwd: root, env, encoding: "utf8" });
  mkdirSync(dir, { recursive: true });
  run("npm", ["init", "-y"]);
  // zod from the repo's own copy, so the test needs no network
  const zod = join(root, "node_modules", "zod");
  run("npm", ["install", join(pack, `picomcp-${version}.tgz`), zod, "--offline", "--no-audit", "--no-fund"]);
  rmSync(pack, { recursive: true, force: true });
  run(process.execPath, [tsc, "--init"]);
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a new CommonJS project (npm init -y)", () => {
  it("fails to compile the README's example with the TS1295 the README quotes", () => {
    expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).type).toBe("commonjs");
    expect(start).toContain(
      "error TS1295: ECMAScript imports and exports\ncannot be written in a CommonJS file",
    );
    writeFileSync(join(dir, "server.ts"), example);
    const out = compile();
    expect(out.status).not.toBe(0);
    expect(out.stdout).toContain(
      "server.ts(1,10): error TS1295: ECMAScript imports and exports cannot be written in a CommonJS file under 'verbatimModuleSyntax'.",
    );
    rmSync(join(dir, "server.ts"));
  });

  it("runs the README's example saved as server.mts", () => {
    writeFileSync(join(dir, "server.mts"), example);
    expect(compile().stdout).toBe("");
    expect(serve("server.mjs")[1]).toEqual(searched);
    rmSync(join(dir, "server.mts"));
  });

  it("runs the README's require form, and every entry point loads with require()", () => {
    expect(cjsExample).toBeDefined();
    writeFileSync(join(dir, "server.ts"), cjsExample!);
    expect(compile().stdout).toBe("");
    expect(readFileSync(join(dir, "server.js"), "utf8")).toContain('require("picomcp")');
    expect(serve("server.js")[1]).toEqual(searched);
    const entries = ["picomcp", "picomcp/stdio", "picomcp/http", "picomcp/node", "picomcp/testing"];
    const names = run(process.execPath, [
      "-e",
      `console.log(${JSON.stringify(entries)}.map((e) => Object.keys(require(e)).sort().join(",")).join(" | "))`,
    ]);
    expect(names).toContain("McpServer");
    expect(names).toContain("serveStdio");
    expect(names).toContain("createHttpHandler");
    expect(names).toContain("connect");
    rmSync(join(dir, "server.ts"));
    rmSync(join(dir, "server.js"));
  });
});

describe("the same project with npm pkg set type=module", () => {
  it("compiles the README's example after tsc --init and answers over stdio", () => {
    run("npm", ["pkg", "set", "type=module"]);
    writeFileSync(join(dir, "server.ts"), example);
    expect(compile().stdout).toBe("");
    const [initialized, search] = serve("server.js");
    expect(initialized).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: {
          logging: {},
          completions: {},
          resources: { subscribe: true, listChanged: true },
          tools: { listChanged: true },
        },
        serverInfo: { name: "bookshop", version: "1.0.0" },
      },
    });
    expect(search).toEqual(searched);
  });

  it("compiles the README's HTTP lines with their top-level await", () => {
    const http = /```ts\n(import \{ serve \} from "picomcp\/node";\n[\s\S]*?)```/.exec(readme)?.[1];
    expect(http).toBeDefined();
    const [imports, rest] = [
      example.slice(0, example.indexOf("\n\n")),
      example.slice(example.indexOf("\n\n"), example.indexOf("serveStdio(server);")),
    ];
    writeFileSync(
      join(dir, "server.ts"),
      `${imports}\n${http!.split("\n")[0]}\n${rest}${http!.split("\n").slice(1).join("\n")}`,
    );
    expect(compile().stdout).toBe("");
  });
});
