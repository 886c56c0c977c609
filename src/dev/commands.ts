/** `picomcp install` and `picomcp bundle` on the command line: their arguments, help and messages. */
import { bundle } from "./bundle.js";
import { CLIENTS, type Client } from "./clients.js";
import { install } from "./install.js";

const INSTALL_USAGE = `Usage: picomcp install <client> <entry.js> [options] [-- arguments for the entry]
       picomcp install <client> --url <https://host/mcp> [options]

Adds the server to a client's configuration: started by this node (its absolute path) with the entry's
absolute path, or reached at a URL. Another server of the same name is never replaced without --force;
the file changed is copied first to <file>.bak-<time> (the newest five kept).

Clients:
  claude-desktop   claude_desktop_config.json, "mcpServers" (no remote URLs: add those in its Connectors)
  claude-code      ~/.claude.json, "mcpServers" of the user scope (every project)
  cursor           ~/.cursor/mcp.json, "mcpServers"
  vscode           the user profile's mcp.json, "servers"
  mcp-json         ./mcp.json (or --file), "mcpServers"

Options:
  --name N         the server's name (default: the package's name, or the entry's file name)
  --env K=V        an environment variable for the server; repeatable
  --url URL        a remote server (Streamable HTTP) instead of an entry
  --header "K: V"  an HTTP header the client sends to the --url (an API key); repeatable
  --file PATH      the configuration file to change instead of the client's own
  --force          replace another server of the same name
  --print          write nothing: print the entry and the file it would go into
  --help           print this help`;

const BUNDLE_USAGE = `Usage: picomcp bundle <entry.js> [--out file.mcpb] [--env NAME]... [--include PATH]... [-- arguments]

Builds an MCP bundle (.mcpb) that Claude Desktop installs in one step: a manifest (name, version,
description and author from package.json; the tools and prompts the server lists when started), the
server's files and its production dependencies (never a devDependency).

Options:
  --out FILE       the bundle to write (default: <name>-<version>.mcpb beside package.json)
  --env NAME       an environment variable the server reads, asked of the user on install; repeatable
                   (package.json's "picomcp": { "env": { NAME: { title, description, sensitive, ... } } }
                   declares them with more detail)
  --include PATH   a file or folder of the project to pack instead of the entry's folder; repeatable
  --help           print this help`;

/** The options before `--` and the arguments after it; `--x=v` becomes `--x v`. */
function split(argv: readonly string[]): { own: string[]; args: string[] } {
  const at = argv.indexOf("--");
  const own = (at < 0 ? argv : argv.slice(0, at)).flatMap((a) => {
    const m = /^(--[a-z]+)=(.*)$/s.exec(a);
    return m ? [m[1]!, m[2]!] : [a];
  });
  return { own, args: at < 0 ? [] : argv.slice(at + 1) };
}

/** A mistake on the command line: the message, then the usage, on stderr; exit code 2. */
function usage(message: string, text: string): number {
  console.error(`${message}\n\n${text}`);
  return 2;
}

/** Runs `picomcp install`; returns the exit code. */
export function installCommand(argv: readonly string[]): number {
  const { own, args } = split(argv);
  if (own.includes("--help") || own.includes("-h")) {
    console.log(INSTALL_USAGE);
    return 0;
  }
  const positional: string[] = [];
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const options: { name?: string; url?: string; file?: string; force?: boolean; print?: boolean } = {};
  for (let i = 0; i < own.length; i++) {
    const arg = own[i]!;
    const value = () => {
      const v = own[++i];
      if (v === undefined || v === "") throw new Error(`${arg} takes a value`);
      return v;
    };
    try {
      if (arg === "--name") options.name = value();
      else if (arg === "--url") options.url = value();
      else if (arg === "--file") options.file = value();
      else if (arg === "--force") options.force = true;
      else if (arg === "--print") options.print = true;
      else if (arg === "--env") {
        const pair = value();
        const eq = pair.indexOf("=");
        if (eq <= 0) throw new Error(`--env takes NAME=value, not ${pair}`);
        env[pair.slice(0, eq)] = pair.slice(eq + 1);
      } else if (arg === "--header") {
        const header = value();
        const colon = header.indexOf(":");
        if (colon <= 0 || !/^[!#$%&'*+.^_`|~\w-]+$/.test(header.slice(0, colon)))
          throw new Error(`--header takes "Name: value", not ${header}`);
        headers[header.slice(0, colon)] = header.slice(colon + 1).trim();
      } else if (!arg.startsWith("-")) positional.push(arg);
      else throw new Error(`Unexpected argument: ${arg}`);
    } catch (error) {
      return usage((error as Error).message, INSTALL_USAGE);
    }
  }
  const [client, entry, ...extra] = positional;
  if (client === undefined) return usage("picomcp install needs a client", INSTALL_USAGE);
  if (!(CLIENTS as readonly string[]).includes(client))
    return usage(`Unknown client: ${client} (one of ${CLIENTS.join(", ")})`, INSTALL_USAGE);
  if (extra.length > 0)
    return usage(`Unexpected argument: ${extra[0]} (arguments for the entry go after --)`, INSTALL_USAGE);
  if (entry === undefined && options.url === undefined)
    return usage("picomcp install needs the server's entry file or --url", INSTALL_USAGE);
  try {
    const done = install({
      client: client as Client,
      ...(entry === undefined ? {} : { entry }),
      ...options,
      env,
      headers,
      args,
    });
    const snippet = JSON.stringify({ [done.key]: { [done.name]: done.entry } }, null, 2);
    if (done.change === "printed") {
      console.log(snippet);
      console.error(`(picomcp install wrote nothing; without --print this goes into ${done.file})`);
    } else if (done.change === "unchanged")
      console.log(`${done.file} already has this "${done.name}": nothing to do`);
    else {
      console.log(`${done.change === "added" ? "Added" : "Replaced"} "${done.name}" in ${done.file}`);
      if (done.backup) console.log(`The file as it was: ${done.backup}`);
      console.log(`Restart ${client === "mcp-json" ? "the client" : client} to load it.`);
    }
    return 0;
  } catch (error) {
    console.error(`picomcp install: ${(error as Error).message}`);
    return 1;
  }
}

/** Runs `picomcp bundle`; returns the exit code. */
export async function bundleCommand(argv: readonly string[]): Promise<number> {
  const { own, args } = split(argv);
  if (own.includes("--help") || own.includes("-h")) {
    console.log(BUNDLE_USAGE);
    return 0;
  }
  let entry: string | undefined;
  let out: string | undefined;
  const env: string[] = [];
  const include: string[] = [];
  for (let i = 0; i < own.length; i++) {
    const arg = own[i]!;
    const value = own[i + 1];
    if ((arg === "--out" || arg === "--env" || arg === "--include") && (value === undefined || value === ""))
      return usage(`${arg} takes a value`, BUNDLE_USAGE);
    if (arg === "--out") out = own[++i];
    else if (arg === "--env") env.push(own[++i]!);
    else if (arg === "--include") include.push(own[++i]!);
    else if (entry === undefined && !arg.startsWith("-")) entry = arg;
    else return usage(`Unexpected argument: ${arg}`, BUNDLE_USAGE);
  }
  if (entry === undefined) return usage("picomcp bundle needs the server's entry file", BUNDLE_USAGE);
  try {
    const done = await bundle({ entry, env, include, args, ...(out === undefined ? {} : { out }) });
    const tools = (done.manifest.tools as unknown[] | undefined)?.length ?? 0;
    const prompts = (done.manifest.prompts as unknown[] | undefined)?.length ?? 0;
    console.log(done.file);
    for (const warning of done.warnings) console.error(`picomcp bundle: warning: ${warning}`);
    console.error(
      `picomcp bundle: ${done.files} files, ${(done.bytes / 1024).toFixed(1)} KiB; ${tools} tools, ${prompts} prompts in the manifest`,
    );
    return 0;
  } catch (error) {
    console.error(`picomcp bundle: ${(error as Error).message}`);
    return 1;
  }
}
