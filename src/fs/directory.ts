/** A directory as resources: the template, the listing, reads through a checked handle, the watcher's notifications. */
import { realpathSync, statSync } from "node:fs";
import { dirname, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { ErrorCode, McpError } from "../errors.js";
import type { McpServer, Registration } from "../server.js";
import type { Resource, ResourceContents } from "../types.js";
import { asText, isHidden, MAX_PATH_BYTES, MIME_TYPES, mimeTypeOf, nameIssue, pathNames } from "./names.js";
import {
  type CheckedHandle,
  defaultStrategy,
  type OpenHooks,
  openChecked,
  type RealPathStrategy,
  type RootState,
  readBounded,
} from "./open.js";
import { absolute, type Listing, oneAtATime, walk } from "./walk.js";
import { type ChangeBatch, NATIVE_RECURSIVE, TreeWatcher } from "./watch.js";

/** A filter on paths below the root (`sub/notes.md`, `/`-separated): a pattern, or a function. */
export type PathFilter = RegExp | ((path: string) => boolean);

/** Options of `directoryResources`. */
export interface DirectoryOptions {
  /**
   * What every file's URI starts with; a file's URI is this prefix, then its path below the root with
   * each name percent-encoded (`sub/my%20notes.md`). The template is the prefix and `{+path}`.
   * Default: the root's `file://` URL and a `/` (`file:///srv/docs/`).
   */
  prefix?: string;
  /** The template's name in `resources/templates/list`. Default: the root's last name. */
  name?: string;
  /** The template's title. */
  title?: string;
  /** The template's description. Default: `Files under <root>`. */
  description?: string;
  /** Serve dotfiles and what is under dot-directories (`.env`, `.git/config`). Default: false. */
  hidden?: boolean;
  /** Serve only the files whose path passes (directories are walked whatever it says). Default: every file. */
  include?: PathFilter;
  /** Never serve a file whose path, or whose directory's path, passes (`/(^|\/)node_modules$/`). Default: none. */
  exclude?: PathFilter;
  /**
   * Follow a symlink under the root when its target is under the root too (it is listed under its own
   * name; a symlinked directory is read through but never walked). A symlink that leads out is never
   * followed. Default: false: no path with a symlink in it is served.
   */
  followSymlinks?: boolean;
  /** Largest file read, in bytes; a bigger one is refused with `-32602`. Default: 10 MiB. */
  maxBytes?: number;
  /** Most files in `resources/list` (the walk also stops after as many directories). Default: 10,000. */
  maxListed?: number;
  /** MIME types by extension (`{ log: "text/x-log" }`, without the dot), over the built-in table. */
  mimeTypes?: { readonly [extension: string]: string };
  /** Send `notifications/resources/updated` and `list_changed` when files change. Default: true. */
  watch?: boolean;
  /** Milliseconds over which a burst of file events becomes one batch of notifications. Default: 50. */
  debounce?: number;
  /** Hears what the watcher cannot do (out of inotify watches, a directory it cannot watch). Default: `console.error`. */
  onError?: (error: unknown) => void;
}

/** @internal Knobs for tests: how handles are checked, hooks between the steps, the kind of watcher. */
export interface DirectoryInternals {
  /** `proc` where Linux has it, else `stat`. */
  strategy?: RealPathStrategy;
  hooks?: OpenHooks;
  /** One recursive watcher, or one per directory. Default: recursive on macOS and Windows. */
  recursive?: boolean;
}

/** What `directoryResources` returns. */
export interface DirectoryResources extends Registration {
  /** The root's real path. */
  readonly root: string;
  /** The template registered: the prefix and `{+path}`. */
  readonly template: string;
  /** The URI of a path below the root (`sub/notes.md`). */
  uriOf(path: string): string;
  /** Settles once the first listing is made and the watcher is watching (at once without `watch`). */
  readonly ready: Promise<void>;
}

const KIB = 1024;
const encoder = new TextEncoder();

/** `directoryResources`, with the knobs tests use. */
export function createDirectoryResources(
  server: McpServer,
  root: string,
  options: DirectoryOptions,
  internal: DirectoryInternals = {},
): DirectoryResources {
  let real: string;
  try {
    // native, as the checks' realpath is: both spell the root the same way (case, drive letter)
    real = realpathSync.native(root);
  } catch (error) {
    throw new Error(
      `directoryResources: ${JSON.stringify(root)} cannot be served: ${(error as Error).message}`,
    );
  }
  if (!statSync(real).isDirectory())
    throw new Error(`directoryResources: ${JSON.stringify(root)} is not a directory`);
  if (dirname(real) === real)
    throw new Error(
      `directoryResources: ${JSON.stringify(root)} is the root of a file system; serve one directory, not everything`,
    );
  const state: RootState = {
    path: real,
    followSymlinks: options.followSymlinks ?? false,
    strategy: internal.strategy ?? defaultStrategy(real),
    hooks: internal.hooks,
  };
  const windows = process.platform === "win32";
  const maxBytes = options.maxBytes ?? 10 * KIB * KIB;
  const maxListed = options.maxListed ?? 10_000;
  const mimeTypes = { ...MIME_TYPES, ...lowerKeys(options.mimeTypes ?? {}) };
  const prefix = options.prefix ?? `${pathToFileURL(real).href}/`;
  const template = `${prefix}{+path}`;
  const include = toPredicate(options.include, true);
  const exclude = toPredicate(options.exclude, false);
  const hidden = options.hidden ?? false;

  const uriOf = (path: string) => prefix + path.split("/").map(encodeURIComponent).join("/");

  /** Whether the names of a path are served (before anything is opened). */
  const allowedDir = (path: string) =>
    nameIssue(path.slice(path.lastIndexOf("/") + 1), windows) === undefined &&
    (hidden || !isHidden(path)) &&
    !exclude(path);
  /** A file the walk lists: every name is checked above it already, so its own name and the whole length. */
  const allowedFile = (path: string) =>
    allowedDir(path) && include(path) && encoder.encode(path).length <= MAX_PATH_BYTES;
  /** Whether every directory above a path is served. */
  const allowedAbove = (path: string) => {
    for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1))
      if (exclude(path.slice(0, i))) return false;
    return true;
  };

  /** The path below the root of a real path under it, `/`-separated. */
  const below = (realPath: string) =>
    realPath
      .slice(real.length + 1)
      .split(sep)
      .join("/");
  /**
   * Opens a file by its path below the root and checks it, or undefined when it is not served: its
   * names and the filters first, then where the opened file really is, and the filters again on that
   * path (a symlink followed may not lead to a hidden or excluded file).
   */
  const openServed = async (path: string): Promise<CheckedHandle | undefined> => {
    if (typeof pathNames(path, windows) === "string" || !allowedFile(path) || !allowedAbove(path))
      return undefined;
    const checked = await openChecked(state, absolute(state, path), "file");
    if (!checked) return undefined;
    const realPath = below(checked.real);
    if (realPath === path || (allowedFile(realPath) && allowedAbove(realPath))) return checked;
    await checked.handle.close();
    return undefined;
  };
  /** Whether a path names a file served now. */
  const served = async (path: string) => {
    const checked = await openServed(path);
    await checked?.handle.close();
    return checked !== undefined;
  };
  /** A file's bytes, or undefined when it is not served; "large" when it holds more than `maxBytes`. */
  const read = async (path: string): Promise<Uint8Array | "large" | undefined> => {
    const checked = await openServed(path);
    if (!checked) return undefined;
    try {
      return (await readBounded(checked, maxBytes)) ?? "large";
    } finally {
      await checked.handle.close();
    }
  };

  const filter = { dir: allowedDir, file: allowedFile, link: served };
  const watching = options.watch ?? true;
  let listing: Promise<Listing> | undefined;
  /** The listing of the walk started last, once it is made: an older one's result is stale. */
  let latest: Listing | undefined;
  /**
   * Walks the root again, one walk at a time (a burst of changes starts one more walk, not a walk
   * each); while watching, the listing is kept until a name comes or goes.
   */
  const relist = oneAtATime((): Promise<Listing> => {
    const next = walk(state, filter, maxListed);
    next.then(
      (l) => {
        latest = l;
      },
      () => {},
    );
    if (!watching) return next;
    // a walk that failed is not kept: the next list walks again
    listing = next.catch((error) => {
      if (listing === kept) listing = undefined;
      throw error;
    });
    const kept = listing;
    return kept;
  });
  const list = (): Promise<Listing> => listing ?? relist();
  const shaped = new WeakMap<Listing, readonly Resource[]>();

  const registration = server.resource(template, {
    name: options.name ?? real.slice(real.lastIndexOf(sep) + 1),
    ...(options.title === undefined ? {} : { title: options.title }),
    description: options.description ?? `Files under ${real}`,
    pathSafety: true,
    list: async () => {
      // every page of resources/list asks again: one listing is shaped once
      const current = await list();
      let resources = shaped.get(current);
      if (resources === undefined) {
        resources = current.files.map((path) => {
          const mimeType = mimeTypeOf(path, mimeTypes);
          return { uri: uriOf(path), name: path, ...(mimeType ? { mimeType } : {}) };
        });
        shaped.set(current, resources);
      }
      return resources;
    },
    complete: {
      path: async (value) => {
        const values = (await list()).files.filter((p) => p.startsWith(value));
        return { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 };
      },
    },
    read: async (params, ctx): Promise<ResourceContents[]> => {
      // the template is built at run time, so its variables are typed loosely: {+path} is one string
      const path = typeof params.path === "string" ? params.path : "";
      const file = await read(path);
      if (file === undefined)
        throw new McpError(ErrorCode.ResourceNotFound, `Resource not found: ${ctx.uri}`, { uri: ctx.uri });
      if (file === "large")
        throw new McpError(
          ErrorCode.InvalidParams,
          `${ctx.uri} is larger than ${maxBytes} bytes, the most read at once`,
          {
            uri: ctx.uri,
            maxBytes,
          },
        );
      const text = asText(file);
      const mimeType =
        mimeTypeOf(path, mimeTypes) ?? (text === undefined ? "application/octet-stream" : "text/plain");
      return text === undefined
        ? [{ uri: ctx.uri, mimeType, blob: Buffer.from(file).toString("base64") }]
        : [{ uri: ctx.uri, mimeType, text }];
    },
  });

  let watcher: TreeWatcher | undefined;
  let removed = false;
  let ready: Promise<void> = Promise.resolve();
  if (watching) {
    const onBatch = async (batch: ChangeBatch) => {
      if (removed) return;
      const before = await list();
      let after = before;
      if (batch.renamed) {
        after = await relist();
        if (removed) return;
        // walks end in the order they started: only the newest listing says what to watch
        if (after === latest) watcher?.sync(after.dirs);
        if (!sameFiles(before.files, after.files)) server.resourceListChanged();
      }
      const known = new Set([...before.files, ...after.files]);
      for (const path of batch.paths) {
        // a file listed before or now (written, deleted, replaced); else one the template still serves
        if (known.has(path) || (await served(path))) server.resourceUpdated(uriOf(path));
      }
    };
    watcher = new TreeWatcher(real, {
      recursive: internal.recursive ?? NATIVE_RECURSIVE,
      debounce: options.debounce ?? 50,
      onBatch: (batch) => void onBatch(batch).catch(options.onError ?? console.error),
      onError: options.onError ?? console.error,
    });
    const started = watcher;
    ready = list().then((l) => started.sync(l.dirs), options.onError ?? console.error);
  }

  return {
    root: real,
    template,
    uriOf,
    ready,
    remove: () => {
      removed = true;
      watcher?.close();
      registration.remove();
    },
  };
}

function toPredicate(filter: PathFilter | undefined, fallback: boolean): (path: string) => boolean {
  if (filter === undefined) return () => fallback;
  if (typeof filter === "function") return filter;
  // a /g or /y pattern keeps lastIndex between tests: a copy without them gives the same answer each time
  const pattern = new RegExp(filter.source, filter.flags.replace(/[gy]/g, ""));
  return (path) => pattern.test(path);
}

function lowerKeys(table: { readonly [extension: string]: string }): { [extension: string]: string } {
  const out: { [extension: string]: string } = {};
  for (const key in table) out[key.replace(/^\./, "").toLowerCase()] = table[key]!;
  return out;
}

function sameFiles(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((f, i) => f === b[i]);
}
