/**
 * Opening a file or directory under a root so that no byte from outside it is read: open first, then
 * check where the opened file really is, then read from the handle that was checked.
 *
 * On Linux the check asks the kernel about the open descriptor itself (`/proc/self/fd/N` names the file
 * it refers to), so nothing swapped by name at any moment can fool it. Elsewhere the real path of the
 * name is taken (`realpath`), the name there must be the very file open (`lstat` against `fstat`: same
 * device and inode) and a second `realpath` must agree: a symlink swapped in for the file itself is
 * always seen, but a directory above it swapped back and forth between two looks by name is not (Node
 * has no `openat`); docs/files.md gives the figures. Either way a swap after the check changes nothing,
 * since the bytes are read from the handle. A hard link cannot be told apart: a second name of a file,
 * made inside the root, is a file of the root.
 */
import { closeSync, constants, openSync, readlinkSync, realpathSync } from "node:fs";
import { type FileHandle, lstat, open, readlink, realpath } from "node:fs/promises";
import { sep } from "node:path";

/** How the real path of an open handle is found: `/proc/self/fd` (Linux), or `realpath` and an identity check. */
export type RealPathStrategy = "proc" | "stat";

/** @internal Points where tests act in between steps, to prove that what happens there changes nothing. */
export interface OpenHooks {
  /** After the path is validated, before it is opened (where a check-then-open design would check). */
  beforeOpen?: (file: string) => void | Promise<void>;
  /** After the file is opened, before it is checked. */
  afterOpen?: (file: string) => void | Promise<void>;
  /** After it is checked, before it is read (where a check-then-open design would open). */
  afterCheck?: (file: string) => void | Promise<void>;
}

/** A root, resolved once: its real path, and how handles under it are checked. */
export interface RootState {
  /** The root's real path (symlinks resolved), absolute. */
  readonly path: string;
  /** Follow symlinks under the root whose target is under the root too. */
  readonly followSymlinks: boolean;
  readonly strategy: RealPathStrategy;
  /** @internal */
  readonly hooks?: OpenHooks | undefined;
}

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;

let procWorks: boolean | undefined;

/**
 * Whether `/proc/self/fd/N` names what a descriptor refers to here: tried once, on a directory whose real
 * path is known (a Linux without /proc mounted, or a sandbox that hides it, falls back to `stat`).
 */
export function defaultStrategy(probe: string): RealPathStrategy {
  if (procWorks === undefined) {
    procWorks = false;
    if (process.platform === "linux") {
      let fd: number | undefined;
      try {
        fd = openSync(probe, constants.O_RDONLY | O_DIRECTORY);
        procWorks = readlinkSync(`/proc/self/fd/${fd}`) === realpathSync(probe);
      } catch {
        procWorks = false;
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    }
  }
  return procWorks ? "proc" : "stat";
}

/** Whether `real` is `root` itself or under it. */
export function isUnder(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * The real path of what `handle` refers to, opened by the name `file`, or undefined when it cannot be
 * told (the name now leads elsewhere, or to another file).
 */
async function realPathOf(
  root: RootState,
  handle: FileHandle,
  file: string,
  identity: { dev: bigint; ino: bigint },
): Promise<string | undefined> {
  try {
    if (root.strategy === "proc") return await readlink(`/proc/self/fd/${handle.fd}`);
    // lstat: the name itself, never what a symlink swapped in since realpath would lead to
    const real = await realpath(file);
    const there = await lstat(real, { bigint: true });
    if (there.dev !== identity.dev || there.ino !== identity.ino) return undefined;
    // the directories above it are looked up by name each time: once more, so that a swap of one must
    // happen and be undone between two looks, microseconds apart (only /proc closes this for good)
    return (await realpath(file)) === real ? real : undefined;
  } catch {
    return undefined;
  }
}

/** An open handle whose real path was checked; close it when done. */
export interface CheckedHandle {
  readonly handle: FileHandle;
  /** Its real path. */
  readonly real: string;
  /** Its size in bytes, when it was checked. */
  readonly size: number;
  readonly dev: bigint;
  readonly ino: bigint;
}

/**
 * Opens `file` (a path under the root, already validated) as a regular file or a directory (`kind`),
 * and checks what was opened: the kind, and its real path under the root (the path itself, when symlinks
 * are not followed, and always for a directory: the walk never enters a symlink, even one swapped in
 * after its parent was read). Undefined when it is refused or missing; never throws for what a path names.
 */
export async function openChecked(
  root: RootState,
  file: string,
  kind: "file" | "directory",
): Promise<CheckedHandle | undefined> {
  await root.hooks?.beforeOpen?.(file);
  const exact = kind === "directory" || !root.followSymlinks;
  // O_NOFOLLOW refuses a symlink as the last name at once (intermediate ones are caught by the check);
  // O_NONBLOCK keeps a FIFO from blocking the open until some writer comes
  const flags =
    constants.O_RDONLY | O_NONBLOCK | (exact ? O_NOFOLLOW : 0) | (kind === "directory" ? O_DIRECTORY : 0);
  let handle: FileHandle;
  try {
    handle = await open(file, flags);
  } catch {
    return undefined;
  }
  let checked: CheckedHandle | undefined;
  try {
    await root.hooks?.afterOpen?.(file);
    const info = await handle.stat({ bigint: true });
    if (kind === "file" ? info.isFile() : info.isDirectory()) {
      const real = await realPathOf(root, handle, file, info);
      if (real !== undefined && isUnder(root.path, real) && (!exact || real === file))
        checked = { handle, real, size: Number(info.size), dev: info.dev, ino: info.ino };
    }
    if (checked) await root.hooks?.afterCheck?.(file);
  } finally {
    if (checked === undefined) await handle.close();
  }
  return checked;
}

/** Whether the name `file` still leads to the directory or file `checked` holds open. */
export async function stillThere(root: RootState, checked: CheckedHandle, file: string): Promise<boolean> {
  return (await realPathOf(root, checked.handle, file, checked)) === checked.real;
}

/**
 * Reads at most `max` bytes from a checked handle, from its start; `undefined` when it holds more (it may
 * have grown since it was checked: the read stops one byte past the limit).
 */
export async function readBounded(checked: CheckedHandle, max: number): Promise<Uint8Array | undefined> {
  if (checked.size > max) return undefined;
  let buffer = new Uint8Array(Math.min(checked.size, max) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > max) return undefined;
      const grown = new Uint8Array(Math.min(buffer.length * 2, max + 1));
      grown.set(buffer);
      buffer = grown;
    }
    const { bytesRead } = await checked.handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return length > max ? undefined : buffer.subarray(0, length);
}
