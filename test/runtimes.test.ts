import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const check = "test/runtimes/portable-check.js";

// Deno and Bun come from the npm registry as devDependencies; the check uses no Node API.
const runtimes: [string, string, string[]][] = [
  ["Node", process.execPath, [check]],
  ["Deno", `${root}node_modules/.bin/deno`, ["run", "--allow-read=.", "--no-prompt", check]],
  ["Bun", `${root}node_modules/.bin/bun`, [check]],
];

describe("the core and the HTTP handler on other runtimes", () => {
  it.each(runtimes)("run on %s: sessions, templates, SSE progress, the Host guard", (_name, bin, args) => {
    const out = execFileSync(bin, args, {
      cwd: root,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, NO_COLOR: "1" },
    });
    expect(out.trim()).toBe("portable: ok");
  });
});
