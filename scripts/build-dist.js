// `npm run build:dist`: the published dist/. tsc writes the declarations (dist/**/*.d.ts, one per source
// file, as always); rolldown writes the JavaScript, one file per subpath of package.json's "exports" and
// the `picomcp` bin, with the code two of them share in one chunk (the HTTP handler's, shared by the HTTP
// entries alone, in a second one the core never loads), and a source map beside each. A stdio
// server then loads three of picomcp's files instead of 65: Node's ES module loader resolves, reads and
// links every file on its own, and that was most of a cold start.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { inputsOf, outputsOf, STAMP } from "./build-stamp.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
// written beside dist/ (at its depth, so that the source maps' paths hold) and swapped in whole at the
// end: a test that starts a server from dist/ while a build runs never finds it half written or gone
const next = join(root, "dist.next");
const old = join(root, "dist.old");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** Each entry's output name (under dist/, without `.js`) and its source, from "exports" and "bin". */
const input = {};
const targets = [
  ...Object.values(pkg.exports).flatMap((e) => (typeof e === "object" ? [e.default] : [])),
  ...Object.values(pkg.bin),
];
for (const target of targets) {
  const name = target.replace(/^(\.\/)?dist\//, "").replace(/\.js$/, "");
  const source = join(root, "src", `${name}.ts`);
  if (!existsSync(source)) throw new Error(`build-dist: ${target} has no source src/${name}.ts`);
  input[name] = source;
}

/**
 * Modules that may import `node:*` (test/core/architecture.test.ts holds the same list for src/). They
 * never go into the shared chunk, which the core's entry loads: there they would make `picomcp` need
 * Node, and stdio.ts would take over console.log in every program that imports picomcp.
 */
const NODE_ONLY = /[\\/]src[\\/](stdio\.ts|http[\\/]node(-request)?\.ts|dev[\\/]|fs[\\/])/;

/** The web-standard HTTP handler's modules: the HTTP entries share them, and the core's entry needs none. */
const HTTP = /[\\/]src[\\/]http[\\/]/;

// what this build reads, hashed before it reads it: a source saved during the build makes the stamp stale
const inputs = inputsOf(root);
rmSync(next, { recursive: true, force: true });
rmSync(old, { recursive: true, force: true });
// the declarations, as before the bundling (tsconfig.build.json: emitDeclarationOnly)
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", next], {
  cwd: root,
  stdio: "inherit",
});
await build({
  cwd: root,
  input,
  platform: "node",
  // node:*, and the optional peers (jose, @opentelemetry/api, redis): found where picomcp is installed
  external: [/^node:/, ...Object.keys(pkg.peerDependencies ?? {}).map((p) => new RegExp(`^${p}(/|$)`))],
  transform: { target: "es2022" },
  // the http group leaves its modules' dependencies where they were (includeDependenciesRecursively),
  // which rolldown allows only when an entry may export more than its own names
  preserveEntrySignatures: "allow-extension",
  logLevel: "warn",
  output: {
    dir: next,
    format: "esm",
    // a stack trace (node --enable-source-maps) names the TypeScript file and line in src/ of the
    // version's commit; the sources themselves stay out of the package: they would double its size
    sourcemap: true,
    sourcemapExcludeSources: true,
    // the code a process parses at start holds no doc comments (src/ has them), and no character past
    // ASCII (escaped in strings and patterns): V8 holds a source with one as two bytes a character.
    // License notices (the JSON Schema meta-schemas') and pure annotations (for bundlers) stay.
    comments: { legal: true, annotation: true, jsdoc: false },
    charset: "ascii",
    entryFileNames: "[name].js",
    // two folders down, as dist/dev/cli.js is: a URL relative to import.meta.url means the same in both
    chunkFileNames: "chunks/[name].js",
    codeSplitting: {
      groups: [
        // code the HTTP entries share that the core never loads: a stdio server does not parse it
        {
          name: "http",
          minShareCount: 2,
          priority: 1,
          includeDependenciesRecursively: false,
          test: (id) => HTTP.test(id) && !NODE_ONLY.test(id),
        },
        { name: "shared", minShareCount: 2, test: (id) => !NODE_ONLY.test(id) },
      ],
    },
  },
});

// the bin is executable whatever made it: npm sets a bin's mode only when it first links it, so a dist/
// swapped in later (by the `prepare` of a second `npm install` in a project that links picomcp) keeps it
for (const bin of Object.values(pkg.bin)) chmodSync(join(next, bin.replace(/^(\.\/)?dist\//, "")), 0o755);
writeFileSync(join(next, STAMP), `${JSON.stringify({ inputs, outputs: outputsOf(next) }, null, 2)}\n`);
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
