/**
 * What restarts the server under `picomcp dev`: a module it loaded that changed, once per build, never
 * a file the server writes itself nor what `--ignore` names; and what it says of an entry that never
 * serves. On real files in a temporary folder, with real tsc builds.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { globTest } from "../../src/dev/watch.js";
import { call, cleanUp, project, start, status, toolCall } from "../dev-helpers.js";

afterEach(cleanUp);

const picomcp = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
const stdio = fileURLToPath(new URL("../../dist/stdio.js", import.meta.url));
const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));

/** Starts picomcp dev with its log kept; `restarts()` are the lines that announce a restart. */
async function watched(entry: string, ignore: string[] = [], debounceMs = 20) {
  const lines: string[] = [];
  const dev = await start(entry, { log: (l) => lines.push(l), ignore, debounceMs });
  const restarts = () => lines.filter((l) => l.endsWith("changed, restarting"));
  const answer = async (id: number, name = "answer") =>
    (await call(dev, toolCall(id, name))).result.content[0].text as string;
  return { dev, lines, restarts, answer };
}

// each wait for a restart polls for up to 30 s: the test's own limit is longer, so that a restart that never
// came fails as the answer it kept giving, not as a test that timed out
describe("picomcp dev: what restarts the server", { timeout: 60_000 }, () => {
  it("never what the server writes in its own folder, at start or in a tool; a module it loaded, once", async () => {
    const writes = (answer: string) => `import { mkdirSync, writeFileSync } from "node:fs";
const here = new URL(".", import.meta.url);
mkdirSync(new URL("data/", here), { recursive: true });
const save = (what) => {
  writeFileSync(new URL("data/notes.json", here), JSON.stringify({ what, at: Math.random() }));
  writeFileSync(new URL("server.log", here), what + "\\n", { flag: "a" });
};
save("started");
server.tool("answer", { run: () => (save("called"), ${JSON.stringify(answer)}) });`;
    const p = project(writes("one"));
    const { dev, restarts, answer } = await watched(p.entry);
    expect(await answer(1)).toBe("one");
    expect(await answer(2)).toBe("one");
    p.write(writes("two"));
    await expect.poll(() => answer(3), { timeout: 30_000 }).toBe("two");
    expect(await answer(4)).toBe("two");
    // one restart, for the module; the server's writes (at each start and in each call) none
    expect(restarts()).toEqual(["picomcp dev: server.js changed, restarting"]);
    expect(await status(dev)).toMatchObject({ state: "running", generation: 2 });
  });

  it("follows the graph with a CommonJS package installed in node_modules among its imports", async () => {
    const p = project("");
    const legacy = join(p.dir, "node_modules", "legacy");
    mkdirSync(legacy, { recursive: true });
    writeFileSync(join(legacy, "package.json"), '{ "name": "legacy", "main": "index.js" }\n');
    writeFileSync(join(legacy, "index.js"), 'module.exports = { word: require("./word.js") };\n');
    writeFileSync(join(legacy, "word.js"), 'module.exports = "legacy";\n');
    const body = (answer: string) => `import legacy from "legacy";
import { writeFileSync } from "node:fs";
writeFileSync(new URL("state.json", import.meta.url), JSON.stringify({ at: Math.random() }));
server.tool("answer", { run: () => legacy.word + " " + ${JSON.stringify(answer)} });`;
    p.write(body("one"));
    const { dev, restarts, answer } = await watched(p.entry);
    expect(await answer(1)).toBe("legacy one");
    p.write(body("two"));
    await expect.poll(() => answer(2), { timeout: 30_000 }).toBe("legacy two");
    expect(await answer(3)).toBe("legacy two");
    expect(restarts()).toEqual(["picomcp dev: server.js changed, restarting"]);
    expect(await status(dev)).toMatchObject({ state: "running", generation: 2 });
  });

  it("restarts on a change to its module while it writes a file of its own every few milliseconds", async () => {
    const busy = (answer: string) => `import { appendFileSync } from "node:fs";
const log = new URL("busy.log", import.meta.url);
setInterval(() => appendFileSync(log, "tick\\n"), 2).unref();
server.tool("answer", { run: () => ${JSON.stringify("x")}.replace("x", ${JSON.stringify(answer)}) });`;
    const p = project(busy("one"));
    // a quiet period far longer than the server's pauses: its writes alone would never let it end
    const { dev, restarts, answer } = await watched(p.entry, [], 500);
    expect(await answer(1)).toBe("one");
    p.write(busy("two"));
    await expect.poll(() => answer(2), { timeout: 30_000 }).toBe("two");
    expect(restarts()).toEqual(["picomcp dev: server.js changed, restarting"]);
    expect(await status(dev)).toMatchObject({ state: "running", generation: 2 });
  });

  it("not for what the old server writes while it exits: a restart keeps the last module graph until the new one", async () => {
    const slow = (answer: string) => `import { writeFileSync } from "node:fs";
process.on("SIGTERM", () => {
  writeFileSync(new URL("state.json", import.meta.url), JSON.stringify({ at: Math.random() }));
  setTimeout(() => process.exit(0), 400);
});
server.tool("answer", { run: () => ${JSON.stringify(answer)} });`;
    const p = project(slow("one"));
    const { dev, restarts, answer } = await watched(p.entry);
    expect(await answer(1)).toBe("one");
    p.write(slow("two"));
    await expect.poll(() => answer(2), { timeout: 30_000 }).toBe("two");
    p.write(slow("three"));
    await expect.poll(() => answer(3), { timeout: 30_000 }).toBe("three");
    // two restarts, for the module; none for state.json, written during each
    expect(restarts()).toEqual([
      "picomcp dev: server.js changed, restarting",
      "picomcp dev: server.js changed, restarting",
    ]);
    expect(await status(dev)).toMatchObject({ state: "running", generation: 3 });
  });

  it("restarts once per tsc build, with its .js, .d.ts and .map files, and not for a build that changed no byte", async () => {
    const p = project("");
    const source = (text: string) => {
      writeFileSync(join(p.dir, "lib.ts"), `export const text: string = ${JSON.stringify(text)};\n`);
      writeFileSync(
        join(p.dir, "server.ts"),
        `import { McpServer } from ${JSON.stringify(picomcp)};
import { serveStdio } from ${JSON.stringify(stdio)};
import { text } from "./lib.js";
const server = new McpServer({ name: "p", version: "1" });
server.tool("answer", { run: () => text });
serveStdio(server);
`,
      );
    };
    writeFileSync(
      join(p.dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          target: "es2022",
          declaration: true,
          declarationMap: true,
          sourceMap: true,
          skipLibCheck: true,
          strict: true,
        },
        files: ["server.ts", "lib.ts"],
      }),
    );
    writeFileSync(join(p.dir, "package.json"), '{ "type": "module" }\n');
    const build = () => execFileSync(process.execPath, [tsc, "-p", p.dir], { encoding: "utf8" });
    source("one");
    build();
    const { dev, restarts, answer } = await watched(p.entry);
    expect(await answer(1)).toBe("one");

    source("two");
    build();
    await expect.poll(() => answer(2), { timeout: 30_000 }).toBe("two");
    // tsc rewrote server.js too, with the same bytes: only lib.js changed
    expect(restarts()).toEqual(["picomcp dev: lib.js changed, restarting"]);

    // a build that changes nothing, then one that does: one restart, for the second
    build();
    source("three");
    build();
    await expect.poll(() => answer(3), { timeout: 30_000 }).toBe("three");
    expect(restarts()).toEqual([
      "picomcp dev: lib.js changed, restarting",
      "picomcp dev: lib.js changed, restarting",
    ]);
    expect(await status(dev)).toMatchObject({ state: "running", generation: 3 });
    // four real tsc builds and two restarts: on a loaded machine that is more than the default 20 s
  }, 180_000);

  it("never for what --ignore names, even a module the server loaded", async () => {
    const p = project(`import { text } from "./generated/text.js";
server.tool("answer", { run: () => text });`);
    const generated = (text: string) => {
      mkdirSync(join(p.dir, "generated"), { recursive: true });
      writeFileSync(join(p.dir, "generated", "text.js"), `export const text = ${JSON.stringify(text)};\n`);
    };
    generated("one");
    const { restarts, answer } = await watched(p.entry, ["generated"]);
    expect(await answer(1)).toBe("one");
    // the ignored module changes before and after the entry: the one restart names server.js alone
    generated("two");
    p.write(`import { text } from "./generated/text.js";
server.tool("answer", { run: () => "and " + text });`);
    generated("three");
    await expect.poll(() => answer(2), { timeout: 30_000 }).toMatch(/^and (two|three)$/);
    expect(restarts()).toEqual(["picomcp dev: server.js changed, restarting"]);
  });

  it("reads --ignore's globs as a path under the entry's folder, or a name at any depth", () => {
    const matches = (glob: string, paths: string[]) => paths.filter((p) => globTest(glob).test(p));
    const paths = [
      "data",
      "data/a.json",
      "src/data/b.json",
      "database.js",
      "src/generated/x.js",
      "x.log",
      "a/b/y.log",
    ];
    expect(matches("data", paths)).toEqual(["data", "data/a.json", "src/data/b.json"]);
    expect(matches("./data/", paths)).toEqual(["data", "data/a.json"]);
    expect(matches("*.log", paths)).toEqual(["x.log", "a/b/y.log"]);
    expect(matches("src/generated/**", paths)).toEqual(["src/generated/x.js"]);
    expect(matches("**/b.json", paths)).toEqual(["src/data/b.json"]);
    expect(matches("dat?", paths)).toEqual(["data", "data/a.json", "src/data/b.json"]);
  });
});

describe("picomcp dev: an entry that never serves", () => {
  it("says it exited 0 without serving, and asks whether it calls serveStdio(server)", async () => {
    const p = project("");
    writeFileSync(
      p.entry,
      `import { McpServer } from ${JSON.stringify(picomcp)};
const server = new McpServer({ name: "p", version: "1" });
server.tool("answer", { run: () => "one" });
`,
    );
    const { dev, lines } = await watched(p.entry);
    await expect
      .poll(() => status(dev), { timeout: 30_000 })
      .toMatchObject({ state: "exited", code: 0, served: false });
    expect(lines.at(-1)).toBe(
      `picomcp dev: the server exited (code 0) without serving: it never answered a request. Does ${p.entry} call serveStdio(server) from picomcp/stdio? Waiting for a change to restart`,
    );
  });

  it("says nothing of the kind for a server that served, then exited 0", async () => {
    const p = project(`server.tool("bye", { run: () => (setTimeout(() => process.exit(0), 10), "bye") });`);
    const { dev, lines, answer } = await watched(p.entry);
    expect(await answer(1, "bye")).toBe("bye");
    await expect.poll(() => status(dev), { timeout: 30_000 }).toMatchObject({ state: "exited", code: 0 });
    expect((await status(dev)).served).toBeUndefined();
    expect(lines.at(-1)).toBe("picomcp dev: the server exited (code 0); waiting for a change to restart");
  });
});
