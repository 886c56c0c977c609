/**
 * A client's JSON configuration file, changed safely: read it (strict JSON; a file with comments or
 * trailing commas is refused, never rewritten without them), put one server in it, keep a backup of the
 * old file and swap the new one in whole (a temporary file beside it, then a rename).
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

/** A configuration file that `picomcp install` will not change; its message says why and what to do. */
export class ConfigFileError extends Error {
  override name = "ConfigFileError";
}

/** A configuration file as read: its object, and how it was written (to write it back alike). */
export interface ConfigFile {
  /** The file written: the target of a symbolic link, not the link. */
  path: string;
  exists: boolean;
  data: Record<string, unknown>;
  indent: string | number;
  mode: number;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `text` with its comments and trailing commas taken out (strings kept as they are): JSONC to JSON. */
export function stripJsonc(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
      out += " ";
    } else out += c;
  }
  return out.replace(/,(\s*[}\]])/g, "$1");
}

/** Reads `file` (a missing or empty one is an empty object); refuses what it cannot rewrite faithfully. */
export function readConfig(file: string): ConfigFile {
  if (!existsSync(file)) return { path: file, exists: false, data: {}, indent: 2, mode: 0o600 };
  const path = realpathSync(file);
  const text = readFileSync(path, "utf8").replace(/^\uFEFF/, "");
  const mode = statSync(path).mode & 0o777;
  const indent = /^\{\s*\n(\s+)"/.exec(text)?.[1] ?? 2;
  if (text.trim() === "") return { path, exists: true, data: {}, indent, mode };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    let jsonc = false;
    try {
      JSON.parse(stripJsonc(text));
      jsonc = true;
    } catch {}
    if (jsonc)
      throw new ConfigFileError(
        `${file} has comments or trailing commas (JSONC): picomcp does not rewrite it, which would lose them`,
      );
    throw new ConfigFileError(`${file} is not valid JSON (${(error as Error).message}): fix it first`);
  }
  if (!isObject(data)) throw new ConfigFileError(`${file} does not hold a JSON object: fix it first`);
  return { path, exists: true, data, indent, mode };
}

/** Whether two JSON values are the same value. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (!isObject(a) || !isObject(b) || Array.isArray(a) || Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
}

/** What an entry runs or reaches, for a message: never its env, which may hold secrets. */
function describe(entry: unknown): string {
  if (!isObject(entry)) return JSON.stringify(entry);
  if (typeof entry.url === "string") return entry.url;
  const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
  return [String(entry.command), ...args].join(" ");
}

/** What putting a server into a file does. */
export type Change = "added" | "replaced" | "unchanged";

/**
 * `config.data` with `entry` as the server `name` under `key`, the rest of the file as it was. Another
 * entry of that name is replaced only with `force`; the same entry again is `unchanged`.
 */
export function putServer(
  file: string,
  config: ConfigFile,
  key: string,
  name: string,
  entry: Record<string, unknown>,
  force: boolean,
): { data: Record<string, unknown>; change: Change } {
  const servers = config.data[key] ?? {};
  if (!isObject(servers))
    throw new ConfigFileError(`${file}: "${key}" is not an object of servers by name: fix it first`);
  const old = servers[name];
  if (old !== undefined && same(old, entry)) return { data: config.data, change: "unchanged" };
  if (old !== undefined && !force)
    throw new ConfigFileError(
      `${file} already has a server named "${name}" (${describe(old)}): pass --force to replace it, or --name to install under another name`,
    );
  // the entry keeps its place among the others when replaced; a new one goes last
  const next = { ...config.data, [key]: { ...servers, [name]: entry } };
  return { data: next, change: old === undefined ? "added" : "replaced" };
}

/** A name for the backup of `path` that no file has: `<path>.bak-<UTC time>`. */
function backupName(path: string, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  let name = `${path}.bak-${stamp}`;
  for (let n = 2; existsSync(name); n++) name = `${path}.bak-${stamp}-${n}`;
  return name;
}

/**
 * Writes `data` to `config.path` whole: a copy of the old file first (returned), then a temporary file
 * in the same folder, flushed, renamed over the old one: a crash leaves the old file or the new, never half.
 */
export function writeConfig(
  config: ConfigFile,
  data: Record<string, unknown>,
  now = new Date(),
): string | undefined {
  const { path } = config;
  mkdirSync(dirname(path), { recursive: true });
  let backup: string | undefined;
  if (config.exists) {
    backup = backupName(path, now);
    copyFileSync(path, backup);
  }
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const fd = openSync(temp, "wx", config.mode);
    try {
      writeSync(fd, `${JSON.stringify(data, null, config.indent)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return backup;
}
