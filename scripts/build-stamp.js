// Whether dist/ is current: build-dist.js writes dist/.build-stamp.json, a hash of everything the build
// reads (src/, the build's scripts, package.json, the tsconfigs, the compilers' versions) and a hash of
// what it wrote; prepare.js builds again only when either no longer matches, so a second `npm install`
// in a project that links picomcp leaves its dist/ (and the bin npm made executable) alone.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export const STAMP = ".build-stamp.json";

/** Every file under `dir`, as paths relative to `base`, in a stable order. */
function files(dir, base) {
  if (!existsSync(dir)) return [];
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...files(path, base));
    else if (entry.isFile()) found.push(relative(base, path).split("\\").join("/"));
  }
  return found.sort();
}

/** One hash of the named files' paths and bytes (a missing file counts, as missing). */
function hashOf(base, names) {
  const hash = createHash("sha256");
  for (const name of names) {
    const path = join(base, name);
    hash.update(`${name}\0`);
    hash.update(existsSync(path) ? readFileSync(path) : "\0missing\0");
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** The hash of what a build of `root` reads. */
export function inputsOf(root) {
  const version = (pkg) => {
    const path = join(root, "node_modules", pkg, "package.json");
    return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")).version : "none";
  };
  const own = [
    "package.json",
    "tsconfig.json",
    "tsconfig.build.json",
    "scripts/build-dist.js",
    "scripts/build-stamp.js",
    ...files(join(root, "src"), root),
  ];
  return `${hashOf(root, own)} typescript@${version("typescript")} rolldown@${version("rolldown")}`;
}

/** The hash of what a build wrote to `dist` (the stamp aside). */
export function outputsOf(dist) {
  return hashOf(
    dist,
    files(dist, dist).filter((f) => f !== STAMP),
  );
}

/** The stamp of a build of `root` whose output is in `dist`. */
export function stampOf(root, dist) {
  return { inputs: inputsOf(root), outputs: outputsOf(dist) };
}

/** Why `root`'s dist/ must be built, or undefined when it is current. */
export function staleness(root) {
  const dist = join(root, "dist");
  const path = join(dist, STAMP);
  if (!existsSync(path)) return existsSync(dist) ? "dist/ has no build stamp" : "dist/ is missing";
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return "dist/'s build stamp is unreadable";
  }
  if (stamp.inputs !== inputsOf(root)) return "the sources changed since dist/ was built";
  if (stamp.outputs !== outputsOf(dist)) return "dist/ changed since it was built";
  return undefined;
}
