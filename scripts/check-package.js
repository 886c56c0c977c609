// The package as a user gets it, checked from the tarball `npm pack` makes of the built tree (run
// `npm run build` first; `npm test` does): publint and arethetypeswrong find nothing, and a project of
// its own, set up with `tsc --init`, imports every subpath as ES modules and requires every subpath
// from CommonJS (the way docs/start.md documents), compiled and run on this Node.js.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (name) => join(root, "node_modules", ".bin", name);
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
if (!existsSync(join(root, "dist", "index.js"))) {
  console.error("check-package: dist/ is missing: run npm run build first");
  process.exit(1);
}
const run = (command, args, cwd = root) => {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    console.error(`check-package: ${command} ${args.join(" ")} failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
    process.exit(1);
  }
};

const dir = mkdtempSync(join(tmpdir(), "picomcp-package-"));
try {
  // dist/ was just built: the scripts (prepack builds it) are not run a second time
  const [{ filename }] = JSON.parse(
    run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir]),
  );
  const tarball = join(dir, filename);

  run(bin("publint"), ["--strict", tarball]);
  // picomcp is ESM only: attw's CommonJS rows (TypeScript's node10 resolution, and node16's, which
  // cannot require an ES module) are the ones the esm-only profile leaves out. The CommonJS way that
  // docs/start.md documents (require on Node.js 20.19+, TypeScript 5.8+, module nodenext) is checked
  // for real below instead.
  run(bin("attw"), [tarball, "--profile", "esm-only", "--format", "ascii"]);

  const subpaths = Object.keys(pkg.exports)
    .filter((s) => s !== "./package.json")
    .map((s) => (s === "." ? pkg.name : `${pkg.name}/${s.slice(2)}`));
  const project = join(dir, "project");
  run("mkdir", [project]);
  // a CommonJS package, as `npm init -y` writes it: .mts files are ES modules in it, .ts ones CommonJS
  writeFileSync(
    join(project, "package.json"),
    '{ "name": "project", "version": "1.0.0", "private": true }\n',
  );
  // jose: the optional peer that picomcp/auth loads
  run(
    "npm",
    ["install", tarball, `jose@${pkg.devDependencies.jose}`, "--prefer-offline", "--no-audit", "--no-fund"],
    project,
  );
  run(bin("tsc"), ["--init"], project);
  const names = (m) => Object.keys(m).sort();
  writeFileSync(
    join(project, "esm.mts"),
    subpaths.map((s, i) => `import * as m${i} from "${s}";\n`).join("") +
      `const names = (m: object) => Object.keys(m).sort();\n` +
      `console.log(JSON.stringify([${subpaths.map((_, i) => `names(m${i})`).join(", ")}]));\n`,
  );
  writeFileSync(
    join(project, "cjs.ts"),
    subpaths.map((s, i) => `import m${i} = require("${s}");\n`).join("") +
      `const names = (m: object) => Object.keys(m).sort();\n` +
      `console.log(JSON.stringify([${subpaths.map((_, i) => `names(m${i})`).join(", ")}]));\n`,
  );
  run(bin("tsc"), ["-p", "."], project);
  const esm = JSON.parse(run(process.execPath, ["esm.mjs"], project));
  const cjs = JSON.parse(run(process.execPath, ["--no-warnings", "cjs.js"], project));
  const expected = [];
  for (const s of subpaths) expected.push(names(await import(s)));
  for (const [i, s] of subpaths.entries()) {
    if (expected[i].length === 0) throw new Error(`${s} exports nothing`);
    if (JSON.stringify(esm[i]) !== JSON.stringify(expected[i]))
      throw new Error(`${s} imported from the tarball differs from the build: ${esm[i]}`);
    if (JSON.stringify(cjs[i]) !== JSON.stringify(expected[i]))
      throw new Error(`${s} required from CommonJS differs: ${cjs[i]}`);
  }
  console.log(
    `check-package: ${filename}: publint and attw find nothing; ${subpaths.length} subpaths import as ES modules and require from CommonJS`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
