#!/usr/bin/env node
/** The `picomcp` command: `picomcp dev <entry> [--port N] [-- args for the entry]`. */
import { runDev } from "./runner.js";

const USAGE = `Usage: picomcp dev <entry.js> [--port 6280] [-- arguments for the entry]

Runs your MCP server over stdio, restarts it when files beside the entry change, and serves a console
on 127.0.0.1 to list, call, read and watch everything it offers, in either protocol era.`;

const [command, ...rest] = process.argv.slice(2);
if (command !== "dev") {
  console.error(
    command === undefined || command === "--help" ? USAGE : `Unknown command: ${command}\n\n${USAGE}`,
  );
  process.exit(command === "--help" ? 0 : 2);
}

const split = rest.indexOf("--");
const own = split < 0 ? rest : rest.slice(0, split);
const args = split < 0 ? [] : rest.slice(split + 1);
let entry: string | undefined;
let port: number | undefined;
for (let i = 0; i < own.length; i++) {
  const arg = own[i]!;
  if (arg === "--port") port = Number(own[++i]);
  else if (entry === undefined && !arg.startsWith("-")) entry = arg;
  else {
    console.error(`Unexpected argument: ${arg}\n\n${USAGE}`);
    process.exit(2);
  }
}
if (entry === undefined || (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536))) {
  console.error(USAGE);
  process.exit(2);
}

try {
  const dev = await runDev({ entry, args, ...(port === undefined ? {} : { port }) });
  // the URL on stdout, alone on its line, for scripts; everything else on stderr
  console.log(dev.url);
  const quit = () => void dev.close().then(() => process.exit(0));
  process.once("SIGINT", quit);
  process.once("SIGTERM", quit);
} catch (error) {
  console.error(`picomcp dev: ${(error as Error).message}`);
  process.exit(1);
}
