/**
 * The walk that lists a root's files for `resources/list`: every directory is opened and checked as a
 * file is (on Linux its entries are read through the checked descriptor itself), symlinked directories
 * are never entered, and the walk is bounded.
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { sep } from "node:path";
import { openChecked, type RootState, stillThere } from "./open.js";

/** What one walk found: the files to list and the directories walked, as paths below the root, sorted. */
export interface Listing {
  /** Files, in path order (`""` is never one). */
  readonly files: readonly string[];
  /** Directories walked, the root (`""`) first. */
  readonly dirs: readonly string[];
}

/** What the walk asks of each entry. */
export interface WalkFilter {
  /** Whether a directory's entries are walked (its path below the root). */
  dir(path: string): boolean;
  /** Whether a file is listed. */
  file(path: string): boolean;
  /** Whether a symlink (followed only when symlinks are) leads to a file that is served. */
  link(path: string): Promise<boolean>;
}

/** The absolute path of a path below the root (`""` is the root). */
export function absolute(root: RootState, path: string): string {
  return path === "" ? root.path : root.path + sep + path.split("/").join(sep);
}

/** The entries of one directory under the root, read only once it is checked to be there; undefined if not. */
async function entries(root: RootState, path: string): Promise<Dirent[] | undefined> {
  const dir = absolute(root, path);
  const checked = await openChecked(root, dir, "directory");
  if (!checked) return undefined;
  try {
    // on Linux the descriptor's own /proc entry lists the very directory that was checked; elsewhere
    // the name is read again, and checked to still lead there afterwards
    if (root.strategy === "proc")
      return await readdir(`/proc/self/fd/${checked.handle.fd}`, { withFileTypes: true });
    const list = await readdir(dir, { withFileTypes: true });
    return (await stillThere(root, checked, dir)) ? list : undefined;
  } catch {
    return undefined;
  } finally {
    await checked.handle.close();
  }
}

/**
 * Walks the root depth first, names in code-unit order, and stops once `max` files are listed or `max`
 * directories walked. A symlink is listed only when symlinks are followed and `filter.link` accepts it;
 * a symlink to a directory is never entered (it would list a subtree twice, or forever).
 */
export async function walk(root: RootState, filter: WalkFilter, max: number): Promise<Listing> {
  const files: string[] = [];
  const dirs: string[] = [];
  const visit = async (path: string): Promise<void> => {
    if (dirs.length >= max || files.length >= max) return;
    const list = await entries(root, path);
    if (!list) return;
    dirs.push(path);
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of list) {
      if (files.length >= max) return;
      const child = path === "" ? entry.name : `${path}/${entry.name}`;
      if (entry.isDirectory()) {
        if (filter.dir(child)) await visit(child);
      } else if (entry.isFile()) {
        if (filter.file(child)) files.push(child);
      } else if (entry.isSymbolicLink() && root.followSymlinks) {
        if (filter.file(child) && (await filter.link(child))) files.push(child);
      }
    }
  };
  await visit("");
  // depth first with sorted names gives "a/z" before "a.md"; the list reads in plain path order
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { files, dirs };
}

/**
 * `start`, never more than one at a time: a call while one runs gets the one that starts when it ends,
 * and every call until then shares it (a burst of changes makes two walks, not one per change). The
 * runs end in the order they started, so a later call's result never comes before an earlier one's.
 */
export function oneAtATime<T>(start: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let queued: Promise<T> | undefined;
  const run = (): Promise<T> => {
    const next = start();
    running = next;
    const done = () => {
      if (running === next) running = undefined;
    };
    next.then(done, done);
    return next;
  };
  return () => {
    if (queued) return queued;
    if (!running) return run();
    const after = running.then(
      () => undefined,
      () => undefined,
    );
    queued = after.then(() => {
      queued = undefined;
      return run();
    });
    return queued;
  };
}
