// npm's `prepare`: it runs on a bare `npm install` in a clone, and where picomcp is installed from a
// directory or a git URL, so dist/ is built there and `import "picomcp"` finds it. `npm pack` and
// `npm publish` run it as well, right after `prepack` has built dist/: that build is not done twice.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

if (process.env.npm_command === "pack" || process.env.npm_command === "publish") process.exit(0);
const root = fileURLToPath(new URL("..", import.meta.url));
// a directory dependency is built where it is, with its own dev dependencies
if (!existsSync(`${root}node_modules/typescript`)) {
  console.error(
    `picomcp: building dist/ needs picomcp's own dev dependencies: run \`npm install\` in ${root} first`,
  );
  process.exit(1);
}
const built = spawnSync("npm", ["run", "build:dist"], { cwd: root, stdio: "inherit" });
process.exit(built.status ?? 1);
