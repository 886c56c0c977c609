/**
 * How `picomcp install` writes a client's file: never over a change another program made since the read
 * (Claude Code rewrites ~/.claude.json while it runs), in the file's own mode, line endings and BOM.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { install, WRITE_ATTEMPTS } from "../../src/dev/install.js";

const work = realpathSync(mkdtempSync(join(tmpdir(), "picomcp-install-write-")));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let home = "";
let entry = "";
let file = "";
let n = 0;
beforeEach(() => {
  home = join(work, `home${++n}`);
  mkdirSync(home);
  entry = join(home, "server.js");
  writeFileSync(entry, "// a server\n");
  file = join(home, ".claude.json");
});

const ours = () => ({ type: "stdio", command: process.execPath, args: [entry] });
const put = (options: { beforeCheck?: () => void; force?: boolean } = {}) =>
  install({ client: "claude-code", entry, name: "weather", place: { home, platform: "linux" }, ...options });
const others = () => readdirSync(home).filter((f) => f.endsWith(".tmp") || f.includes(".bak-"));

describe("picomcp install and another writer of the same file", () => {
  it("a change made between the read and the rename survives, and the entry goes on top of it", () => {
    writeFileSync(file, `${JSON.stringify({ numStartups: 1, mcpServers: {} }, null, 2)}\n`);
    let calls = 0;
    const done = put({
      beforeCheck: () => {
        // the client writes its file while picomcp is between its read and its rename
        if (++calls === 1)
          writeFileSync(
            file,
            `${JSON.stringify({ numStartups: 2, tipsSeen: ["a"], mcpServers: {} }, null, 2)}\n`,
          );
      },
    });
    expect(calls).toBe(2);
    expect(done.change).toBe("added");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      numStartups: 2,
      tipsSeen: ["a"],
      mcpServers: { weather: ours() },
    });
    // the backup holds the file the change was made on: the other writer's
    expect(JSON.parse(readFileSync(done.backup!, "utf8"))).toEqual({
      numStartups: 2,
      tipsSeen: ["a"],
      mcpServers: {},
    });
    expect(others()).toEqual([done.backup!.split("/").pop()]);
  });

  it("a file created meanwhile is not written over either", () => {
    let calls = 0;
    put({ beforeCheck: () => void (++calls === 1 && writeFileSync(file, '{ "numStartups": 1 }')) });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      numStartups: 1,
      mcpServers: { weather: ours() },
    });
  });

  it(`a file that changes on each of ${WRITE_ATTEMPTS} attempts is refused, with the other writer's last change kept`, () => {
    writeFileSync(file, '{ "numStartups": 0 }\n');
    let calls = 0;
    expect(() => put({ beforeCheck: () => writeFileSync(file, `{ "numStartups": ${++calls} }\n`) })).toThrow(
      `${file} changed each of the ${WRITE_ATTEMPTS} times picomcp wrote it (a client running, rewriting its file?): nothing written; close the client and run this again. Add this by hand:\n`,
    );
    expect(calls).toBe(WRITE_ATTEMPTS);
    expect(readFileSync(file, "utf8")).toBe(`{ "numStartups": ${WRITE_ATTEMPTS} }\n`);
    expect(others()).toEqual([]);
  });
});
