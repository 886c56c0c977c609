/**
 * What goes into a bundle besides the manifest: the server's own files and its production dependencies,
 * found the way Node resolves them (each package's `dependencies`, `optionalDependencies` and required
 * peers, from its own folder up), never a devDependency.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join, posix, relative, sep } from "node:path";

/** A file to pack: where it is read from, and its path in the bundle. */
export interface PackFile {
  from: string;
  at: string;
  mode: number;
}

/** The parts of a package.json the bundle reads. */
export interface PackageJson {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

export const readPackage = (dir: string): PackageJson =>
  JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));

const toPosix = (path: string) => path.split(sep).join("/");

/**
 * Every file under `dir` (its path in the bundle under `at`), leaving out `node_modules` folders, files
 * and folders whose name starts with a dot, and what `skip` refuses (given the path relative to `dir`).
 */
export function filesUnder(
  dir: string,
  at: string,
  skip: (rel: string) => boolean = () => false,
): PackFile[] {
  const out: PackFile[] = [];
  const open = new Set<string>(); // the folders being walked: a link back to one of them is a loop
  const walk = (rel: string) => {
    const real = realpathSync(join(dir, rel));
    if (open.has(real)) throw new Error(`${join(dir, rel)} links back to a folder that holds it`);
    open.add(real);
    for (const item of readdirSync(join(dir, rel), { withFileTypes: true })) {
      if (item.name.startsWith(".") || item.name === "node_modules") continue;
      const sub = rel === "" ? item.name : `${rel}/${item.name}`;
      if (skip(sub)) continue;
      const full = join(dir, sub);
      const stat = statSync(full); // a symbolic link packs as what it points to
      if (stat.isDirectory()) walk(sub);
      else if (stat.isFile())
        out.push({ from: full, at: at === "" ? sub : `${at}/${sub}`, mode: stat.mode & 0o777 });
    }
    open.delete(real);
  };
  walk("");
  return out;
}

/**
 * A dependency's files less what Node never loads to run it: the source maps of its code and
 * declarations, and the declarations of its code (`x.d.ts` beside `x.js`, `.d.mts` beside `.mjs`, `.d.cts`
 * beside `.cjs`). Declarations with no code beside them stay: a package may read them (TypeScript's
 * `lib.*.d.ts`).
 */
export function runFiles(files: PackFile[]): PackFile[] {
  const paths = new Set(files.map((f) => f.at));
  return files.filter((f) => {
    if (/\.(?:[cm]?js|d\.[cm]?ts)\.map$/.test(f.at)) return false;
    const declared = /^(.*)\.d\.([cm]?)ts$/.exec(f.at);
    return !(declared && paths.has(`${declared[1]}.${declared[2]}js`));
  });
}

/** The folder of package `name` as Node finds it from `from`: `node_modules/<name>` here or in a folder above. */
function findPackage(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The production dependencies `pkg` asks for: required ones, and optional ones that may be absent. */
function wanted(pkg: PackageJson): { name: string; optional: boolean }[] {
  const optionalPeer = (name: string) => pkg.peerDependenciesMeta?.[name]?.optional === true;
  return [
    ...Object.keys(pkg.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(pkg.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    // a peer the package needs is installed beside it by npm; an optional one is the app's choice
    ...Object.keys(pkg.peerDependencies ?? {})
      .filter((name) => !optionalPeer(name))
      .map((name) => ({ name, optional: true })),
  ];
}

/**
 * The production closure of the project at `root`: each package's folder and where it goes in the
 * bundle (its own place under `root`'s node_modules, or, for one found outside `root` — a workspace's
 * hoisted or a linked package — under the node_modules of the package that needs it).
 */
export function productionPackages(root: string, pkg: PackageJson): { dir: string; at: string }[] {
  const found: { dir: string; at: string }[] = [];
  const seen = new Set<string>();
  const visit = (from: PackageJson, fromDir: string, fromAt: string, who: string) => {
    for (const { name, optional } of wanted(from)) {
      const dir = findPackage(name, fromDir);
      if (dir === undefined) {
        if (optional) continue;
        throw new Error(`${name}, a dependency of ${who}, is not installed: run npm install first`);
      }
      const rel = relative(root, dir);
      const inside = rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep);
      const at = inside ? toPosix(rel) : posix.join(fromAt, "node_modules", name);
      const real = realpathSync(dir);
      if (seen.has(`${real}\0${at}`)) continue;
      seen.add(`${real}\0${at}`);
      found.push({ dir: real, at });
      // Node resolves a package's own dependencies from its real folder
      visit(readPackage(real), real, at, name);
    }
  };
  visit(pkg, root, "", "the project");
  return found;
}
