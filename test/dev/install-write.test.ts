/**
 * How `picomcp install` writes a client's file: never over a change another program made since the read
 * (Claude Code rewrites ~/.claude.json while it runs), in the file's own mode, line endings and BOM.
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { BACKUPS_KEPT } from "../../src/dev/config-file.js";
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

describe("picomcp install writes the file as it was written", () => {
  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it.each(["664", "600", "666"])(
    "keeps mode %s, whatever the umask takes away (and gives the backup the same)",
    (mode) => {
      writeFileSync(file, '{ "mcpServers": {} }\n');
      chmodSync(file, Number.parseInt(mode, 8));
      const done = put();
      expect(modeOf(file).toString(8)).toBe(mode);
      expect(modeOf(done.backup!).toString(8)).toBe(mode);
    },
  );

  /** Every line break of `text` is CRLF: no LF alone, no CR alone. */
  const crlfOnly = (text: string) => {
    expect(text.split("\r\n").every((line) => !line.includes("\n") && !line.includes("\r"))).toBe(true);
    expect(text).toContain("\r\n");
  };

  it("keeps CRLF line endings in a JSON file rewritten whole", () => {
    writeFileSync(
      file,
      '{\r\n    "theme": "dark",\r\n    "mcpServers": {\r\n        "other": { "command": "x" }\r\n    }\r\n}\r\n',
    );
    put();
    const text = readFileSync(file, "utf8");
    crlfOnly(text);
    expect(text.startsWith('{\r\n    "theme": "dark",\r\n')).toBe(true);
    expect(text.endsWith("}\r\n")).toBe(true);
    expect(JSON.parse(text).mcpServers).toEqual({ other: { command: "x" }, weather: ours() });
  });

  it("keeps CRLF line endings in a JSONC file edited in place, its comments too", () => {
    const before =
      '{\r\n  // mine\r\n  "mcpServers": {\r\n    "other": { "command": "x" } // remote\r\n  },\r\n}\r\n';
    writeFileSync(file, before);
    put();
    const text = readFileSync(file, "utf8");
    crlfOnly(text);
    expect(text).toContain(
      '  // mine\r\n  "mcpServers": {\r\n    "other": { "command": "x" }, // remote\r\n    "weather": {\r\n      "type": "stdio",\r\n',
    );
    expect(text.endsWith("    }\r\n  },\r\n}\r\n")).toBe(true);
  });

  it("keeps a byte order mark, in JSON and in JSONC", () => {
    writeFileSync(file, '\uFEFF{ "mcpServers": {} }\n');
    put();
    let text = readFileSync(file, "utf8");
    expect(text.startsWith('\uFEFF{\n  "mcpServers"')).toBe(true);
    expect(JSON.parse(text.slice(1))).toEqual({ mcpServers: { weather: ours() } });
    writeFileSync(file, '\uFEFF{ "mcpServers": {}, // c\n}\n');
    install({ client: "claude-code", entry, name: "other", place: { home, platform: "linux" } });
    text = readFileSync(file, "utf8");
    expect(text.startsWith("\uFEFF{")).toBe(true);
    expect(text.indexOf("\uFEFF", 1)).toBe(-1);
    expect(text).toContain("// c");
  });
});

describe("picomcp install's backups", () => {
  it(`keeps the newest ${BACKUPS_KEPT} of a file, and nothing else of the folder is touched`, () => {
    // another file's backups, a file of the user's named like one, and a backup older than all
    writeFileSync(join(home, "mcp.json.bak-20200101T000000Z"), "{}\n");
    writeFileSync(join(home, ".claude.json.bak-mine"), "{}\n");
    writeFileSync(join(home, ".claude.json.bak-20200101T000000Z"), "{}\n");
    const made: string[] = [];
    // 12 changes: the first makes the file, each other one a backup (within one second they are numbered -2, -3, … -10, -11)
    for (let i = 1; i <= 12; i++) {
      const done = install({
        client: "claude-code",
        entry,
        name: `s${i}`,
        place: { home, platform: "linux" },
      });
      expect(done.change).toBe("added");
      if (done.backup) made.push(done.backup.split("/").pop()!);
    }
    expect(made).toHaveLength(11);
    const left = readdirSync(home)
      .filter((f) => f.includes(".bak-"))
      .sort();
    expect(left).toEqual(
      [...made.slice(-BACKUPS_KEPT), "mcp.json.bak-20200101T000000Z", ".claude.json.bak-mine"].sort(),
    );
    // the ones kept are the newest: the file before each of the last five changes (7 to 11 servers)
    const servers = made
      .slice(-BACKUPS_KEPT)
      .map((f) => Object.keys(JSON.parse(readFileSync(join(home, f), "utf8")).mcpServers).length);
    expect(servers).toEqual([7, 8, 9, 10, 11]);
  });

  it("never removes the backup it just made, whatever times a wrong clock gave the others", () => {
    writeFileSync(file, `${JSON.stringify({ mcpServers: {} })}\n`);
    const future = [1, 2, 3, 4, 5].map((i) => `.claude.json.bak-2099010${i}T000000Z`);
    for (const name of future) writeFileSync(join(home, name), "{}\n");
    const done = put();
    const made = done.backup!.split("/").pop()!;
    expect(
      readdirSync(home)
        .filter((f) => f.includes(".bak-"))
        .sort(),
    ).toEqual([made, ...future.slice(1)].sort());
    expect(JSON.parse(readFileSync(done.backup!, "utf8"))).toEqual({ mcpServers: {} });
  });
});
