/**
 * Watching a root for picomcp/fs: one recursive watcher where the platform's is native (macOS,
 * Windows), else one watcher per directory the walk found (Linux, and any other); events coalesced over
 * a short window into one batch of changed paths.
 */
import { type FSWatcher, watch } from "node:fs";
import { sep } from "node:path";

/** What changed during one window: each path below the root, and whether any name came or went. */
export interface ChangeBatch {
  /** Paths below the root, `/`-separated, that an event named. */
  readonly paths: ReadonlySet<string>;
  /** A name appeared, went or moved (or an event named nothing): the listing may differ. */
  readonly renamed: boolean;
}

/** Where Node's `fs.watch` is recursive through the platform itself (elsewhere it is emulated). */
export const NATIVE_RECURSIVE = process.platform === "darwin" || process.platform === "win32";

/** Watches a root; {@link sync} tells it the directories to watch when it watches them one by one. */
export class TreeWatcher {
  readonly #root: string;
  readonly #debounce: number;
  readonly #onBatch: (batch: ChangeBatch) => void;
  readonly #onError: (error: unknown) => void;
  readonly #watchers = new Map<string, FSWatcher>();
  readonly #recursive: boolean;
  #paths = new Set<string>();
  #renamed = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(
    root: string,
    options: {
      recursive: boolean;
      debounce: number;
      onBatch: (batch: ChangeBatch) => void;
      onError: (error: unknown) => void;
    },
  ) {
    this.#root = root;
    this.#debounce = options.debounce;
    this.#onBatch = options.onBatch;
    this.#onError = options.onError;
    this.#recursive = options.recursive;
    if (this.#recursive) this.#add("", true);
  }

  /** Watches exactly these directories (paths below the root, `""` the root); a no-op when recursive. */
  sync(dirs: readonly string[]): void {
    if (this.#recursive || this.#closed) return;
    const wanted = new Set(dirs);
    for (const [dir, watcher] of this.#watchers) {
      if (!wanted.has(dir)) {
        watcher.close();
        this.#watchers.delete(dir);
      }
    }
    for (const dir of wanted) if (!this.#watchers.has(dir)) this.#add(dir, false);
  }

  /** Stops every watcher and drops what is pending. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }

  #add(dir: string, recursive: boolean): void {
    const path = dir === "" ? this.#root : this.#root + sep + dir.split("/").join(sep);
    let watcher: FSWatcher;
    try {
      // not persistent: the server's transport keeps the process alive, a watcher never does (a server
      // closed without files.remove() still lets the process exit)
      watcher = watch(path, { recursive, persistent: false }, (event, name) =>
        this.#event(dir, event, name === null ? undefined : String(name)),
      );
    } catch (error) {
      // gone already, or out of watches (inotify's limit): the next walk tries again
      if ((error as { code?: string }).code !== "ENOENT") this.#onError(error);
      return;
    }
    // a watched directory deleted or moved may error (EPERM on Windows): it is dropped, and the walk
    // that the rename starts says what to watch now
    watcher.on("error", () => {
      watcher.close();
      if (this.#watchers.get(dir) !== watcher) return;
      this.#watchers.delete(dir);
      // the one recursive watcher is the root's: no walk would add it again, so it is made anew here
      // (an error of Node's emulated recursive watch, ENOENT from a folder removed while it scanned)
      if (recursive && !this.#closed) this.#add(dir, true);
      this.#event(dir, "rename", undefined);
    });
    this.#watchers.set(dir, watcher);
  }

  #event(dir: string, event: string, name: string | undefined): void {
    if (this.#closed) return;
    if (name === undefined) this.#renamed = true;
    else {
      const rel = name.split(sep).join("/");
      this.#paths.add(dir === "" ? rel : `${dir}/${rel}`);
      if (event === "rename") this.#renamed = true;
    }
    // one window from the first event: a burst becomes one batch, and a file written without pause
    // still gets one batch per window
    this.#timer ??= setTimeout(() => this.#flush(), this.#debounce);
  }

  #flush(): void {
    this.#timer = undefined;
    const batch: ChangeBatch = { paths: this.#paths, renamed: this.#renamed };
    this.#paths = new Set();
    this.#renamed = false;
    if (!this.#closed) this.#onBatch(batch);
  }
}
