/**
 * The files under one allowed root, as resources: `node build/examples/filesystem.js <root>` (stdio).
 * Every file is listed in `resources/list`, any file is read through `file:///{+path}`, paths that leave
 * the root (`..`, absolute parts, symlinks pointing outside) are refused, and a watcher pushes
 * `notifications/resources/updated` to subscribers and `notifications/resources/list_changed` when files
 * come and go. Clients that only call tools get the same data
 * through `list_resources` and `read_resource`.
 */
import { realpathSync, watch } from "node:fs";
import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { McpError, McpServer, PathEscapeError, safeJoin } from "picomcp";
import { serveStdio } from "picomcp/stdio";

const root = realpathSync(process.argv[2] ?? process.cwd());
const rootUrl = pathToFileURL(root).href; // file:///srv/docs
/** Largest file read whole; bigger ones are refused rather than flooding the model's context. */
const MAX_BYTES = 10 * 1024 * 1024;
/** Most files listed in `resources/list`. */
const MAX_LISTED = 1000;

const MIME: { readonly [ext: string]: string } = {
  ".md": "text/markdown",
  ".txt": "text/plain",
  ".csv": "text/csv",
  ".html": "text/html",
  ".css": "text/css",
  ".js": "text/javascript",
  ".ts": "text/x-typescript",
  ".json": "application/json",
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".xml": "application/xml",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".pdf": "application/pdf",
};
const mimeOf = (file: string) => MIME[extname(file).toLowerCase()] ?? "application/octet-stream";
const isText = (mime: string) => mime.startsWith("text/") || /json|yaml|xml|svg/.test(mime);
const uriOf = (file: string) => pathToFileURL(file).href;

/** The real path of a file under the root, or undefined: a symlink may not lead out of it. */
async function inside(file: string): Promise<string | undefined> {
  try {
    const real = await realpath(file);
    return real === root || real.startsWith(root + sep) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The file a `{+path}` value names (the absolute path without its leading slash), checked. */
async function resolveFile(path: string): Promise<string | undefined> {
  const absolute = fileURLToPath(`file:///${path.split("/").map(encodeURIComponent).join("/")}`);
  const rel = relative(root, absolute);
  try {
    // a value outside the root gives a relative path with `..`, which safeJoin refuses
    return await inside(safeJoin(root, rel));
  } catch (error) {
    if (error instanceof PathEscapeError) return undefined;
    throw error;
  }
}

/** Every file under the root that stays inside it, depth first, at most `MAX_LISTED`. */
async function walk(dir: string, out: string[] = []): Promise<string[]> {
  const names = (await readdir(dir)).sort();
  for (const name of names) {
    if (out.length >= MAX_LISTED) break;
    const file = join(dir, name);
    const real = await inside(file);
    if (!real) continue;
    const info = await stat(real);
    if (info.isDirectory()) {
      // a symlinked directory would be listed twice (or forever): follow only real ones
      if (!(await lstat(file)).isSymbolicLink()) await walk(file, out);
    } else if (info.isFile()) out.push(file);
  }
  return out;
}

const server = new McpServer({
  name: "filesystem",
  version: "1.0.0",
  instructions: `The files under ${root}, read-only.`,
});

server.resource("file:///{+path}", {
  name: "file",
  description: `A file under ${root}`,
  list: async () =>
    (await walk(root)).map((file) => ({
      uri: uriOf(file),
      name: relative(root, file).split(sep).join("/"),
      mimeType: mimeOf(file),
    })),
  complete: {
    path: async (value) => {
      const prefix = rootUrl.slice("file:///".length);
      return (await walk(root))
        .map((file) => uriOf(file).slice("file:///".length))
        .map(decodeURIComponent)
        .filter((p) => p.startsWith(value) || p.startsWith(`${prefix}/${value}`));
    },
  },
  read: async ({ path }, ctx) => {
    const file = await resolveFile(path);
    const info = file === undefined ? undefined : await stat(file);
    if (!file || !info?.isFile()) throw new McpError(-32002, `Resource not found: ${ctx.uri}`);
    if (info.size > MAX_BYTES)
      throw new McpError(-32603, `${ctx.uri} is ${info.size} bytes, more than ${MAX_BYTES} read at once`);
    const mimeType = mimeOf(file);
    const bytes = await readFile(file);
    return isText(mimeType)
      ? [{ uri: ctx.uri, mimeType, text: bytes.toString("utf8") }]
      : [{ uri: ctx.uri, mimeType, blob: bytes.toString("base64") }];
  },
});

server.resourcesAsTools();

// fs.watch names the file relative to the root, often twice for one save: one notice per burst. A
// "rename" is a file that appeared, went or moved: the list changed too
const pending = new Map<string, ReturnType<typeof setTimeout>>();
let listed: ReturnType<typeof setTimeout> | undefined;
watch(root, { recursive: true }, (event, name) => {
  if (!name) return;
  const uri = uriOf(join(root, name.toString()));
  clearTimeout(pending.get(uri));
  pending.set(
    uri,
    setTimeout(() => {
      pending.delete(uri);
      server.resourceUpdated(uri);
    }, 30),
  );
  if (event === "rename") {
    clearTimeout(listed);
    listed = setTimeout(() => server.resourceListChanged(), 30);
  }
});

serveStdio(server);
console.error(`filesystem: serving ${root} over stdio`);
