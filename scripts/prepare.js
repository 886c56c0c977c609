// npm's `prepare`: it runs on a bare `npm install` in a clone, and where picomcp is installed from a
// directory or a git URL, so dist/ is built there and `import "picomcp"` finds it. A project that links
// the clone runs it again on each of its own `npm install`s: a dist/ that is current (its build stamp
// matches the sources and its own files, scripts/build-stamp.js) is left as it is. `npm pack` and
// `npm publish` run it as well, right after `prepack` has built dist/: that build is not done twice.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { staleness } from "./build-stamp.js";

if (process.env.npm_command === "pack" || process.env.npm_command === "publish") process.exit(0);
const root = fileURLToPath(new URL("..", import.meta.url));
const stale = staleness(root);
if (stale === undefined) {
  // a dist/ built before its bin was made executable by the build: made so here
  const { bin } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  for (const file of Object.values(bin)) chmodSync(join(root, file), 0o755);
  console.error("picomcp: dist/ is current (its build stamp matches the sources): not built again");
  process.exit(0);
}
// a directory dependency is built where it is, with its own dev dependencies
if (!existsSync(`${root}node_modules/typescript`)) {
  console.error(
    `picomcp: building dist/ needs picomcp's own dev dependencies: run \`npm install\` in ${root} first`,
  );
  process.exit(1);
}
console.error(`picomcp: building dist/ (${stale})`);
const built = spawnSync("npm", ["run", "build:dist"], { cwd: root, stdio: "inherit" });
process.exit(built.status ?? 1);
