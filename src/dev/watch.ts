/**
 * Which file changes restart the server under `picomcp dev`: the modules it loaded (the child reports
 * its module graph), never what it writes itself; a change counts once its bytes differ, and changes
 * that come in a burst (a build writing many files) restart it once, after a quiet period.
 */
import { createHash } from "node:crypto";
import { type FSWatcher, readFileSync, realpathSync, watch } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The environment variable that tells the child's preload which descriptor to report its modules on. */
export const GRAPH_FD_ENV = "PICOMCP_DEV_GRAPH_FD";

/**
 * The module hooks, in the child: each module it loads from a file is written to the descriptor as
 * `<file URL> <sha-1 of its source, or ->`. `module.registerHooks` (Node 22.15+) sees `import` and
 * `require` alike, in the main thread; `module.register`'s hooks (Node 20) run in a thread of their own
 * and see what `import` loads (a CommonJS module's `require`s they miss: it says so with `cjs`).
 */
const HOOKS = `import { createHash } from "node:crypto";
import { writeSync } from "node:fs";
let fd = 0;
export function initialize(data) { fd = data.fd; }
export async function load(url, context, next) {
  const result = await next(url, context);
  if (url.startsWith("file:")) {
    const hash = result.source == null ? "-" : createHash("sha1").update(result.source).digest("hex");
    try { writeSync(fd, url + " " + hash + (result.format === "commonjs" ? " cjs" : "") + "\\n"); } catch {}
  }
  return result;
}`;
const PRELOAD = `import * as module from "node:module";
import { createHash } from "node:crypto";
import { writeSync } from "node:fs";
const fd = Number(process.env.${GRAPH_FD_ENV});
// the server's own child processes (a fork runs this preload too) have no such descriptor
delete process.env.${GRAPH_FD_ENV};
const say = (line) => { try { writeSync(fd, line + "\\n"); } catch {} };
// the hooks are picomcp dev's, not the server's: a warning Node may print about them is not its news
const quietly = (register) => {
  const emit = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    if (!/hooks|register/i.test(String(warning?.message ?? warning))) emit.call(process, warning, ...rest);
  };
  try { register(); } finally { process.emitWarning = emit; }
};
if (fd > 2 && module.registerHooks) {
  say("hooks all");
  quietly(() => module.registerHooks({
    load(url, context, next) {
      const result = next(url, context);
      if (url.startsWith("file:"))
        say(url + " " + (result.source == null ? "-" : createHash("sha1").update(result.source).digest("hex")));
      return result;
    },
  }));
} else if (fd > 2 && module.register) {
  say("hooks import");
  quietly(() => module.register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)}, { data: { fd } }));
}`;

/** The child's Node arguments that load the hooks, before its entry. */
export const GRAPH_ARGS = ["--import", `data:text/javascript,${encodeURIComponent(PRELOAD)}`] as const;

/** Never a reason to restart, wherever found: installed packages, and folders whose name starts with a dot (`.git`). */
const ALWAYS_IGNORED = /(^|\/)(node_modules|\.[^/]+)\//;
/** What a build writes beside the code and no server imports: declarations, source maps, tsc's build info. */
const BUILD_ONLY = /\.(d\.[cm]?ts|map|tsbuildinfo)$/;

/**
 * A glob of `--ignore`, as a test of a path relative to the entry's folder (`/` between its parts). A
 * glob without a `/` (but a last one) names a file or folder at any depth (`data`, `*.log`); one with
 * a `/` is relative to the folder (`src/generated/**`, `./data`). `*` is any run of characters within a part, `**` any run of parts,
 * `?` one character. A folder that matches ignores everything in it.
 */
export function globTest(glob: string): RegExp {
  const slashed = glob.replace(/\\/g, "/").replace(/\/+$/, "");
  const anchored = slashed.includes("/");
  const clean = slashed.replace(/^\.?\//, "");
  let body = "";
  for (let i = 0; i < clean.length; i++) {
    const c = clean[i]!;
    if (c === "*" && clean[i + 1] === "*") {
      const slash = clean[i + 2] === "/";
      body += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") body += "[^/]*";
    else if (c === "?") body += "[^/]";
    else body += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`${anchored ? "^" : "(^|/)"}${body}(/|$)`);
}

/** What {@link watchChanges} needs from the runner. */
export interface WatchOptions {
  /** The entry's folder: everything under it is watched. */
  dir: string;
  /** Globs of paths that never restart the server (see {@link globTest}). */
  ignore: readonly string[];
  /** Milliseconds of quiet after the last change before the restart. */
  debounceMs: number;
  /** Whether the server runs now: only a running server's module graph says what matters. */
  running(): boolean;
  /** Called once a burst of changes is over, with the files that changed (relative to `dir`). */
  onChange(files: string[]): void;
  log(line: string): void;
}

/** The watcher, told of each new child's report stream. */
export interface ChangeWatcher {
  /** Reads a new child's module graph from its report stream (the child's descriptor 3). */
  follow(stream: NodeJS.ReadableStream): void;
  close(): void;
}

const hashOf = (path: string): string => {
  try {
    return createHash("sha1").update(readFileSync(path)).digest("hex");
  } catch {
    return "gone";
  }
};

/** Watches `options.dir` and calls `onChange` after each burst of changes that matter. */
export function watchChanges(options: WatchOptions): ChangeWatcher {
  const ignored = options.ignore.map(globTest);
  // module URLs are real paths: a folder reached through a symlink is compared as the folder it is
  let dir = options.dir;
  try {
    dir = realpathSync(dir);
  } catch {}
  /** The modules the last server that reported loaded (absolute paths), and the hash of each as loaded. */
  let graph = new Map<string, string>();
  /** false: the hooks cannot see every module (a CommonJS one's requires on Node 20), so any change counts. */
  let complete = false;
  /** The hash of each file as last loaded or seen, so that a rewrite of the same bytes (a build's) is no change. */
  const known = new Map<string, string>();
  const pending = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  /** A running server with a known graph: only its modules matter, never a file it writes itself. */
  const useGraph = () => options.running() && complete && graph.size > 0;
  const matters = (file: string) => (useGraph() ? graph.has(join(dir, file)) : !BUILD_ONLY.test(file));

  const changed = (name: string) => {
    const file = name.split(sep).join("/");
    if (ALWAYS_IGNORED.test(file) || ignored.some((test) => test.test(file))) return;
    // not one of a running server's modules: dropped at once, so that a server writing its log every
    // few milliseconds cannot hold a restart back by never letting the burst end
    if (useGraph() && !graph.has(join(dir, name))) return;
    pending.add(file);
    clearTimeout(timer);
    timer = setTimeout(settled, options.debounceMs);
  };

  // the burst is over: the files that matter now (a new server reports its graph while it starts, and
  // may write a file meanwhile), read once their writes have settled, and only those whose bytes differ
  // from the last seen (a build rewrites files it did not change)
  const settled = () => {
    const files = [...pending].filter(matters).filter((file) => {
      const path = join(dir, file);
      const hash = hashOf(path);
      const before = known.get(path);
      known.set(path, hash);
      return before !== hash;
    });
    pending.clear();
    if (files.length) options.onChange(files);
  };

  let watcher: FSWatcher | undefined;
  let closed = false;
  let warned = false;
  const open = () => {
    try {
      const made = watch(dir, { recursive: true }, (_event, name) => {
        if (name) changed(name.toString());
      });
      // Node's emulated recursive watch (Linux) errors with ENOENT when a folder goes while it scans it
      // (rm -rf build, npm install): said once, and watched anew rather than crashing picomcp dev
      made.on("error", (error) => {
        made.close();
        if (watcher !== made || closed) return;
        watcher = undefined;
        if (!warned)
          options.log(`picomcp dev: watching ${options.dir} failed (${error.message}); watching it again`);
        warned = true;
        open();
      });
      watcher = made;
    } catch (error) {
      options.log(
        `picomcp dev: cannot watch ${options.dir} (${(error as Error).message}); no restarts on change`,
      );
    }
  };
  open();

  return {
    follow(stream) {
      let fresh = true;
      let buffer = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        buffer += chunk;
        const lines = buffer.split("\n");
        buffer = lines.pop()!;
        for (const line of lines) {
          const [url = "", hash = "-", cjs] = line.split(" ");
          if (url === "hooks") {
            // a new server: its graph replaces the last one's
            fresh = false;
            graph = new Map();
            complete = true;
            continue;
          }
          if (fresh || !url.startsWith("file:")) continue;
          const path = fileURLToPath(url);
          // the project's own modules: not picomcp's, nor an installed package's (a CommonJS one among
          // them requires files no change of the project's touches)
          const file = relative(dir, path).split(sep).join("/");
          if (file.startsWith("../") || ALWAYS_IGNORED.test(file)) continue;
          const bytes = hash === "-" ? hashOf(path) : hash;
          graph.set(path, bytes);
          known.set(path, bytes);
          if (cjs) complete = false;
        }
      });
      stream.on("error", () => {});
    },
    close() {
      closed = true;
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
