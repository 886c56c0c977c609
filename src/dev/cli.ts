#!/usr/bin/env node
/** The `picomcp` command: `dev`, `install` and `bundle`, `--version`, `--help`. */
import { readFileSync } from "node:fs";
import { bundleCommand, installCommand } from "./commands.js";
import { runDev } from "./runner.js";

const USAGE = `Usage: picomcp <command>

Commands:
  dev <entry.js>   run an MCP server with a console in the browser (picomcp dev --help)
  install <client> <entry.js>
                   add the server to Claude Desktop, Claude Code, Cursor, VS Code or an mcp.json
                   (picomcp install --help)
  bundle <entry.js>
                   pack the server and its production dependencies into an MCP bundle, .mcpb
                   (picomcp bundle --help)

Options:
  --version        print picomcp's version
  --help           print this help`;

const DEV_USAGE = `Usage: picomcp dev <entry.js> [--port 6280] [--ignore <glob>]... [-- arguments for the entry]

Runs your MCP server over stdio, restarts it when a module it loaded changes (once per build, never for
a file it writes itself), and serves a console on 127.0.0.1 to list, call, read and watch everything it
offers, in either protocol era. Open the address it prints: it carries a secret made for this run,
without which the console answers 401.

Options:
  --port N         the console's port (default 6280; a taken one falls back to a free one)
  --ignore <glob>  changes there never restart the server: \`data\` (a file or folder of that name
                   anywhere under the entry's folder), \`*.log\`, \`src/generated/**\`; repeatable
  --help           print this help`;

/** Prints `text` and exits: help asked for goes to stdout (exit 0), a mistake to stderr (exit 2). */
function finish(text: string, code: 0 | 2): never {
  if (code === 0) console.log(text);
  else console.error(text);
  process.exit(code);
}

const [command, ...rest] = process.argv.slice(2);
if (command === "--version" || command === "-v") {
  // dist/dev/cli.js and src/dev/cli.ts both sit two folders below the package's root
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  finish(pkg.version, 0);
}
if (command === "--help" || command === "-h") finish(USAGE, 0);
if (command === "install") process.exit(installCommand(rest));
if (command === "bundle") process.exit(await bundleCommand(rest));
if (command !== "dev") finish(command === undefined ? USAGE : `Unknown command: ${command}\n\n${USAGE}`, 2);

const split = rest.indexOf("--");
const own = split < 0 ? rest : rest.slice(0, split);
const args = split < 0 ? [] : rest.slice(split + 1);
if (own.includes("--help") || own.includes("-h")) finish(DEV_USAGE, 0);
let entry: string | undefined;
let port: number | undefined;
const ignore: string[] = [];
for (let i = 0; i < own.length; i++) {
  const arg = own[i]!;
  if (arg === "--port") port = Number(own[++i]);
  else if (arg === "--ignore") {
    const glob = own[++i];
    if (glob === undefined || glob === "") finish(`--ignore takes a glob\n\n${DEV_USAGE}`, 2);
    ignore.push(glob);
  } else if (arg.startsWith("--ignore=")) ignore.push(arg.slice("--ignore=".length));
  else if (entry === undefined && !arg.startsWith("-")) entry = arg;
  else finish(`Unexpected argument: ${arg}\n\n${DEV_USAGE}`, 2);
}
if (entry === undefined) finish(`picomcp dev needs the server's entry file\n\n${DEV_USAGE}`, 2);
if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536))
  finish(`--port takes a port number from 0 to 65535\n\n${DEV_USAGE}`, 2);

try {
  const dev = await runDev({ entry, args, ignore, ...(port === undefined ? {} : { port }) });
  // the address on stdout, alone on its line, for scripts; everything else on stderr
  console.log(dev.url);
  const quit = () => void dev.close().then(() => process.exit(0));
  process.once("SIGINT", quit);
  process.once("SIGTERM", quit);
} catch (error) {
  console.error(`picomcp dev: ${(error as Error).message}`);
  process.exit(1);
}
