/**
 * `picomcp install <client> <entry>`: the entry a client documents for a server (started by an absolute
 * node with the entry's absolute path, or reached at a URL), printed, or put into the client's file.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, extname, join, resolve } from "node:path";
import {
  type Client,
  configPath,
  entryFor,
  type Place,
  type ServerSpec,
  serversKey,
  unsupported,
} from "./clients.js";
import {
  type Change,
  ConfigChangedError,
  ConfigFileError,
  putServer,
  readConfig,
  render,
  writeConfig,
} from "./config-file.js";
import { nodeArgs } from "./runner.js";

/** What to install where. */
export interface InstallOptions {
  client: Client;
  /** The server's entry file (a built `.js`, or a `.ts` where this Node strips types); or give `url`. */
  entry?: string;
  /** A remote server's Streamable HTTP address, instead of an entry. */
  url?: string;
  /** The server's name in the client. Default: the entry's package name (without its scope), or file name. */
  name?: string;
  /** HTTP headers the client sends to a remote server (`url` only). */
  headers?: { readonly [name: string]: string };
  /** Environment variables the client sets for the server (stdio only). */
  env?: { readonly [name: string]: string };
  /** Arguments after the entry (stdio only). */
  args?: readonly string[];
  /** Replace another server of the same name. */
  force?: boolean;
  /** Write nothing: only say what the entry is. */
  print?: boolean;
  /** The configuration file to change, instead of the client's own. */
  file?: string;
  /** The platform, home and environment the file's path is computed for. Default: this process's. */
  place?: Partial<Place>;
  /** The node the client starts, and its version. Default: the one running this. */
  node?: { execPath: string; version: string };
  /** Runs between writing the new file beside the old one and checking the old one is as read (for tests). */
  beforeCheck?: () => void;
}

/** How many times the file is read, changed and written before a file that keeps changing is refused. */
export const WRITE_ATTEMPTS = 5;

/** What {@link install} did. */
export interface Installed {
  client: Client;
  /** The configuration file (to be) changed. */
  file: string;
  name: string;
  /** The key under which the client keeps its servers. */
  key: string;
  entry: Record<string, unknown>;
  /** `printed` with `print`; otherwise what the file went through. */
  change: Change | "printed";
  /** The copy of the file before the change, when there was one. */
  backup?: string;
}

/** The name of the nearest package.json above `file`, without its scope. */
function packageName(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        const name = JSON.parse(readFileSync(pkg, "utf8")).name;
        return typeof name === "string" && name !== "" ? name.replace(/^@[^/]+\//, "") : undefined;
      } catch {
        return undefined;
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The server `options` describe, and its default name. */
function specOf(options: InstallOptions): { spec: ServerSpec; name: string } {
  if (options.url !== undefined) {
    if (options.entry !== undefined) throw new ConfigFileError("give an entry file or --url, not both");
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      throw new ConfigFileError(`--url ${options.url} is not a URL`);
    }
    if (url.protocol !== "https:" && url.protocol !== "http:")
      throw new ConfigFileError(`--url takes an http(s) address, not ${url.protocol}`);
    if (options.env && Object.keys(options.env).length > 0)
      throw new ConfigFileError("--env is for a server the client starts; a remote server has its own");
    if (options.args && options.args.length > 0)
      throw new ConfigFileError("arguments after -- are for a server the client starts, not a --url");
    return { spec: { url: url.href, headers: { ...options.headers } }, name: url.hostname };
  }
  if (options.entry === undefined)
    throw new ConfigFileError("picomcp install needs the server's entry file or --url");
  if (options.headers && Object.keys(options.headers).length > 0)
    throw new ConfigFileError(
      "--header is for a remote server (--url); a server the client starts takes --env",
    );
  const entry = resolve(options.entry);
  if (!existsSync(entry) || !statSync(entry).isFile())
    throw new ConfigFileError(`${options.entry} is not a file`);
  const node = options.node ?? { execPath: process.execPath, version: process.versions.node };
  let args: string[];
  try {
    args = nodeArgs(entry, node.version);
  } catch (error) {
    throw new ConfigFileError((error as Error).message);
  }
  return {
    spec: { command: node.execPath, args: [...args, ...(options.args ?? [])], env: { ...options.env } },
    name: packageName(entry) ?? basename(entry, extname(entry)),
  };
}

/** Prints or writes `options.client`'s entry for the server; throws a {@link ConfigFileError} that says why not. */
export function install(options: InstallOptions): Installed {
  const { spec, name: fallback } = specOf(options);
  const name = options.name ?? fallback;
  if (!/^[\w.-]+$/.test(name))
    throw new ConfigFileError(`"${name}" cannot name a server: use letters, digits, "_", "-" and "."`);
  const why = unsupported(options.client, spec);
  if (why !== undefined) throw new ConfigFileError(why);
  const place: Place = {
    platform: options.place?.platform ?? process.platform,
    home: options.place?.home ?? homedir(),
    env: options.place?.env ?? process.env,
    cwd: options.place?.cwd ?? process.cwd(),
  };
  const file = options.file === undefined ? configPath(options.client, place) : resolve(options.file);
  const key = serversKey(options.client);
  const entry = entryFor(options.client, spec);
  const result = { client: options.client, file, name, key, entry };
  if (options.print) return { ...result, change: "printed" };
  // what to add by hand comes with a refusal to read or edit the file, which stays as it was
  const byHand = (error: unknown) =>
    new ConfigFileError(
      `${(error as Error).message}. Add this by hand:\n${JSON.stringify({ [key]: { [name]: entry } }, null, 2)}`,
    );
  // read, change, write; again from the file as it is now when another program wrote it meanwhile
  for (let attempt = 1; ; attempt++) {
    let config: ReturnType<typeof readConfig>;
    try {
      config = readConfig(file);
    } catch (error) {
      throw byHand(error);
    }
    const { data, change } = putServer(file, config, {
      key,
      name,
      entry,
      force: options.force ?? false,
    });
    if (change === "unchanged") return { ...result, change };
    let text: string;
    try {
      text = render(file, config, data, [key, name], entry);
    } catch (error) {
      throw byHand(error);
    }
    try {
      const backup = writeConfig(config, text, {
        ...(options.beforeCheck ? { beforeCheck: options.beforeCheck } : {}),
      });
      return { ...result, change, ...(backup === undefined ? {} : { backup }) };
    } catch (error) {
      if (!(error instanceof ConfigChangedError)) throw error;
      if (attempt >= WRITE_ATTEMPTS)
        throw byHand(
          new ConfigFileError(
            `${file} changed each of the ${attempt} times picomcp wrote it (a client running, rewriting its file?): nothing written; close the client and run this again`,
          ),
        );
    }
  }
}
