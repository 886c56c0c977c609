// The package as a user gets it, checked from the tarball `npm pack` makes of the built tree (run
// `npm run build` first; `npm test` does): publint and arethetypeswrong find nothing for any subpath.
// test/docs/newcomer.test.ts installs the same tarball in a project of its own and imports and requires
// every subpath.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (name) => join(root, "node_modules", ".bin", name);
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
  // docs/start.md documents (require on Node.js 20.19+, TypeScript 5.8+, module nodenext; attw's own
  // TypeScript is 5.6) is checked for real by test/docs/newcomer.test.ts.
  run(bin("attw"), [tarball, "--profile", "esm-only", "--format", "ascii"]);

  console.log(`check-package: ${filename}: publint and attw find nothing`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
