// picomcp/fs attacked on a real temporary directory: symlinks to a file and to a directory outside, at
// depth, chained and relative; a symlink swapped in between the steps of a read (by hooks at the exact
// points, and by a thread that swaps without pause); `..` in every spelling of the traversal corpus;
// NUL, very long names, backslashes, drives and device names. No byte from outside the root may ever be
// served, and the listing never names a file outside it. Each case runs under both checks of an open
// handle: /proc/self/fd (Linux) and realpath with an identity check (every other platform).
import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createDirectoryResources,
  type DirectoryInternals,
  type DirectoryOptions,
} from "../../src/fs/directory.js";
import { nameIssue } from "../../src/fs/names.js";
import type { RealPathStrategy } from "../../src/fs/open.js";
import { McpServer } from "../../src/index.js";
import { rawPeer } from "../helpers.js";
import { traversalCorpus } from "../traversal-corpus.js";

const SECRET = "OUTSIDE-SECRET";
let base: string;
let root: string;
let outside: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "picomcp-fs-attack-")));
  root = join(base, "root");
  outside = join(base, "outside");
  mkdirSync(join(root, "a", "b", "c", "d"), { recursive: true });
  mkdirSync(join(root, "docs"), { recursive: true });
  mkdirSync(join(outside, "deep"), { recursive: true });
  writeFileSync(join(outside, "secret.txt"), SECRET);
  writeFileSync(join(outside, "deep", "secret.txt"), SECRET);
  // where `..` from the root would land
  mkdirSync(join(base, "etc"));
  writeFileSync(join(base, "etc", "passwd"), SECRET);
  writeFileSync(join(base, "secret.txt"), SECRET);

  writeFileSync(join(root, "notes.txt"), "notes");
  writeFileSync(join(root, "docs", "guide.md"), "# Guide");
  writeFileSync(join(root, "a", "b", "c", "d", "deep.txt"), "deep");
  writeFileSync(join(root, ".env"), "TOKEN=hidden");
  // symlinks that lead out: to a file, to a directory, at depth, relative, chained, to the root's parent
  symlinkSync(join(outside, "secret.txt"), join(root, "file-link.txt"));
  symlinkSync(outside, join(root, "dir-link"));
  symlinkSync(join(outside, "secret.txt"), join(root, "a", "b", "c", "d", "deep-link.txt"));
  symlinkSync(outside, join(root, "a", "b", "c", "out"));
  symlinkSync("../../../../../outside/deep/secret.txt", join(root, "a", "b", "c", "d", "relative.txt"));
  symlinkSync(join(root, "file-link.txt"), join(root, "chain.txt"));
  symlinkSync(base, join(root, "up"));
  // symlinks that stay inside: to a file, to a directory, and to a hidden file
  symlinkSync(join(root, "notes.txt"), join(root, "alias.txt"));
  symlinkSync(join(root, "docs"), join(root, "docs-link"));
  symlinkSync(join(root, ".env"), join(root, "env-link.txt"));
  // odd names that a POSIX file system takes, and that are never served
  writeFileSync(join(root, "back\\slash.txt"), SECRET);
  writeFileSync(join(root, "ctrl\u0007.txt"), SECRET);
  execFileSync("mkfifo", [join(root, "fifo.txt")]);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

const STRATEGIES: RealPathStrategy[] = ["proc", "stat"];

/** Puts a symlink to `target` where `path` is, atomically; the original moves to `path.orig`. */
function swapIn(path: string, target: string) {
  renameSync(path, `${path}.orig`);
  symlinkSync(target, `${path}.new`);
  renameSync(`${path}.new`, path);
}

function swapBack(path: string) {
  unlinkSync(path);
  renameSync(`${path}.orig`, path);
}

function serve(
  strategy: RealPathStrategy,
  options: DirectoryOptions = {},
  internal: DirectoryInternals = {},
  pageSize = 3,
) {
  const server = new McpServer({ name: "fs", version: "1.0.0", pageSize });
  const files = createDirectoryResources(
    server,
    root,
    { watch: false, ...options },
    { strategy, ...internal },
  );
  const peer = rawPeer(server);
  const initialized = peer.initialize();
  let id = 1;
  const read = async (uri: string) => {
    await initialized;
    return peer.send({ jsonrpc: "2.0", id: id++, method: "resources/read", params: { uri } });
  };
  const listAll = async () => {
    const uris: string[] = [];
    let cursor: string | undefined;
    await initialized;
    do {
      const answer = await peer.send({
        jsonrpc: "2.0",
        id: id++,
        method: "resources/list",
        params: cursor === undefined ? {} : { cursor },
      });
      uris.push(...answer.result.resources.map((r: { uri: string }) => r.uri));
      cursor = answer.result.nextCursor;
    } while (cursor !== undefined);
    return uris;
  };
  return { server, files, peer, read, listAll };
}

/** Whether an answer carries any outside byte, as text or as a blob. */
function leaks(answer: unknown): boolean {
  const text = JSON.stringify(answer);
  return text.includes(SECRET) || text.includes(Buffer.from(SECRET).toString("base64"));
}

describe.each(STRATEGIES)("picomcp/fs under attack (%s check)", (strategy) => {
  it("lists only the files inside the root: no symlink, no dotfile, no odd name, no FIFO", async () => {
    const { files, listAll } = serve(strategy);
    expect(await listAll()).toEqual(
      ["a/b/c/d/deep.txt", "docs/guide.md", "notes.txt"].map((p) => files.uriOf(p)),
    );
  });

  it("refuses every symlink by default, inside or out: a file, a directory, nested, relative, chained", async () => {
    const { files, read } = serve(strategy);
    const paths = [
      "file-link.txt",
      "dir-link/secret.txt",
      "dir-link/deep/secret.txt",
      "a/b/c/d/deep-link.txt",
      "a/b/c/out/secret.txt",
      "a/b/c/d/relative.txt",
      "chain.txt",
      "up/secret.txt",
      "up/outside/secret.txt",
      "up/etc/passwd",
      "alias.txt",
      "docs-link/guide.md",
      "env-link.txt",
      ".env",
      "fifo.txt",
      "docs",
    ];
    for (const path of paths) {
      const uri = files.uriOf(path);
      expect(await read(uri), path).toEqual({
        jsonrpc: "2.0",
        id: expect.any(Number),
        error: { code: -32002, message: `Resource not found: ${uri}`, data: { uri } },
      });
    }
    expect((await read(files.uriOf("a/b/c/d/deep.txt"))).result.contents[0].text).toBe("deep");
  });

  it("with followSymlinks, follows those that stay inside and still refuses every one that leads out", async () => {
    const { files, read, listAll } = serve(strategy, { followSymlinks: true });
    for (const path of [
      "file-link.txt",
      "dir-link/secret.txt",
      "dir-link/deep/secret.txt",
      "a/b/c/d/deep-link.txt",
      "a/b/c/out/secret.txt",
      "a/b/c/d/relative.txt",
      "chain.txt",
      "up/secret.txt",
      "up/root/.env",
      // inside, but to a dotfile: the filters apply to where a symlink leads
      "env-link.txt",
    ]) {
      const answer = await read(files.uriOf(path));
      expect(answer.error?.code, path).toBe(-32002);
      expect(leaks(answer), path).toBe(false);
    }
    expect((await read(files.uriOf("alias.txt"))).result.contents).toEqual([
      { uri: files.uriOf("alias.txt"), mimeType: "text/plain", text: "notes" },
    ]);
    expect((await read(files.uriOf("docs-link/guide.md"))).result.contents[0].text).toBe("# Guide");
    // a symlink to a file inside is listed under its own name; a symlinked directory is not walked
    expect(await listAll()).toEqual(
      ["a/b/c/d/deep.txt", "alias.txt", "docs/guide.md", "notes.txt"].map((p) => files.uriOf(p)),
    );
  });

  describe("a symlink swapped in between the steps of a read", () => {
    const race = () => join(root, "race");
    const reset = () => {
      rmSync(race(), { recursive: true, force: true });
      mkdirSync(join(race(), "dir"), { recursive: true });
      writeFileSync(join(race(), "file.txt"), "inside");
      writeFileSync(join(race(), "dir", "secret.txt"), "inside");
    };
    const cases = [
      { name: "the file itself", path: "race/file.txt", at: () => join(race(), "file.txt") },
      { name: "a directory above it", path: "race/dir/secret.txt", at: () => join(race(), "dir") },
    ];
    afterEach(() => rmSync(race(), { recursive: true, force: true }));
    const targets: { [name: string]: () => string } = {
      "the file itself": () => join(outside, "secret.txt"),
      "a directory above it": () => outside,
    };

    for (const follow of [false, true]) {
      for (const c of cases) {
        it(`after the path is validated, before the open: ${c.name} (followSymlinks: ${follow})`, async () => {
          reset();
          let swapped = 0;
          const { files, read } = serve(
            strategy,
            { followSymlinks: follow },
            {
              hooks: {
                beforeOpen: (file) => {
                  if (file === c.at() || file.startsWith(`${c.at()}/`)) {
                    swapIn(c.at(), targets[c.name]!());
                    swapped++;
                  }
                },
              },
            },
          );
          const answer = await read(files.uriOf(c.path));
          expect(swapped).toBe(1);
          expect(leaks(answer)).toBe(false);
          expect(answer.error?.code).toBe(-32002);
        });

        it(`after the open, swapped back before the check: ${c.name} (followSymlinks: ${follow})`, async () => {
          reset();
          const { files, read } = serve(
            strategy,
            { followSymlinks: follow },
            {
              hooks: {
                beforeOpen: (file) => {
                  if (file.startsWith(c.at())) swapIn(c.at(), targets[c.name]!());
                },
                // the name leads inside again when the check looks: only the handle tells the truth
                afterOpen: (file) => {
                  if (file.startsWith(c.at())) swapBack(c.at());
                },
              },
            },
          );
          const answer = await read(files.uriOf(c.path));
          expect(leaks(answer)).toBe(false);
          expect(answer.error?.code).toBe(-32002);
        });
      }
    }

    for (const follow of [false, true]) {
      for (const c of cases) {
        it(`after the check, before the read: ${c.name} (followSymlinks: ${follow})`, async () => {
          reset();
          let swapped = 0;
          const { files, read } = serve(
            strategy,
            { followSymlinks: follow },
            {
              hooks: {
                afterCheck: (file) => {
                  if (file.startsWith(c.at())) {
                    swapIn(c.at(), targets[c.name]!());
                    swapped++;
                  }
                },
              },
            },
          );
          const answer = await read(files.uriOf(c.path));
          expect(swapped).toBe(1);
          // the bytes come from the handle that was checked: the file that was there
          expect(answer.result.contents[0].text).toBe("inside");
        });
      }
    }

    it("a thread swapping a file and a symlink without pause: 300 reads, no outside byte", async () => {
      reset();
      const { files, read } = serve(strategy, { followSymlinks: true });
      const stop = new Int32Array(new SharedArrayBuffer(4));
      const swaps = new Int32Array(new SharedArrayBuffer(4));
      const worker = new Worker(
        `const { workerData: w } = require("node:worker_threads");
         const fs = require("node:fs");
         for (let i = 0; Atomics.load(w.stop, 0) === 0; i++) {
           const tmp = w.file + ".tmp" + (i % 2);
           fs.rmSync(tmp, { force: true });
           if (i % 2) fs.symlinkSync(w.target, tmp); else fs.writeFileSync(tmp, "inside");
           fs.renameSync(tmp, w.file);
           Atomics.add(w.swaps, 0, 1);
         }`,
        {
          eval: true,
          workerData: { stop, swaps, file: join(race(), "file.txt"), target: join(outside, "secret.txt") },
        },
      );
      await expect.poll(() => Atomics.load(swaps, 0)).toBeGreaterThan(10);
      const seen = { served: 0, refused: 0 };
      try {
        for (let i = 0; i < 300; i++) {
          const answer = await read(files.uriOf("race/file.txt"));
          expect(leaks(answer), `attempt ${i}`).toBe(false);
          if (answer.result) {
            expect(answer.result.contents[0].text).toBe("inside");
            seen.served++;
          } else seen.refused++;
        }
      } finally {
        Atomics.store(stop, 0, 1);
        await worker.terminate();
      }
      expect(seen.served + seen.refused).toBe(300);
    });
  });

  // where the platform has no /proc/self/fd, a directory above swapped back and forth without pause can
  // beat the two looks by name (docs/files.md: 15 to 18 of 20,000 reads served outside bytes): Linux only
  it.runIf(strategy === "proc")(
    "a thread swapping a directory above the file for a symlink without pause: 1,000 reads, no outside byte",
    async () => {
      const race = join(root, "race-dir");
      mkdirSync(join(race, "dir"), { recursive: true });
      writeFileSync(join(race, "dir", "secret.txt"), "inside");
      const { files, read } = serve(strategy);
      const stop = new Int32Array(new SharedArrayBuffer(4));
      const swaps = new Int32Array(new SharedArrayBuffer(4));
      const worker = new Worker(
        `const { workerData: w } = require("node:worker_threads");
         const fs = require("node:fs");
         while (Atomics.load(w.stop, 0) === 0) {
           fs.symlinkSync(w.target, w.dir + ".link");
           fs.renameSync(w.dir, w.dir + ".real");
           fs.renameSync(w.dir + ".link", w.dir);
           fs.unlinkSync(w.dir);
           fs.renameSync(w.dir + ".real", w.dir);
           Atomics.add(w.swaps, 0, 1);
         }`,
        { eval: true, workerData: { stop, swaps, dir: join(race, "dir"), target: outside } },
      );
      await expect.poll(() => Atomics.load(swaps, 0)).toBeGreaterThan(10);
      try {
        for (let i = 0; i < 1000; i++) {
          const answer = await read(files.uriOf("race-dir/dir/secret.txt"));
          expect(leaks(answer), `attempt ${i}`).toBe(false);
        }
      } finally {
        Atomics.store(stop, 0, 1);
        await worker.terminate();
        rmSync(race, { recursive: true, force: true });
      }
    },
  );

  it("a directory swapped for a symlink while it is walked: the listing names nothing outside", async () => {
    const dir = join(root, "walked", "dir");
    try {
      for (const when of ["beforeOpen", "afterOpen", "afterCheck"] as const) {
        for (const followSymlinks of [false, true]) {
          rmSync(join(root, "walked"), { recursive: true, force: true });
          mkdirSync(dir, { recursive: true });
          writeFileSync(join(dir, "inside.txt"), "inside");
          let swapped = 0;
          const { listAll } = serve(
            strategy,
            { followSymlinks },
            {
              hooks: {
                [when]: (file: string) => {
                  if (file === dir && swapped === 0) {
                    swapIn(dir, outside);
                    swapped++;
                  }
                },
              },
            },
            // one page, from one walk: the walk that met the swap is the one answered
            1000,
          );
          const uris = await listAll();
          expect(swapped, `${when}, followSymlinks: ${followSymlinks}`).toBe(1);
          expect(
            uris.filter((u) => u.includes("secret")),
            `${when}, followSymlinks: ${followSymlinks}`,
          ).toEqual([]);
        }
      }
    } finally {
      rmSync(join(root, "walked"), { recursive: true, force: true });
    }
  });

  it("refuses `..` in every spelling of the traversal corpus, and serves no outside byte", async () => {
    const { files, read } = serve(strategy);
    const prefix = files.uriOf("");
    for (const c of traversalCorpus) {
      const answer = await read(prefix + c.raw);
      expect(leaks(answer), c.raw).toBe(false);
      if (c.unsafe) expect([-32002, -32602], c.raw).toContain(answer.error?.code);
    }
    // and written the ways a file:// URI may hold them
    for (const uri of [
      `${prefix}../secret.txt`,
      `${prefix}a/../../secret.txt`,
      `${prefix}%2e%2e/etc/passwd`,
      `${prefix}docs/%2E%2E/%2E%2E/secret.txt`,
      `${prefix}./notes.txt`,
      `${prefix}docs//guide.md`,
      `${prefix}docs/./guide.md`,
      `${prefix}docs/../notes.txt`,
    ]) {
      const answer = await read(uri);
      expect(leaks(answer), uri).toBe(false);
      expect(answer.error?.code, uri).toBe(-32002);
    }
  });

  it("refuses hard-to-see names: NUL, control characters, long names and paths, backslashes, drives, \\\\?\\", async () => {
    const { files, read } = serve(strategy);
    const prefix = files.uriOf("");
    const long = "x".repeat(256);
    for (const raw of [
      "notes.txt%00",
      "notes.txt%00.md",
      "%00",
      "ctrl%07.txt",
      "back%5Cslash.txt",
      "docs%5Cguide.md",
      "..%5Csecret.txt",
      "%5C%5C%3F%5CC:%5Csecret.txt",
      "%5C%5C.%5Cpipe%5Cx",
      "C:%5Csecret.txt",
      "C:secret.txt",
      long,
      `${"d/".repeat(2100)}x`,
      `${"é".repeat(130)}.txt`,
    ]) {
      const answer = await read(prefix + raw);
      expect(leaks(answer), raw.slice(0, 40)).toBe(false);
      expect([-32002, -32602], raw.slice(0, 40)).toContain(answer.error?.code);
    }
    // a URI past the server's limit matches nothing, and is answered as well
    expect((await read(prefix + "y".repeat(9000))).error.code).toBe(-32002);
  });
});

describe("the names picomcp/fs never serves", () => {
  it("refuses what Windows reads as a drive, a stream, a device or a trimmed name", () => {
    for (const name of [
      "C:",
      "a:b",
      "notes.txt::$DATA",
      "x.",
      "x ",
      "CON",
      "nul.txt",
      "com1",
      "LPT9.log",
      "a|b",
      "a?",
    ])
      expect(nameIssue(name, true), name).toBeDefined();
    for (const name of ["notes.txt", "console.txt", "icon.png", "comma,name", "é"])
      expect(nameIssue(name, true), name).toBeUndefined();
    // a POSIX file system takes these names as they are; only what is hard to see is refused there
    expect(nameIssue("a:b", false)).toBeUndefined();
    for (const name of ["..", ".", "...", "a\\b", "a\u0000b", "\u001b[31m", "x".repeat(256)])
      expect(nameIssue(name, false), JSON.stringify(name)).toBeDefined();
  });
});
