/**
 * A client's JSON configuration file, changed safely: read it (JSON, or JSONC edited in place so that its
 * comments stay), put one server in it, keep a backup of the old file and swap the new one in whole (a
 * temporary file beside it, then a rename).
 */
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { setJsonc, stripJsonc } from "./jsonc.js";

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
  /** The file's text, and whether it has comments or trailing commas (then it is edited, not rewritten). */
  text: string;
  jsonc: boolean;
  indent: string;
  /** Its line ending (its first line's), and whether it starts with a byte order mark: both kept. */
  eol: "\n" | "\r\n";
  bom: boolean;
  mode: number;
  /** The file's bytes as read (undefined when it did not exist): it is written over only while it still holds them. */
  raw?: Buffer;
}

/** The file changed between the read and the write (another program wrote it): read it again. */
export class ConfigChangedError extends ConfigFileError {
  override name = "ConfigChangedError";
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Reads `file` (a missing or empty one is an empty object); refuses what is not a JSON(C) object. */
export function readConfig(file: string): ConfigFile {
  const empty = { data: {}, text: "", jsonc: false, indent: "  ", eol: "\n" as const, bom: false };
  if (!existsSync(file)) return { path: file, exists: false, ...empty, mode: 0o600 };
  const path = realpathSync(file);
  const raw = readFileSync(path);
  const whole = raw.toString("utf8");
  const bom = whole.startsWith("\uFEFF");
  const text = bom ? whole.slice(1) : whole;
  const mode = statSync(path).mode & 0o777;
  if (text.trim() === "") return { path, exists: true, ...empty, bom, mode, raw };
  const nl = text.indexOf("\n");
  const eol = nl > 0 && text[nl - 1] === "\r" ? "\r\n" : "\n";
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? "  ";
  let data: unknown;
  let jsonc = false;
  try {
    data = JSON.parse(text);
  } catch (error) {
    try {
      data = JSON.parse(stripJsonc(text));
      jsonc = true;
    } catch {
      throw new ConfigFileError(`${file} is not valid JSON (${(error as Error).message}): fix it first`);
    }
  }
  if (!isObject(data)) throw new ConfigFileError(`${file} does not hold a JSON object: fix it first`);
  return { path, exists: true, data, text, jsonc, indent, eol, bom, mode, raw };
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
  put: { key: string; name: string; entry: Record<string, unknown>; force: boolean },
): { data: Record<string, unknown>; change: Change } {
  const { key, name, entry, force } = put;
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

/** How many backups of one file are kept: the newest, once a change is written. */
export const BACKUPS_KEPT = 5;

/** The backups of `path` this module made, oldest first (by their time, then their number). */
function backupsOf(path: string): { path: string; stamp: string; n: number }[] {
  const prefix = `${basename(path)}.bak-`;
  const found: { path: string; stamp: string; n: number }[] = [];
  for (const name of readdirSync(dirname(path))) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d{8}T\d{6}Z)(?:-(\d+))?$/.exec(name.slice(prefix.length));
    if (m) found.push({ path: join(dirname(path), name), stamp: m[1]!, n: Number(m[2] ?? 1) });
  }
  return found.sort((a, b) => (a.stamp < b.stamp ? -1 : a.stamp > b.stamp ? 1 : a.n - b.n));
}

/**
 * A name for the backup of `path` that no file has, after every backup made before it:
 * `<path>.bak-<UTC time>`, numbered `-2`, `-3`, … past the highest number of that second.
 */
function backupName(path: string, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const same = backupsOf(path).filter((b) => b.stamp === stamp);
  const base = `${path}.bak-${stamp}`;
  if (same.length === 0 && !existsSync(base)) return base;
  let n = Math.max(1, ...same.map((b) => b.n)) + 1;
  while (existsSync(`${base}-${n}`)) n++;
  return `${base}-${n}`;
}

/**
 * Removes all but the newest {@link BACKUPS_KEPT} backups of `path`, never `made` (the one just made,
 * whatever times a wrong clock gave the others); one that cannot be removed stays.
 */
function pruneBackups(path: string, made: string): void {
  try {
    const all = backupsOf(path).filter((b) => basename(b.path) !== basename(made));
    const old = all.slice(0, Math.max(0, all.length - (BACKUPS_KEPT - 1)));
    for (const b of old) rmSync(b.path, { force: true });
  } catch {
    // the change is written: a backup left behind is only clutter
  }
}

/**
 * The new text of the file: `data` as JSON in the file's indentation and line ending; or, for a JSONC file,
 * its text with the entry set in place, checked to read back as `data` (comments kept, or nothing
 * written). A byte order mark the file starts with stays.
 */
export function render(
  file: string,
  config: ConfigFile,
  data: Record<string, unknown>,
  path: readonly string[],
  entry: unknown,
): string {
  const bom = config.bom ? "\uFEFF" : "";
  // JSON.stringify escapes the line breaks inside strings: each "\n" it writes is between two lines
  if (!config.jsonc)
    return `${bom}${JSON.stringify(data, null, config.indent).replaceAll("\n", config.eol)}${config.eol}`;
  let text: string;
  let back: unknown;
  try {
    text = setJsonc(config.text, path, entry, config.indent, config.eol);
    back = JSON.parse(stripJsonc(text));
  } catch (error) {
    throw new ConfigFileError(
      `${file} has comments or trailing commas that picomcp cannot keep: ${(error as Error).message}`,
    );
  }
  if (!same(back, data))
    throw new ConfigFileError(
      `${file} has comments or trailing commas that picomcp cannot keep around the entry`,
    );
  return `${bom}${text}`;
}

/** Whether the file at `path` still holds what `config` read (absent when it was absent). */
function unchanged(config: ConfigFile): boolean {
  if (!existsSync(config.path)) return config.raw === undefined;
  return config.raw !== undefined && readFileSync(config.path).equals(config.raw);
}

/**
 * Writes `text` to `config.path` whole: a temporary file in the same folder, flushed; then, only if the
 * file still holds the bytes `config` read (else {@link ConfigChangedError}, nothing written), a copy of
 * those bytes (returned) and the rename over the old file: a crash leaves the old file or the new, never
 * half. Then only the newest {@link BACKUPS_KEPT} backups of the file stay. `beforeCheck` runs just
 * before that check (tests change the file there).
 */
export function writeConfig(
  config: ConfigFile,
  text: string,
  options: { now?: Date; beforeCheck?: () => void } = {},
): string | undefined {
  const { path } = config;
  mkdirSync(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  let backup: string | undefined;
  try {
    const fd = openSync(temp, "wx", config.mode);
    try {
      fchmodSync(fd, config.mode); // the mode as it was, not as the umask leaves it
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    options.beforeCheck?.();
    if (!unchanged(config)) throw new ConfigChangedError(`${path} changed while picomcp was writing it`);
    if (config.raw !== undefined) {
      backup = backupName(path, options.now ?? new Date());
      writeFileSync(backup, config.raw, { mode: config.mode, flag: "wx" });
      chmodSync(backup, config.mode);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  if (backup !== undefined) pruneBackups(path, backup);
  return backup;
}
