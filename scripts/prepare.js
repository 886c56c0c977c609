// npm's `prepare`: it runs on a bare `npm install` in a clone, and where picomcp is installed from a
// directory or a git URL, so dist/ is built there and `import "picomcp"` finds it. `npm pack` and
// `npm publish` run it as well, right after `prepack` has built dist/: that build is not done twice.
import { spawnSync } from "node:child_process";

if (process.env.npm_command === "pack" || process.env.npm_command === "publish") process.exit(0);
const built = spawnSync("npm", ["run", "build:dist"], { stdio: "inherit" });
process.exit(built.status ?? 1);
