/**
 * The change watcher of `picomcp dev` on its own, on a real temporary folder: it survives the errors
 * Node's recursive watch emits (a folder removed while it is scanned) and keeps watching, and it finds
 * the modules of a project reached through a symlink.
 */
import type * as fs from "node:fs";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it, vi } from "vitest";
import { watchChanges } from "../../src/dev/watch.js";

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
  const dir = mkdtempSync(join(tmpdir(), "picomcp-watch-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function watcherOn(dir: string) {
  const lines: string[] = [];
  const changes: string[][] = [];
  const w = watchChanges({
    dir,
    ignore: [],
    debounceMs: 20,
    running: () => true,
    onChange: (files) => changes.push(files),
    log: (l) => lines.push(l),
  });
  cleanups.push(() => w.close());
  /** Reports a child's module graph: these files, as loaded now. */
  const graph = (...files: string[]) => {
    const stream = new PassThrough();
    w.follow(stream);
    stream.write(`hooks all\n${files.map((f) => `${pathToFileURL(f).href} -\n`).join("")}`);
  };
  return { lines, changes, graph };
}

it("an error of the recursive watch (ENOENT mid-scan) is said once, and the folder watched anew", async () => {
  const dir = folder();
  writeFileSync(join(dir, "server.js"), "1");
  const { lines, changes } = watcherOn(dir);
  expect(made).toHaveLength(1);
  const enoent = () =>
    Object.assign(new Error("ENOENT: no such file or directory, scandir 'build/x'"), { code: "ENOENT" });
  made[0]!.emit("error", enoent());
  expect(made).toHaveLength(2);
  made[1]!.emit("error", enoent());
  expect(made).toHaveLength(3);
  expect(lines).toEqual([
    `picomcp dev: watching ${dir} failed (ENOENT: no such file or directory, scandir 'build/x'); watching it again`,
  ]);
  // the new watcher sees changes
  writeFileSync(join(dir, "server.js"), "2");
  await expect.poll(() => changes, { timeout: 30_000 }).toEqual([["server.js"]]);
});

it("a project under a symlinked path: its modules are known by their real paths, a file it writes is no change", async () => {
  const real = realpathSync(folder());
  const link = join(folder(), "link");
  symlinkSync(real, link);
  writeFileSync(join(real, "server.js"), "1");
  const { changes, graph } = watcherOn(link);
  // the child reports real paths, as Node's module URLs are
  graph(join(real, "server.js"));
  mkdirSync(join(real, "data"));
  writeFileSync(join(real, "data", "state.json"), "{}");
  writeFileSync(join(real, "server.js"), "2");
  await expect.poll(() => changes.flat(), { timeout: 30_000 }).toContain("server.js");
  expect(changes).toEqual([["server.js"]]);
});
