/**
 * Which names picomcp/fs serves, and what a file's name and bytes say of its type: pure string code, no
 * I/O. A path below the root is its names joined by `/`; a name that is hard to see or that a file
 * system reads as something else (`..`, a separator, a drive, a device, a NUL) is never served.
 */

/** Longest name of one file or directory, in UTF-8 bytes (NAME_MAX on Linux and macOS, 255 UTF-16 units on Windows). */
export const MAX_NAME_BYTES = 255;
/** Longest path below the root, in UTF-8 bytes (PATH_MAX on Linux is 4096, the root included). */
export const MAX_PATH_BYTES = 4096;

const encoder = new TextEncoder();

/** Windows device names: `CON`, `NUL.txt`, `com1.log` open the device, wherever they are. */
const DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\.|$)/i;
/** Characters Windows refuses in a name, or reads as a drive, a stream or a wildcard. */
const WINDOWS_CHARS = /[<>:"|?*]/;

/**
 * Why a name of a file or directory is not served, or undefined when it may be: empty, `.` or `..`, only
 * dots and spaces, a `/` or `\`, a NUL or another control character, U+FFFD (a name that was not valid
 * UTF-8 on disk, which cannot be opened again by the string Node gives), longer than 255 bytes; on
 * Windows also `:` (drives and streams), `<>"|?*`, a trailing dot or space (Windows drops them) and
 * device names.
 */
export function nameIssue(name: string, windows: boolean): string | undefined {
  if (name === "") return "is empty";
  if (/^[. ]+$/.test(name)) return "is only dots and spaces";
  if (/[\u0000-\u001f\u007f]/.test(name)) return "holds a control character";
  if (name.includes("/") || name.includes("\\")) return "holds a path separator";
  if (name.includes("\uFFFD")) return "is not valid UTF-8";
  if (encoder.encode(name).length > MAX_NAME_BYTES) return `is longer than ${MAX_NAME_BYTES} bytes`;
  if (windows) {
    if (WINDOWS_CHARS.test(name)) return "holds a character Windows reads as a drive, stream or wildcard";
    if (/[. ]$/.test(name)) return "ends with a dot or a space, which Windows drops";
    if (DEVICE.test(name)) return "is a Windows device name";
  }
  return undefined;
}

/**
 * The names of a path below the root (`sub/notes.md`), or why it is refused: it must be relative, written
 * one way only (no empty, `.` or `..` segment, `/` between names and never `\`), at most 4096 bytes, and
 * each name must pass {@link nameIssue}.
 */
export function pathNames(path: string, windows: boolean): readonly string[] | string {
  if (path === "") return "is empty";
  if (encoder.encode(path).length > MAX_PATH_BYTES) return `is longer than ${MAX_PATH_BYTES} bytes`;
  const names = path.split("/");
  for (const name of names) {
    const issue = nameIssue(name, windows);
    if (issue !== undefined) return `has a name that ${issue}`;
  }
  return names;
}

/** Whether a path has a name that starts with a dot (a dotfile, or a file under a dot-directory). */
export function isHidden(path: string): boolean {
  return path.startsWith(".") || path.includes("/.");
}

/** The built-in MIME types, by extension (lower case, without the dot). */
export const MIME_TYPES: { readonly [extension: string]: string } = {
  md: "text/markdown",
  markdown: "text/markdown",
  txt: "text/plain",
  log: "text/plain",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  js: "text/javascript",
  mjs: "text/javascript",
  cjs: "text/javascript",
  ts: "text/x-typescript",
  py: "text/x-python",
  sh: "text/x-shellscript",
  json: "application/json",
  jsonl: "application/jsonl",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  xml: "application/xml",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  ico: "image/vnd.microsoft.icon",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  wasm: "application/wasm",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  mp4: "video/mp4",
};

/** The MIME type a table gives a path's extension (`a/b.MD` → `md`), or undefined. */
export function mimeTypeOf(
  path: string,
  table: { readonly [extension: string]: string },
): string | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  // a dotfile's only dot starts its name, not an extension
  if (dot <= 0) return undefined;
  const type = table[name.slice(dot + 1).toLowerCase()];
  return typeof type === "string" ? type : undefined;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The bytes as text when they are valid UTF-8 without a NUL (a byte-order mark kept), else undefined. */
export function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
