// Every recipe of the docs (the README's server and examples/docs/*.ts, the files the pages show)
// compiles, declarations and all, under the tsconfig.json that `tsc --init` writes today. The recipes
// that use Node's own API (`process`, `node:*`) need its types: `tsc --init` writes `"types": []`, so
// they compile with `"types": ["node"]` added, the one change their pages name. Needs `npm run build`.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const read = (file: string) => readFileSync(join(root, file), "utf8");
const recipes = [
  "examples/readme.ts",
  ...(readdirSync(join(root, "examples", "docs"), { recursive: true }) as string[])
    .filter((f) => f.endsWith(".ts"))
    .map((f) => `examples/docs/${f}`)
    .sort(),
];
const usesNode = (file: string) => /\bprocess\.|from "node:|\bBuffer\b/.test(read(file));
/** The pages, each with the files its ```ts file=… blocks show. */
const pages = ["README.md", ...readdirSync(join(root, "docs")).map((f) => `docs/${f}`)]
  .filter((p) => p.endsWith(".md"))
  .map((p) => ({ page: p, text: read(p) }));

// inside the repository, so that `import "picomcp"` finds this package (and its dist/) by name
mkdirSync(join(root, ".test-out"), { recursive: true });
const dir = mkdtempSync(join(root, ".test-out", "tsc-init-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Compiles `files` with the tsconfig.json of `tsc --init`, plus `extra` options; tsc's output. */
function compile(name: string, files: string[], extra: object = {}) {
  const config = {
    extends: "./init/tsconfig.json",
    compilerOptions: { rootDir: root, outDir: join(dir, `out-${name}`), ...extra },
    files: files.map((f) => join(root, f)),
  };
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(config));
  const out = spawnSync(process.execPath, [tsc, "-p", join(dir, `${name}.json`)], { encoding: "utf8" });
  return `${out.stdout}${out.stderr}`.replaceAll(root, "");
}

describe("the docs' recipes under tsc --init", { timeout: 120_000 }, () => {
  mkdirSync(join(dir, "init"));
  execFileSync(process.execPath, [tsc, "--init"], { cwd: join(dir, "init") });

  it("tsc --init still writes the defaults the docs speak of", () => {
    const init = readFileSync(join(dir, "init", "tsconfig.json"), "utf8");
    for (const line of [
      '"module": "nodenext"',
      '"types": []',
      '"verbatimModuleSyntax": true',
      '"strict": true',
    ])
      expect(init).toContain(line);
  });

  it("compiles every recipe that uses no Node API with the defaults as they are", () => {
    expect(
      compile(
        "plain",
        recipes.filter((f) => !usesNode(f)),
      ),
    ).toBe("");
  });

  it("compiles the Node ones with types: [node], which each of their pages says", () => {
    const node = recipes.filter(usesNode);
    expect(node).toEqual([
      "examples/docs/auth-github.ts",
      "examples/docs/auth-node.ts",
      "examples/docs/eras-booking.ts",
      "examples/docs/http-express.ts",
      "examples/docs/http-node.ts",
      "examples/docs/http-proxy.ts",
      "examples/docs/migrate-v1-transports.ts",
      "examples/docs/proxy-gateway.ts",
      "examples/docs/proxy-narrow.ts",
      "examples/docs/scaling-auth.ts",
      "examples/docs/scaling-drain.ts",
      "examples/docs/scaling-rates.ts",
      "examples/docs/scaling-redis.ts",
      "examples/docs/scaling-sessions.ts",
      "examples/docs/scaling-tasks.ts",
      "examples/docs/telemetry-redis.ts",
      "examples/docs/testing/server.test.ts",
    ]);
    expect(compile("node", node, { types: ["node"] })).toBe("");
    for (const file of node) {
      const shown = pages.filter(({ text }) => text.includes(`\`\`\`ts file=${file}\n`));
      expect(shown.length, `${file} is shown on a page`).toBeGreaterThan(0);
      for (const { page, text } of shown)
        expect(text, `${page} names "types": ["node"]`).toContain('"types": ["node"]');
    }
  });
});
