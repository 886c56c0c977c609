/**
 * `picomcp install`: the built bin run on a temporary HOME for each client, with files already there
 * (their other servers and settings kept, a backup of the old bytes, another server of the same name
 * refused without --force, JSONC edited in place with its comments, --print writing nothing), and each client's macOS and
 * Windows paths computed, not written.
 */
import { spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { type Client, configPath } from "../../src/dev/clients.js";
import { install } from "../../src/dev/install.js";

const cli = fileURLToPath(new URL("../../dist/dev/cli.js", import.meta.url));
const work = realpathSync(mkdtempSync(join(tmpdir(), "picomcp-install-cmd-")));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let home = "";
let project = "";
let entry = "";
let n = 0;
beforeEach(() => {
  home = join(work, `home${++n}`);
  project = join(work, `project${n}`);
  mkdirSync(home);
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "@acme/weather", type: "module" }));
  entry = join(project, "server.js");
  writeFileSync(entry, "// a server\n");
});

/** Runs the bin in `project` with HOME (and the folders it derives from) in the temporary home. */
function picomcp(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, USERPROFILE: home, XDG_CONFIG_HOME: "" };
  return spawnSync(process.execPath, [cli, "install", ...args], { cwd: project, env, encoding: "utf8" });
}

const FILES: Record<Client, (home: string) => string> = {
  "claude-desktop": (h) => join(h, ".config", "Claude", "claude_desktop_config.json"),
  "claude-code": (h) => join(h, ".claude.json"),
  cursor: (h) => join(h, ".cursor", "mcp.json"),
  vscode: (h) => join(h, ".config", "Code", "User", "mcp.json"),
  "mcp-json": () => join(project, "mcp.json"),
};
const KEY = (client: Client) => (client === "vscode" ? "servers" : "mcpServers");
const TYPED = (client: Client) => client === "claude-code" || client === "vscode";

/** A file as a client leaves it: another server, and settings of its own around them. */
function existing(client: Client): { file: string; text: string; data: Record<string, unknown> } {
  const file = FILES[client](home);
  const other = TYPED(client)
    ? { type: "stdio", command: "uvx", args: ["other"] }
    : { command: "uvx", args: ["other"] };
  const data = { theme: "dark", [KEY(client)]: { other }, projects: { "/x": { allowedTools: [] } } };
  mkdirSync(dirname(file), { recursive: true });
  const text = `${JSON.stringify(data, null, 4)}\n`;
  writeFileSync(file, text);
  return { file, text, data };
}

const backups = (file: string) =>
  readdirSync(dirname(file)).filter((f) => f.startsWith(`${file.split("/").pop()}.bak-`));

describe("picomcp install, stdio, on a temporary HOME", () => {
  it.each(Object.keys(FILES) as Client[])(
    "%s: adds the entry, keeps the rest of the file, backs it up, writes it whole",
    (client) => {
      const { file, text, data } = existing(client);
      const run = picomcp(client, "server.js", "--env", "API_KEY=k1", "--env", "MODE=a=b", "--", "--verbose");
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(`Added "weather" in ${file}`);
      const entryJson = {
        ...(TYPED(client) ? { type: "stdio" } : {}),
        command: process.execPath,
        args: [entry, "--verbose"],
        env: { API_KEY: "k1", MODE: "a=b" },
      };
      const after = JSON.parse(readFileSync(file, "utf8"));
      expect(after).toEqual({
        ...data,
        [KEY(client)]: { ...(data[KEY(client)] as object), weather: entryJson },
      });
      // the order of the file's keys and its indentation are kept
      expect(Object.keys(after)).toEqual(["theme", KEY(client), "projects"]);
      expect(readFileSync(file, "utf8")).toMatch(/^\{\n {4}"theme"/);
      const [backup, ...more] = backups(file);
      expect(more).toEqual([]);
      expect(readFileSync(join(dirname(file), backup!), "utf8")).toBe(text);
      // no temporary file left beside it
      expect(readdirSync(dirname(file)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    },
  );

  it("creates a missing file (and its folders) with the entry alone, no backup", () => {
    const run = picomcp("cursor", "server.js");
    expect(run.status).toBe(0);
    const file = FILES.cursor(home);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      mcpServers: { weather: { command: process.execPath, args: [entry] } },
    });
    expect(backups(file)).toEqual([]);
  });

  it("never replaces another server of that name without --force; with it, replaces it after a backup", () => {
    const { file, text } = existing("claude-code");
    let run = picomcp("claude-code", "server.js", "--name", "other", "--env", "TOKEN=secret");
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      `picomcp install: ${file} already has a server named "other" (uvx other): pass --force to replace it, or --name to install under another name\n`,
    );
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(backups(file)).toEqual([]);

    run = picomcp("claude-code", "server.js", "--name", "other", "--force");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`Replaced "other" in ${file}`);
    const after = JSON.parse(readFileSync(file, "utf8"));
    expect(after.mcpServers).toEqual({ other: { type: "stdio", command: process.execPath, args: [entry] } });
    expect(backups(file)).toHaveLength(1);
  });

  it("installing the same entry again changes nothing and makes no backup", () => {
    expect(picomcp("vscode", "server.js").status).toBe(0);
    const file = FILES.vscode(home);
    const text = readFileSync(file, "utf8");
    const again = picomcp("vscode", "server.js");
    expect(again.status).toBe(0);
    expect(again.stdout).toBe(`${file} already has this "weather": nothing to do\n`);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(backups(file)).toEqual([]);
  });

  it("--print writes nothing and prints the entry under the client's key", () => {
    const run = picomcp("vscode", "server.js", "--print", "--name", "w");
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      servers: { w: { type: "stdio", command: process.execPath, args: [entry] } },
    });
    expect(run.stderr).toContain(FILES.vscode(home));
    expect(readdirSync(home)).toEqual([]);
  });

  it("edits a file with comments and trailing commas (JSONC) in place, every comment kept", () => {
    const file = FILES.vscode(home);
    mkdirSync(dirname(file), { recursive: true });
    const text =
      '{\n  // my servers\n  "servers": {\n    "other": { "type": "http", "url": "https://x.example/mcp" }, // remote\n  },\n}\n';
    writeFileSync(file, text);
    const run = picomcp("vscode", "server.js");
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(
      `{\n  // my servers\n  "servers": {\n    "other": { "type": "http", "url": "https://x.example/mcp" }, // remote\n    "weather": {\n      "type": "stdio",\n      "command": ${JSON.stringify(process.execPath)},\n      "args": [\n        ${JSON.stringify(entry)}\n      ]\n    },\n  },\n}\n`,
    );
    const [backup] = backups(file);
    expect(readFileSync(join(dirname(file), backup!), "utf8")).toBe(text);
  });

  it("refuses, untouched, a JSONC file it cannot edit faithfully, and says what to add by hand", () => {
    const file = FILES.vscode(home);
    mkdirSync(dirname(file), { recursive: true });
    // two "servers": JSON readers take the last, an edit of the first would not show
    const text =
      '{\n  "servers": {}, // old\n  "servers": { "other": { "url": "https://x.example/mcp" } }\n}\n';
    writeFileSync(file, text);
    const run = picomcp("vscode", "server.js");
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `picomcp install: ${file} has comments or trailing commas that picomcp cannot keep around the entry. Add this by hand:\n`,
    );
    expect(run.stderr).toContain(`"weather": {\n      "type": "stdio"`);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(dirname(file))).toEqual(["mcp.json"]);
  });

  it("refuses a file that is not JSON, or whose servers are not an object, untouched", () => {
    const file = FILES.cursor(home);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, "{ nope");
    let run = picomcp("cursor", "server.js");
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/is not valid JSON \(.*\): fix it first/);
    writeFileSync(file, '{"mcpServers": []}');
    run = picomcp("cursor", "server.js");
    expect(run.stderr).toContain(`${file}: "mcpServers" is not an object of servers by name: fix it first`);
    expect(readFileSync(file, "utf8")).toBe('{"mcpServers": []}');
    expect(readdirSync(dirname(file))).toEqual(["mcp.json"]);
  });

  it("writes through a symbolic link to its target, the link kept", () => {
    const target = join(home, "dotfiles", "claude.json");
    mkdirSync(dirname(target));
    writeFileSync(target, '{"numStartups": 3}');
    symlinkSync(target, join(home, ".claude.json"));
    expect(picomcp("claude-code", "server.js").status).toBe(0);
    expect(JSON.parse(readFileSync(target, "utf8")).numStartups).toBe(3);
    expect(JSON.parse(readFileSync(join(home, ".claude.json"), "utf8")).mcpServers.weather.command).toBe(
      process.execPath,
    );
    expect(readdirSync(join(home, "dotfiles")).filter((f) => f.includes(".bak-"))).toHaveLength(1);
  });

  it("mcp-json takes --file", () => {
    const run = picomcp("mcp-json", "server.js", "--file", "conf/servers.json");
    expect(run.status).toBe(0);
    expect(JSON.parse(readFileSync(join(project, "conf", "servers.json"), "utf8"))).toEqual({
      mcpServers: { weather: { command: process.execPath, args: [entry] } },
    });
  });
});

describe("picomcp install, a remote URL", () => {
  it.each([
    ["claude-code", { type: "http", url: "https://mcp.example.com/mcp" }],
    ["vscode", { type: "http", url: "https://mcp.example.com/mcp" }],
    ["cursor", { url: "https://mcp.example.com/mcp" }],
    ["mcp-json", { url: "https://mcp.example.com/mcp" }],
  ] as const)("%s: the entry it documents", (client, want) => {
    const run = picomcp(client, "--url", "https://mcp.example.com/mcp");
    expect(run.status).toBe(0);
    expect(JSON.parse(readFileSync(FILES[client](home), "utf8"))[KEY(client)]).toEqual({
      "mcp.example.com": want,
    });
  });

  it("--header goes with the URL (a key); not with a server the client starts, nor malformed", () => {
    const run = picomcp(
      "claude-code",
      "--url",
      "https://mcp.example.com/mcp",
      "--header",
      "Authorization: Bearer t0k",
    );
    expect(run.status).toBe(0);
    expect(JSON.parse(readFileSync(FILES["claude-code"](home), "utf8")).mcpServers).toEqual({
      "mcp.example.com": {
        type: "http",
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: "Bearer t0k" },
      },
    });
    expect(picomcp("cursor", "server.js", "--header", "X-Key: 1").stderr).toBe(
      "picomcp install: --header is for a remote server (--url); a server the client starts takes --env\n",
    );
    const bad = picomcp("cursor", "--url", "https://a.example", "--header", "no colon");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^--header takes "Name: value", not no colon\n/);
  });

  it("claude-desktop: refused, saying where a remote server goes instead", () => {
    const run = picomcp("claude-desktop", "--url", "https://mcp.example.com/mcp", "--name", "x");
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("Settings → Connectors");
    expect(readdirSync(home)).toEqual([]);
  });

  it("refuses a URL that is not http(s), --env with --url, and an unknown client", () => {
    expect(picomcp("cursor", "--url", "file:///etc/passwd").stderr).toContain(
      "--url takes an http(s) address",
    );
    expect(picomcp("cursor", "--url", "https://a.example", "--env", "A=1").stderr).toContain(
      "--env is for a server the client starts",
    );
    const run = picomcp("emacs", "server.js");
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      "Unknown client: emacs (one of claude-desktop, claude-code, cursor, vscode, mcp-json)",
    );
  });
});

describe("the commands' help", () => {
  it("picomcp --help names install and bundle; each has its own --help on stdout", () => {
    const help = spawnSync(process.execPath, [cli, "--help"], { encoding: "utf8" });
    expect(help.stdout).toContain("  install <client> <entry.js>\n");
    expect(help.stdout).toContain("  bundle <entry.js>\n");
    const install = picomcp("--help");
    expect([install.status, install.stderr]).toEqual([0, ""]);
    expect(install.stdout).toMatch(/^Usage: picomcp install <client> <entry\.js> \[options\]/);
    const bundle = spawnSync(process.execPath, [cli, "bundle", "--help"], { encoding: "utf8" });
    expect([bundle.status, bundle.stderr]).toEqual([0, ""]);
    expect(bundle.stdout).toMatch(/^Usage: picomcp bundle <entry\.js> \[--out file\.mcpb\]/);
    const none = picomcp();
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/^picomcp install needs a client\n\nUsage: picomcp install/);
  });
});

describe("a .ts entry", () => {
  it("runs through Node's type stripping where this Node has it, and is refused where it has not", () => {
    const ts = join(project, "server.ts");
    writeFileSync(ts, "export {};\n");
    const at = (version: string) =>
      install({ client: "cursor", entry: ts, print: true, node: { execPath: "/opt/node/bin/node", version } })
        .entry;
    expect(at("22.18.0")).toEqual({ command: "/opt/node/bin/node", args: [ts] });
    expect(at("22.6.0")).toEqual({ command: "/opt/node/bin/node", args: ["--experimental-strip-types", ts] });
    expect(() => at("20.19.0")).toThrow(/build it first \(npx tsc\) and pass the \.js file/);
  });
});

describe("each client's file, per platform (computed, not written)", () => {
  const mac = { platform: "darwin", home: "/Users/ada", env: {}, cwd: "/Users/ada/proj" } as const;
  const win = {
    platform: "win32",
    home: "C:\\Users\\Ada",
    env: { APPDATA: "C:\\Users\\Ada\\AppData\\Roaming" },
    cwd: "C:\\proj",
  } as const;
  const linux = {
    platform: "linux",
    home: "/home/ada",
    env: { XDG_CONFIG_HOME: "/home/ada/.cfg" },
    cwd: "/p",
  } as const;

  it.each([
    ["claude-desktop", mac, "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json"],
    ["claude-desktop", win, "C:\\Users\\Ada\\AppData\\Roaming\\Claude\\claude_desktop_config.json"],
    ["claude-desktop", linux, "/home/ada/.cfg/Claude/claude_desktop_config.json"],
    ["claude-code", mac, "/Users/ada/.claude.json"],
    ["claude-code", win, "C:\\Users\\Ada\\.claude.json"],
    ["claude-code", linux, "/home/ada/.claude.json"],
    ["cursor", mac, "/Users/ada/.cursor/mcp.json"],
    ["cursor", win, "C:\\Users\\Ada\\.cursor\\mcp.json"],
    ["cursor", linux, "/home/ada/.cursor/mcp.json"],
    ["vscode", mac, "/Users/ada/Library/Application Support/Code/User/mcp.json"],
    ["vscode", win, "C:\\Users\\Ada\\AppData\\Roaming\\Code\\User\\mcp.json"],
    ["vscode", linux, "/home/ada/.cfg/Code/User/mcp.json"],
    ["mcp-json", mac, "/Users/ada/proj/mcp.json"],
    ["mcp-json", win, "C:\\proj\\mcp.json"],
  ] as const)("%s on %o", (client, place, path) => {
    expect(configPath(client, place)).toBe(path);
    expect(install({ client, entry, print: true, place }).file).toBe(path);
  });

  it("Windows without APPDATA falls back to the home's AppData\\Roaming", () => {
    expect(configPath("vscode", { ...win, env: {} })).toBe(
      "C:\\Users\\Ada\\AppData\\Roaming\\Code\\User\\mcp.json",
    );
  });
});
