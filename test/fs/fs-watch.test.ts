// The watcher and the walks of picomcp/fs under stress, on a real temporary folder: walks one at a
// time (a burst of changes never starts a walk each), a recursive watcher that errors is made anew,
// and a watcher never keeps the process alive.
import { spawn } from "node:child_process";
import type * as fs from "node:fs";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it, vi } from "vitest";
import { createDirectoryResources } from "../../src/fs/directory.js";
import { oneAtATime } from "../../src/fs/walk.js";
import { McpServer } from "../../src/index.js";
import { rawPeer } from "../helpers.js";

// the real fs.watch, each watcher it makes kept so that a test can make it emit what Node emits
const made = vi.hoisted(() => [] as fs.FSWatcher[]);
vi.mock("node:fs", async (original) => {
  const real = await original<typeof import("node:fs")>();
  const watch = (...args: Parameters<typeof real.watch>) => {
    const w = real.watch(...args);
    made.push(w);
    return w;
  };
  return { ...real, default: { ...real, watch }, watch };
});

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  made.length = 0;
});

function folder() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "picomcp-fs-watch-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

it("walks one at a time: calls during a walk share the one walk after it, in order", async () => {
  const gates: (() => void)[] = [];
  let started = 0;
  const walk = oneAtATime(
    () =>
      new Promise<number>((resolve) => {
        const n = ++started;
        gates.push(() => resolve(n));
      }),
  );
  const first = walk();
  const burst = [walk(), walk(), walk(), walk()];
  expect(started).toBe(1);
  gates[0]!();
  expect(await first).toBe(1);
  await expect.poll(() => started).toBe(2);
  // a call while the second runs waits for a third, which the burst does not share
  const late = walk();
  gates[1]!();
  expect(await Promise.all(burst)).toEqual([2, 2, 2, 2]);
  await expect.poll(() => started).toBe(3);
  gates[2]!();
  expect(await late).toBe(3);
  // a failed walk lets the next one run
  const failing = oneAtATime(() => Promise.reject(new Error("gone")));
  await expect(failing()).rejects.toThrow("gone");
  await expect(failing()).rejects.toThrow("gone");
});

it("a recursive watcher that errors (ENOENT mid-scan) is made anew: later changes are still told", async () => {
  const root = folder();
  writeFileSync(join(root, "a.md"), "a");
  const server = new McpServer({ name: "fs", version: "1.0.0", onError: () => {} });
  const files = createDirectoryResources(server, root, { debounce: 10 }, { recursive: true });
  cleanups.push(() => files.remove());
  await files.ready;
  const session = rawPeer(server);
  await session.initialize();
  expect(made).toHaveLength(1);
  made[0]!.emit("error", Object.assign(new Error("ENOENT: no such file or directory"), { code: "ENOENT" }));
  expect(made).toHaveLength(2);
  writeFileSync(join(root, "b.md"), "b");
  await expect
    .poll(() => session.sent, { timeout: 30_000 })
    .toContainEqual({ jsonrpc: "2.0", method: "notifications/resources/list_changed" });
});

it("a watcher never keeps the process alive: a server that never calls remove() exits", async () => {
  const root = folder();
  writeFileSync(join(root, "a.md"), "a");
  const dist = (name: string) => fileURLToPath(new URL(`../../dist/${name}`, import.meta.url));
  const script = `import { McpServer } from ${JSON.stringify(dist("index.js"))};
import { directoryResources } from ${JSON.stringify(dist("fs/index.js"))};
const server = new McpServer({ name: "fs", version: "1.0.0" });
const files = directoryResources(server, ${JSON.stringify(root)}, {});
await files.ready;
console.log("ready");`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "pipe" });
  cleanups.push(() => child.kill());
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const code = await new Promise((resolve) => child.on("exit", resolve));
  expect([code, out]).toEqual([0, "ready\n"]);
}, 60_000);
