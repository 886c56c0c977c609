/**
 * Path safety for decoded URI variables: pure string code, no `node:path`, the same on every OS.
 *
 * Checks run on values decoded exactly once (what `match` returns). `%2e%2e%2f` decodes to `../` and is
 * caught; `%252e%252e` decodes to the literal name `%2e%2e`, which no file system reads as `..`, so it is
 * safe, as long as the handler does not decode it a second time (it must not).
 *
 * Both `/` and `\` separate segments, so a value that is safe here is safe on Windows too. A segment made
 * only of dots and spaces other than `.` and `..` (`...`, `.. `) counts as unsafe, because Windows trims
 * trailing dots and spaces from names.
 */

/** Thrown by {@link safeJoin} when a part would leave its base or is not a relative path. */
export class PathEscapeError extends Error {
  /** The base directory. */
  readonly base: string;
  /** The part that was rejected. */
  readonly part: string;

  constructor(base: string, part: string, reason: string) {
    super(`Path ${JSON.stringify(part)} ${reason} (base ${JSON.stringify(base)})`);
    this.name = "PathEscapeError";
    this.base = base;
    this.part = part;
  }
}

/**
 * True when a decoded value must not reach a file system path: a `..` that climbs above where it starts
 * (`../a`, `a/../../b`, `..`; `a/../b` is fine), an absolute path (`/etc/passwd`, `\\server\share`), a
 * drive letter (`C:`, `c:\`), an ambiguous dots-and-spaces segment, or a NUL byte. For an exploded
 * variable each element is checked (so a `..` element is flagged, since a handler may use elements one
 * by one), and so is the path they form together (`["", "etc"]` is `/etc`); for a record (an exploded
 * query variable), each value (a repeated key's values as a list).
 */
export function isUnsafePathValue(
  value: string | readonly string[] | { readonly [key: string]: string | readonly string[] },
): boolean {
  if (typeof value === "string") return unsafe(value);
  if (!isList(value)) {
    for (const k in value) {
      const v = value[k]!;
      // a repeated query key's values are values, not segments of one path: each is checked alone
      if (typeof v === "string" ? unsafe(v) : v.some(unsafe)) return true;
    }
    return false;
  }
  for (const v of value) if (unsafe(v)) return true;
  return value.length > 1 && unsafe(value.join("/"));
}

const isList = Array.isArray as (v: unknown) => v is readonly string[];

function unsafe(v: string): boolean {
  if (v.length === 0) return false;
  if (v.includes("\0") || isSeparator(v.charCodeAt(0)) || hasDrive(v)) return true;
  let depth = 0;
  let s = 0;
  for (let i = 0; i <= v.length; i++) {
    if (i < v.length && !isSeparator(v.charCodeAt(i))) continue;
    const kind = segmentKind(v, s, i);
    if (kind === AMBIGUOUS) return true;
    if (kind === PARENT && --depth < 0) return true;
    if (kind === NAME) depth++;
    s = i + 1;
  }
  return false;
}

/**
 * Joins `parts` under `base` with `/`, resolving `.` and `..`; throws {@link PathEscapeError} if the result
 * would leave `base`, or a part is absolute, has a drive letter, an ambiguous dots-and-spaces segment or a
 * NUL byte. `base` is trusted: it keeps its root (`/`, `//` for UNC, `C:/`) and its own `..` segments, and
 * its `\` become `/` (which Windows accepts).
 *
 * It checks the string, never the file system: a symlink under `base` that leads out of it (to a file or
 * a directory, at any depth) is followed by whoever opens the result, and a name checked here may be
 * swapped for such a symlink before it is opened. To serve the files of a directory, use
 * `directoryResources` from `picomcp/fs`, which opens each file first and then checks where the opened
 * file really is (docs/files.md).
 * @example
 * safeJoin("/srv/docs", "guides/../intro.md"); // "/srv/docs/intro.md"
 * safeJoin("/srv/docs", "../etc/passwd"); // throws PathEscapeError
 */
export function safeJoin(base: string, ...parts: string[]): string {
  let root = "";
  let rest = base;
  if (hasDrive(base)) {
    root = isSeparator(base.charCodeAt(2)) ? base.slice(0, 2) + "/" : base.slice(0, 2);
    rest = base.slice(root.length);
  } else if (isSeparator(base.charCodeAt(0))) {
    root = isSeparator(base.charCodeAt(1)) ? "//" : "/";
    rest = base.slice(root.length);
  }
  const segments: string[] = [];
  for (const seg of rest.split(/[\\/]/)) {
    if (seg === "" || seg === ".") continue;
    if (seg !== "..") segments.push(seg);
    else if (segments.length > 0 && segments[segments.length - 1] !== "..") segments.pop();
    else if (root === "") segments.push(seg);
  }
  const floor = segments.length;
  for (const part of parts) {
    if (part.includes("\0")) throw new PathEscapeError(base, part, "contains a NUL byte");
    if (isSeparator(part.charCodeAt(0)) || hasDrive(part))
      throw new PathEscapeError(base, part, "is absolute");
    let s = 0;
    for (let i = 0; i <= part.length; i++) {
      if (i < part.length && !isSeparator(part.charCodeAt(i))) continue;
      const kind = segmentKind(part, s, i);
      if (kind === AMBIGUOUS) throw new PathEscapeError(base, part, "has a segment of only dots and spaces");
      if (kind === PARENT) {
        if (segments.length === floor) throw new PathEscapeError(base, part, "leaves its base");
        segments.pop();
      } else if (kind === NAME) segments.push(part.slice(s, i));
      s = i + 1;
    }
  }
  const joined = root + segments.join("/");
  return joined === "" ? "." : joined;
}

const SKIP = 0; // "" or "."
const NAME = 1;
const PARENT = 2;
const AMBIGUOUS = 3;

function segmentKind(v: string, s: number, e: number): number {
  if (e === s) return SKIP;
  let dots = 0;
  for (let i = s; i < e; i++) {
    const c = v.charCodeAt(i);
    if (c === 46) dots++;
    else if (c !== 32) return NAME;
  }
  if (dots === 0) return NAME; // spaces only: an odd name, but not a dot segment
  if (e - s === 1) return SKIP;
  if (e - s === 2 && dots === 2) return PARENT;
  return AMBIGUOUS;
}

function isSeparator(c: number): boolean {
  return c === 47 || c === 92;
}

function hasDrive(v: string): boolean {
  const c = v.charCodeAt(0) | 32;
  return v.length >= 2 && c >= 97 && c <= 122 && v.charCodeAt(1) === 58;
}
