/**
 * The published build (run `npm run build` first): one file per subpath of package.json's "exports"
 * and the bin, the code they share in one chunk (and the HTTP handler's, which only the HTTP entries
 * share, in a second one that the core never loads), a source map beside each, and what the architecture
 * test holds for src/ still true of dist/: only the Node entries reach `node:*`.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dist = join(root, "dist");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  exports: { [subpath: string]: string | { types: string; default: string } };
  bin: { [name: string]: string };
  peerDependencies: { [name: string]: string };
};
const entries = Object.entries(pkg.exports).flatMap(([subpath, e]) =>
  typeof e === "object" ? [{ subpath, file: join(root, e.default), types: join(root, e.types) }] : [],
);
const bin = join(root, Object.values(pkg.bin)[0]!);

const IMPORT =
  /^(?:import|export)\s[^;]*?\bfrom\s*"([^"]+)"|^import\s*"([^"]+)"|\bimport\s*\(\s*"([^"]+)"\s*\)/gm;

/** Every file a module loads, itself first, and every bare or `node:` specifier they import. */
function graph(file: string): { files: string[]; external: Set<string> } {
  const files: string[] = [];
  const external = new Set<string>();
  const walk = (f: string) => {
    if (files.includes(f)) return;
    files.push(f);
    for (const m of readFileSync(f, "utf8").matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2] ?? m[3])!;
      if (spec.startsWith(".")) walk(join(dirname(f), spec));
      else external.add(spec);
    }
  };
  walk(file);
  return { files: files.map((f) => relative(dist, f)), external };
}

/** Entries that run on any runtime: everything but the Node bridge, stdio and the bin. */
const PORTABLE = new Set([".", "./testing", "./http", "./auth", "./redis", "./otel", "./proxy"]);

describe("the published build", () => {
  it("is one file per subpath and the bin, with the shared code in one chunk and the HTTP handler's in another", () => {
    for (const { subpath, file } of [...entries, { subpath: "bin", file: bin }]) {
      const { files } = graph(file);
      expect(
        files.slice(1).filter((f) => f !== "chunks/shared.js" && f !== "chunks/http.js"),
        subpath,
      ).toEqual([]);
    }
    // a stdio server parses neither the HTTP handler nor anything else it does not use
    expect(graph(join(dist, "index.js")).files).toEqual(["index.js", "chunks/shared.js"]);
    expect(graph(join(dist, "stdio.js")).files).toEqual(["stdio.js", "chunks/shared.js"]);
    expect(graph(join(dist, "http", "index.js")).files).toEqual([
      "http/index.js",
      "chunks/http.js",
      "chunks/shared.js",
    ]);
  });

  it("reaches node:* only from the Node entries, and imports no package but the optional peers", () => {
    const peers = Object.keys(pkg.peerDependencies);
    for (const { subpath, file } of entries) {
      const external = [...graph(file).external];
      const node = external.filter((s) => s.startsWith("node:"));
      if (PORTABLE.has(subpath)) expect(node, subpath).toEqual([]);
      else expect(node.length, subpath).toBeGreaterThan(0);
      for (const spec of external.filter((s) => !s.startsWith("node:")))
        expect(
          peers.some((p) => spec === p || spec.startsWith(`${p}/`)),
          `${subpath}: ${spec}`,
        ).toBe(true);
    }
  });

  it("ships a source map beside every file of code, and the declarations tsc writes", () => {
    for (const { file, types } of entries) {
      expect(existsSync(types), types).toBe(true);
      for (const f of graph(file).files) {
        const text = readFileSync(join(dist, f), "utf8");
        // an entry that only re-exports the chunk (picomcp/http) has nothing of its own to map
        if (/^(export \{[^}]*\} from "[^"]+";\s*)+$/.test(text)) continue;
        expect(text.trimEnd().endsWith(`//# sourceMappingURL=${f.split("/").pop()}.map`), f).toBe(true);
        const map = JSON.parse(readFileSync(join(dist, `${f}.map`), "utf8"));
        // each names a TypeScript file of src/ (left out of the package: a trace names file and line)
        expect(map.sources.length, f).toBeGreaterThan(0);
        for (const source of map.sources) {
          expect(source, f).toMatch(/^(\.\.\/)+src\/.+\.ts$/);
          expect(existsSync(join(dist, dirname(f), source)), source).toBe(true);
        }
      }
    }
  });
});
