/**
 * `picomcp bundle`: a small server project in a temporary folder (picomcp and a dependency with its own
 * nested dependency installed, a devDependency installed beside them) bundled by the built bin; the
 * bundle checked by the format's own tool (`mcpb info`, `mcpb unpack`, `mcpb validate`), then started from
 * the unpacked folder as Claude Desktop starts it (node, the manifest's mcp_config, its env filled from
 * user_config) and called over stdio with the official SDK client.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cli = join(root, "dist", "dev", "cli.js");
const mcpb = join(root, "node_modules", ".bin", "mcpb");
const work = realpathSync(mkdtempSync(join(tmpdir(), "picomcp-bundle-")));
const project = join(work, "weather");
afterAll(() => rmSync(work, { recursive: true, force: true }));

const write = (path: string, text: string) => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
};
const json = (value: unknown) => JSON.stringify(value, null, 2);

const SERVER = `import { McpServer } from "picomcp";
import { serveStdio } from "picomcp/stdio";
import { format } from "tiny-format";

const server = new McpServer({ name: "weather", version: "1.2.3" });
server.tool("forecast", {
  description: "Tomorrow's weather in a city",
  input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  run: ({ city }) => format(String(city), process.env.WEATHER_API_KEY, process.env.UNITS),
});
server.tool("ping", { run: () => "pong" });
server.prompt("plan", {
  description: "Plan a day out",
  args: [{ name: "city", required: true }],
  get: ({ city }) => \`Plan a day in \${city}, whatever the weather.\`,
});
serveStdio(server);
`;

/** The project as a developer has it after `npm install` and a build. */
function makeProject(dir: string, pkg: Record<string, unknown>) {
  write(join(dir, "package.json"), json(pkg));
  write(join(dir, "build", "server.js"), SERVER);
  write(join(dir, "src", "server.ts"), "// the source: not in the bundle\n");
  write(join(dir, "test", "server.test.ts"), "// a test: not in the bundle\n");
  write(join(dir, ".env"), "WEATHER_API_KEY=local-secret\n");
  const picomcp = join(dir, "node_modules", "picomcp");
  mkdirSync(picomcp, { recursive: true });
  cpSync(join(root, "package.json"), join(picomcp, "package.json"));
  cpSync(join(root, "dist"), join(picomcp, "dist"), { recursive: true });
  const tiny = join(dir, "node_modules", "tiny-format");
  write(
    join(tiny, "package.json"),
    json({
      name: "tiny-format",
      version: "1.0.0",
      type: "module",
      main: "index.js",
      dependencies: { "tiny-pad": "2" },
    }),
  );
  write(
    join(tiny, "index.js"),
    `import { pad } from "tiny-pad";\nexport const format = (city, key, units) => \`\${city}: \${pad("sunny")} (key \${key}, \${units})\`;\n`,
  );
  // a nested copy: another version of tiny-pad than the top-level one
  write(
    join(tiny, "node_modules", "tiny-pad", "package.json"),
    json({ name: "tiny-pad", version: "2.0.0", type: "module", main: "index.js" }),
  );
  write(join(tiny, "node_modules", "tiny-pad", "index.js"), 'export const pad = (s) => "[" + s + "]";\n');
  // what Node never loads (the declarations and maps of its code) beside what it may read (a declaration
  // of no code, as TypeScript's lib files; a data file named .map)
  write(join(tiny, "index.d.ts"), "export declare const format: (...a: string[]) => string;\n");
  write(join(tiny, "index.js.map"), "{}\n");
  write(join(tiny, "index.d.ts.map"), "{}\n");
  write(join(tiny, "lib", "util.cjs"), "module.exports = {};\n");
  write(join(tiny, "lib", "util.d.cts"), "export {};\n");
  write(join(tiny, "lib", "lib.es5.d.ts"), "interface Array<T> {}\n");
  write(join(tiny, "routes.map"), "a -> b\n");
  write(join(dir, "build", "server.js.map"), "{}\n");
  write(
    join(dir, "node_modules", "tiny-pad", "package.json"),
    json({ name: "tiny-pad", version: "1.0.0", type: "module", main: "index.js" }),
  );
  write(join(dir, "node_modules", "tiny-pad", "index.js"), "export const pad = (s) => s;\n");
  write(join(dir, "node_modules", "dev-only", "package.json"), json({ name: "dev-only", version: "1.0.0" }));
  write(join(dir, "node_modules", "dev-only", "index.js"), "// a devDependency\n");
  write(join(dir, "node_modules", ".bin", "dev-only"), "#!/bin/sh\n");
}

const PACKAGE = {
  name: "weather-mcp",
  version: "1.2.3",
  description: "Weather for your assistant",
  author: "Ada Lovelace <ada@example.com> (https://ada.example.com)",
  license: "MIT",
  type: "module",
  engines: { node: ">=20" },
  dependencies: { picomcp: "^0.1.0", "tiny-format": "^1.0.0" },
  devDependencies: { "dev-only": "^1.0.0" },
  picomcp: {
    env: {
      WEATHER_API_KEY: { title: "API key", description: "Your weather service key" },
    },
  },
};

const picomcp = (cwd: string, ...args: string[]) =>
  spawnSync(process.execPath, [cli, "bundle", ...args], { cwd, encoding: "utf8", timeout: 60_000 });
const run = (...args: string[]) => spawnSync(mcpb, args, { cwd: work, encoding: "utf8", timeout: 60_000 });

function filesIn(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[])
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)).split("\\").join("/"))
    .sort();
}

const unpacked = join(work, "unpacked");
let manifest: Record<string, any>;

beforeAll(() => {
  makeProject(project, PACKAGE);
}, 60_000);

describe("picomcp bundle", { timeout: 120_000 }, () => {
  it("builds a bundle that mcpb reads, unpacks and validates", () => {
    const built = picomcp(project, "build/server.js", "--env", "UNITS", "--out", "../weather.mcpb");
    expect(built.stderr).toMatch(
      /^picomcp bundle: \d+ files, [\d.]+ KiB; 2 tools, 1 prompts in the manifest\n$/,
    );
    expect(built.status).toBe(0);
    expect(built.stdout).toBe(`${join(work, "weather.mcpb")}\n`);

    const info = run("info", "weather.mcpb");
    expect(info.status).toBe(0);
    expect(info.stdout).toMatch(/^File: weather\.mcpb\nSize: [\d.]+ [KM]B\n/);
    const unpack = run("unpack", "weather.mcpb", unpacked);
    expect(unpack.status).toBe(0);
    const validate = run("validate", join(unpacked, "manifest.json"));
    expect(validate.stdout).toContain("Manifest schema validation passes!");
    expect(validate.status).toBe(0);
    manifest = JSON.parse(readFileSync(join(unpacked, "manifest.json"), "utf8"));
  });

  it("writes the manifest from package.json, the server's own tools and prompts, and the declared env", () => {
    expect(manifest).toEqual({
      manifest_version: "0.3",
      name: "weather-mcp",
      version: "1.2.3",
      description: "Weather for your assistant",
      author: { name: "Ada Lovelace", email: "ada@example.com", url: "https://ada.example.com" },
      license: "MIT",
      server: {
        type: "node",
        entry_point: "build/server.js",
        mcp_config: {
          command: "node",
          args: [`\${__dirname}/build/server.js`],
          env: { WEATHER_API_KEY: `\${user_config.weather_api_key}`, UNITS: `\${user_config.units}` },
        },
      },
      tools: [{ name: "forecast", description: "Tomorrow's weather in a city" }, { name: "ping" }],
      prompts: [
        {
          name: "plan",
          description: "Plan a day out",
          arguments: ["city"],
          text: `Plan a day in \${arguments.city}, whatever the weather.`,
        },
      ],
      user_config: {
        weather_api_key: {
          type: "string",
          title: "API key",
          description: "Your weather service key",
          required: true,
          sensitive: true,
        },
        units: {
          type: "string",
          title: "UNITS",
          description: "The UNITS environment variable of the server",
          required: true,
          sensitive: false,
        },
      },
      compatibility: { platforms: ["darwin", "win32", "linux"], runtimes: { node: ">=20" } },
    });
  });

  it("holds the built server and the production dependencies only: no devDependency, source, test or dot file, no dependency's declarations or maps of its code", () => {
    const files = filesIn(unpacked);
    expect(files.filter((f) => !f.startsWith("node_modules/picomcp/"))).toEqual([
      "build/server.js",
      "build/server.js.map",
      "manifest.json",
      "node_modules/tiny-format/index.js",
      "node_modules/tiny-format/lib/lib.es5.d.ts",
      "node_modules/tiny-format/lib/util.cjs",
      "node_modules/tiny-format/node_modules/tiny-pad/index.js",
      "node_modules/tiny-format/node_modules/tiny-pad/package.json",
      "node_modules/tiny-format/package.json",
      "node_modules/tiny-format/routes.map",
      "package.json",
    ]);
    // picomcp's source maps stay home, and the declarations of its entry points (beside their code)
    const picomcpFiles = files.filter((f) => f.startsWith("node_modules/picomcp/"));
    expect(picomcpFiles.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(picomcpFiles).not.toContain("node_modules/picomcp/dist/index.d.ts");
    expect(picomcpFiles.length).toBeGreaterThan(20);
    expect(files).toContain("node_modules/picomcp/dist/index.js");
    expect(files).toContain("node_modules/picomcp/dist/stdio.js");
    expect(files.some((f) => f.includes("dev-only") || f.includes(".bin") || f.includes(".env"))).toBe(false);
  });

  it("runs as Claude Desktop starts it: node, mcp_config's args and env from user_config, a tool called over stdio", async () => {
    const values: Record<string, string> = { weather_api_key: "k-123", units: "metric" };
    const fill = (s: string) =>
      s
        .replaceAll(`\${__dirname}`, unpacked)
        .replace(/\$\{user_config\.(\w+)\}/g, (_, k: string) => values[k]!);
    const config = manifest.server.mcp_config;
    const transport = new StdioClientTransport({
      command: process.execPath, // Claude Desktop's own node stands for "node"
      args: config.args.map(fill),
      env: Object.fromEntries(
        Object.entries(config.env as Record<string, string>).map(([k, v]) => [k, fill(v)]),
      ),
      cwd: work,
      stderr: "pipe",
    });
    const client = new Client({ name: "desktop", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["forecast", "ping"]);
      expect(await client.callTool({ name: "forecast", arguments: { city: "Oslo" } })).toEqual({
        content: [{ type: "text", text: "Oslo: [sunny] (key k-123, metric)" }],
      });
    } finally {
      await client.close();
    }
  });

  it("makes the same bytes from the same files", () => {
    expect(picomcp(project, "build/server.js", "--env", "UNITS", "--out", "../again.mcpb").status).toBe(0);
    expect(readFileSync(join(work, "again.mcpb")).equals(readFileSync(join(work, "weather.mcpb")))).toBe(
      true,
    );
  });

  it("takes the env that docs/install.md declares in package.json: defaults, required, sensitive", () => {
    const doc = readFileSync(join(root, "docs", "install.md"), "utf8");
    const declared = JSON.parse(/```json\n([\s\S]*?)```/.exec(doc)![1]!).picomcp;
    const dir = join(work, "documented");
    makeProject(dir, { ...PACKAGE, picomcp: declared });
    expect(picomcp(dir, "build/server.js", "--env", "TOKEN_FILE", "--out", "documented.mcpb").status).toBe(0);
    expect(run("unpack", join(dir, "documented.mcpb"), join(work, "documented-unpacked")).status).toBe(0);
    const got = JSON.parse(readFileSync(join(work, "documented-unpacked", "manifest.json"), "utf8"));
    expect(got.user_config).toEqual({
      weather_api_key: {
        type: "string",
        title: "API key",
        description: "Your weather service key",
        required: true,
        sensitive: true,
      },
      units: {
        type: "string",
        title: "Units",
        description: "metric or imperial",
        required: false,
        sensitive: false,
        default: "metric",
      },
      token_file: {
        type: "string",
        title: "TOKEN_FILE",
        description: "The TOKEN_FILE environment variable of the server",
        required: true,
        sensitive: true,
      },
    });
    expect(Object.keys(got.server.mcp_config.env)).toEqual(["WEATHER_API_KEY", "UNITS", "TOKEN_FILE"]);
    expect(run("validate", join(work, "documented-unpacked", "manifest.json")).status).toBe(0);
  });

  it("an entry beside package.json packs the project's folder, without bundles, backups or dot files", () => {
    const dir = join(work, "flat");
    makeProject(dir, PACKAGE);
    write(join(dir, "server.js"), SERVER);
    write(join(dir, "notes.md"), "# notes\n");
    write(join(dir, "weather-mcp-1.0.0.mcpb"), "an older bundle");
    write(join(dir, "mcp.json.bak-20260101T000000Z"), "{}");
    const built = picomcp(dir, "server.js");
    expect(built.status).toBe(0);
    expect(built.stdout).toBe(`${join(dir, "weather-mcp-1.2.3.mcpb")}\n`);
    const out = join(work, "flat-unpacked");
    expect(run("unpack", join(dir, "weather-mcp-1.2.3.mcpb"), out).status).toBe(0);
    expect(filesIn(out).filter((f) => !f.startsWith("node_modules/"))).toEqual([
      "build/server.js",
      "build/server.js.map",
      "manifest.json",
      "notes.md",
      "package.json",
      "server.js",
      "src/server.ts",
      "test/server.test.ts",
    ]);
    expect(JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")).server.entry_point).toBe("server.js");
  });

  it("stops a server that never answers, and says so", async () => {
    const { probe } = await import("../../src/dev/probe.js");
    // what it wrote before the deadline comes with the message; how much, on a loaded machine, varies
    await expect(
      probe(process.execPath, ["-e", "setInterval(() => {}, 1000)"], process.env, undefined, 1000),
    ).rejects.toThrow(/^the server did not answer within 1 s$/);
  });

  it("refuses what it cannot bundle, saying why", () => {
    const ts = picomcp(project, "src/server.ts");
    expect(ts.status).toBe(1);
    expect(ts.stderr).toContain("build it (npx tsc) and bundle the .js");

    const other = join(work, "no-author");
    makeProject(other, { ...PACKAGE, author: undefined });
    expect(picomcp(other, "build/server.js").stderr).toContain(`the bundle's manifest needs an author`);

    const missing = join(work, "missing-dep");
    makeProject(missing, { ...PACKAGE, dependencies: { ...PACKAGE.dependencies, "left-out": "1" } });
    const run = picomcp(missing, "build/server.js");
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      "picomcp bundle: left-out, a dependency of the project, is not installed: run npm install first\n",
    );

    // started from the bundle's own files, a server that imports a devDependency fails before it ships
    const devImport = join(work, "dev-import");
    makeProject(devImport, PACKAGE);
    write(join(devImport, "build", "server.js"), `import "dev-only";\n${SERVER}`);
    expect(
      spawnSync(process.execPath, ["build/server.js"], { cwd: devImport, input: "", encoding: "utf8" })
        .status,
    ).toBe(0);
    const shipped = picomcp(devImport, "build/server.js");
    expect(shipped.status).toBe(1);
    expect(shipped.stderr).toMatch(
      /^picomcp bundle: the server exited \(code 1\) before it answered; it wrote:\n/,
    );
    expect(shipped.stderr).toContain("Cannot find package 'dev-only'");
    expect(shipped.stderr).toContain(
      "is a package it imports in devDependencies, or a file it reads elsewhere?",
    );
    expect(readdirSync(devImport).filter((f) => f.endsWith(".mcpb"))).toEqual([]);

    const loop = join(work, "loop");
    makeProject(loop, PACKAGE);
    symlinkSync(join(loop, "build"), join(loop, "build", "again"));
    const looped = picomcp(loop, "build/server.js");
    expect(looped.status).toBe(1);
    expect(looped.stderr).toBe(
      `picomcp bundle: ${join(loop, "build", "again")} links back to a folder that holds it\n`,
    );

    const crash = join(work, "crash");
    makeProject(crash, PACKAGE);
    write(join(crash, "build", "server.js"), 'console.error("no API key"); process.exit(3);\n');
    const crashed = picomcp(crash, "build/server.js");
    expect(crashed.status).toBe(1);
    expect(crashed.stderr).toBe(
      "picomcp bundle: the server exited (code 3) before it answered; it wrote:\nno API key\n",
    );
  });

  it("declares only this platform when native code goes in, and says which packages bring it", () => {
    const dir = join(work, "native");
    const deps = { ...PACKAGE.dependencies, "@acme/addon": "1", "gyp-only": "1", "tiny-format": "^1.0.0" };
    makeProject(dir, { ...PACKAGE, dependencies: deps });
    const addon = join(dir, "node_modules", "@acme", "addon");
    write(join(addon, "package.json"), json({ name: "@acme/addon", version: "1.0.0" }));
    write(join(addon, "build", "Release", "addon.node"), "\x7fELF not really");
    const gyp = join(dir, "node_modules", "gyp-only");
    write(join(gyp, "package.json"), json({ name: "gyp-only", version: "1.0.0" }));
    write(join(gyp, "binding.gyp"), "{ 'targets': [] }\n");
    const built = picomcp(dir, "build/server.js", "--out", "native.mcpb");
    expect(built.status).toBe(0);
    expect(built.stderr.split("\n")[0]).toBe(
      `picomcp bundle: warning: native code in @acme/addon, gyp-only: built for ${process.platform}, so the bundle declares ${process.platform} only; build a bundle on each platform it should run on`,
    );
    const out = join(work, "native-unpacked");
    expect(run("unpack", join(dir, "native.mcpb"), out).status).toBe(0);
    const got = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(got.compatibility).toEqual({ platforms: [process.platform], runtimes: { node: ">=20" } });
    expect(run("validate", join(out, "manifest.json")).status).toBe(0);

    // a prebuilds/ folder of the project's own is native code too
    write(join(dir, "build", "prebuilds", "linux-x64", "README"), "prebuilt addons go here\n");
    rmSync(join(dir, "node_modules", "@acme"), { recursive: true });
    rmSync(gyp, { recursive: true });
    makeProject(dir, PACKAGE);
    const own = picomcp(dir, "build/server.js", "--out", "own.mcpb");
    expect(own.status).toBe(0);
    expect(own.stderr).toContain("picomcp bundle: warning: native code in weather-mcp: built for");
  });

  it("refuses two variables whose user_config keys would be one", () => {
    const clash = picomcp(project, "build/server.js", "--env", "Weather_Api_Key", "--out", "../clash.mcpb");
    expect(clash.status).toBe(1);
    expect(clash.stderr).toBe(
      "picomcp bundle: WEATHER_API_KEY and Weather_Api_Key would both be asked as user_config.weather_api_key (its keys are in lower case): declare one of them\n",
    );
    expect(readdirSync(work).filter((f) => f.startsWith("clash"))).toEqual([]);
  });

  it("keeps an executable's mode and a non-ASCII name through mcpb unpack (UTF-8 names, Unix modes)", () => {
    const dir = join(work, "modes");
    makeProject(dir, PACKAGE);
    write(join(dir, "build", "bin", "run"), "#!/usr/bin/env node\n");
    chmodSync(join(dir, "build", "bin", "run"), 0o755);
    write(join(dir, "build", "é.js"), "export default 1;\n");
    chmodSync(join(dir, "build", "é.js"), 0o644);
    expect(picomcp(dir, "build/server.js", "--out", "modes.mcpb").status).toBe(0);
    const out = join(work, "modes-unpacked");
    expect(run("unpack", join(dir, "modes.mcpb"), out).status).toBe(0);
    expect(filesIn(out).filter((f) => f.startsWith("build/"))).toEqual([
      "build/bin/run",
      "build/server.js",
      "build/server.js.map",
      "build/é.js",
    ]);
    expect(readFileSync(join(out, "build", "é.js"), "utf8")).toBe("export default 1;\n");
    // mcpb unpack sets each file's mode from the archive's external attributes (on Unix)
    if (process.platform !== "win32") {
      expect((statSync(join(out, "build", "bin", "run")).mode & 0o777).toString(8)).toBe("755");
      expect((statSync(join(out, "build", "é.js")).mode & 0o777).toString(8)).toBe("644");
    }
    // and what any unzip reads: made by Unix (3), UTF-8 names (bit 11), a regular file's mode
    const archive = readFileSync(join(dir, "modes.mcpb"));
    const end = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    const entries = new Map<string, { madeBy: number; flags: number; mode: number }>();
    for (let at = archive.readUInt32LE(end + 16), i = 0; i < archive.readUInt16LE(end + 10); i++) {
      expect(archive.readUInt32LE(at)).toBe(0x02014b50);
      const nameLength = archive.readUInt16LE(at + 28);
      entries.set(archive.toString("utf8", at + 46, at + 46 + nameLength), {
        madeBy: archive.readUInt16LE(at + 4) >> 8,
        flags: archive.readUInt16LE(at + 8),
        mode: archive.readUInt32LE(at + 38) >>> 16,
      });
      at += 46 + nameLength + archive.readUInt16LE(at + 30) + archive.readUInt16LE(at + 32);
    }
    expect(entries.get("build/bin/run")).toEqual({ madeBy: 3, flags: 0x0800, mode: 0o100755 });
    expect(entries.get("build/é.js")).toEqual({ madeBy: 3, flags: 0x0800, mode: 0o100644 });
  });
});
