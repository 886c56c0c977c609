/**
 * `picomcp bundle <entry>`: an MCP bundle (.mcpb) of the server. The manifest's name, version,
 * description and author come from the project's package.json, its tools and prompts from the server
 * itself (probe.ts), its user configuration from the environment variables the project declares; the
 * archive holds the manifest, the server's files and its production dependencies (bundle-files.ts).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import {
  filesUnder,
  type PackageJson,
  type PackFile,
  productionPackages,
  readPackage,
  runFiles,
} from "./bundle-files.js";
import { type Offer, probe } from "./probe.js";
import { type ZipFile, zip } from "./zip.js";

/** How the bundle asks the user for one environment variable (the manifest's `user_config` entry). */
export interface DeclaredEnv {
  type?: "string" | "number" | "boolean" | "directory" | "file";
  title?: string;
  description?: string;
  required?: boolean;
  sensitive?: boolean;
  default?: string | number | boolean;
}

/** Options of {@link bundle}. */
export interface BundleOptions {
  /** The server's built entry file (`.js`), inside a project with a package.json. */
  entry: string;
  /** The .mcpb file to write. Default: `<name>-<version>.mcpb` in the project's folder. */
  out?: string;
  /** Environment variables the server reads, asked of the user on install; beside package.json's `picomcp.env`. */
  env?: readonly string[];
  /** Arguments after the entry. */
  args?: readonly string[];
  /** Files and folders to pack, relative to the project, instead of the entry's folder. */
  include?: readonly string[];
}

/** The bundle written. */
export interface Bundled {
  file: string;
  manifest: Record<string, unknown>;
  /** How many files it holds, the manifest included, and its size in bytes. */
  files: number;
  bytes: number;
  /** What the bundle cannot do that the user should know: native code that limits its platforms. */
  warnings: string[];
}

/** The manifest version written: the schema `@anthropic-ai/mcpb` 2.x validates and Claude Desktop reads. */
export const MANIFEST_VERSION = "0.3";

/** The folder of the nearest package.json above `file`. */
function projectOf(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`${file} is in no project: no package.json above it`);
  }
}

/** package.json's `author`, a string ("Name <email> (url)") or an object, as the manifest's. */
function authorOf(pkg: PackageJson): { name: string; email?: string; url?: string } {
  const author = pkg.author;
  if (typeof author === "string") {
    const m = /^\s*([^<(]+?)\s*(?:<([^>]+)>)?\s*(?:\(([^)]+)\))?\s*$/.exec(author);
    if (m?.[1]) return { name: m[1], ...(m[2] ? { email: m[2] } : {}), ...(m[3] ? { url: m[3] } : {}) };
  }
  if (
    typeof author === "object" &&
    author !== null &&
    typeof (author as { name?: unknown }).name === "string"
  ) {
    const { name, email, url } = author as { name: string; email?: unknown; url?: unknown };
    return {
      name,
      ...(typeof email === "string" ? { email } : {}),
      ...(typeof url === "string" ? { url } : {}),
    };
  }
  throw new Error(
    'the bundle\'s manifest needs an author: set package.json\'s "author" (npm pkg set author="Your Name")',
  );
}

/** The declared environment: package.json's `picomcp.env`, and the names given on the command line. */
function declaredEnv(pkg: PackageJson, names: readonly string[]): Map<string, DeclaredEnv> {
  const env = new Map<string, DeclaredEnv>();
  const own = (pkg.picomcp as { env?: unknown } | undefined)?.env;
  if (own !== undefined && (typeof own !== "object" || own === null || Array.isArray(own)))
    throw new Error(
      'package.json\'s "picomcp.env" must be an object: { "API_KEY": { "title": "…", "sensitive": true } }',
    );
  for (const [name, spec] of Object.entries((own ?? {}) as Record<string, DeclaredEnv>))
    env.set(name, spec ?? {});
  for (const name of names) if (!env.has(name)) env.set(name, {});
  // the manifest's user_config keys are the names in lower case: two names must not make one key
  const keys = new Map<string, string>();
  for (const name of env.keys()) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new Error(`${name} cannot name an environment variable`);
    const other = keys.get(name.toLowerCase());
    if (other !== undefined)
      throw new Error(
        `${other} and ${name} would both be asked as user_config.${name.toLowerCase()} (its keys are in lower case): declare one of them`,
      );
    keys.set(name.toLowerCase(), name);
  }
  return env;
}

/** The manifest's `user_config` entry of `name`, and its key there. */
function userConfig(name: string, spec: DeclaredEnv): [string, Record<string, unknown>] {
  const entry: Record<string, unknown> = {
    type: spec.type ?? "string",
    title: spec.title ?? name,
    description: spec.description ?? `The ${name} environment variable of the server`,
    required: spec.required ?? spec.default === undefined,
    // a name that says key, token, secret or password is kept in the system's keychain unless told
    sensitive: spec.sensitive ?? /KEY|TOKEN|SECRET|PASSWORD/i.test(name),
  };
  if (spec.default !== undefined) entry.default = spec.default;
  return [name.toLowerCase(), entry];
}

/**
 * The packages (the project's name for its own files) that bring native code: a compiled addon (`.node`),
 * or what builds or ships one (`binding.gyp`, a `prebuilds/` folder). Such a bundle runs where it was made.
 */
function nativePackages(files: readonly PackFile[], project: string): string[] {
  const names = new Set<string>();
  for (const { at } of files) {
    const parts = at.split("/");
    if (!at.endsWith(".node") && !parts.includes("prebuilds") && parts.at(-1) !== "binding.gyp") continue;
    const last = parts.lastIndexOf("node_modules");
    if (last < 0) names.add(project);
    else
      names.add(
        parts[last + 1]?.startsWith("@") ? `${parts[last + 1]}/${parts[last + 2]}` : parts[last + 1]!,
      );
  }
  return [...names].sort();
}

/**
 * What the server offers, asked of the bundle's own files: written to a temporary folder and started from
 * there, so a file or a package the bundle lacks (a devDependency it imports) fails here, not on install.
 * The declared variables are set to their defaults, or empty.
 */
async function probeBundled(
  contents: readonly ZipFile[],
  entryPoint: string,
  args: readonly string[],
  env: ReadonlyMap<string, DeclaredEnv>,
): Promise<Offer> {
  const stage = mkdtempSync(join(tmpdir(), "picomcp-bundle-"));
  try {
    for (const file of contents) {
      const path = join(stage, ...file.path.split("/"));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.data, { mode: file.mode });
    }
    const probeEnv: NodeJS.ProcessEnv = { ...process.env, MCP_TRANSPORT: "stdio" };
    for (const [name, spec] of env) probeEnv[name] = spec.default === undefined ? "" : String(spec.default);
    return await probe(process.execPath, [join(stage, ...entryPoint.split("/")), ...args], probeEnv, stage);
  } catch (error) {
    const message = (error as Error).message;
    if (!/Cannot find (package|module)/.test(message)) throw error;
    throw new Error(
      `${message}\nThe bundle holds the entry's folder (or --include's) and the production dependencies: is a package it imports in devDependencies, or a file it reads elsewhere?`,
    );
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Builds the bundle of `options.entry`; throws an Error whose message says what to change. */
export async function bundle(options: BundleOptions): Promise<Bundled> {
  const entry = resolve(options.entry);
  if (!existsSync(entry) || !statSync(entry).isFile()) throw new Error(`${options.entry} is not a file`);
  if (!/^\.[cm]?js$/.test(extname(entry)))
    throw new Error(
      `${options.entry}: a bundle runs on the client's own Node, which may not strip types: build it (npx tsc) and bundle the .js`,
    );
  const root = realpathSync(projectOf(entry));
  const real = realpathSync(entry);
  const entryPoint = relative(root, real).split(sep).join("/");
  if (entryPoint.startsWith("../"))
    throw new Error(`${options.entry} links to a file outside its project (${root})`);
  const pkg = readPackage(root);
  if (typeof pkg.name !== "string" || typeof pkg.version !== "string")
    throw new Error(`${join(root, "package.json")} needs a "name" and a "version"`);
  const author = authorOf(pkg);
  const env = declaredEnv(pkg, options.env ?? []);
  const args = options.args ?? [];

  const out = resolve(options.out ?? join(root, `${pkg.name.replace(/^@[^/]+\//, "")}-${pkg.version}.mcpb`));
  const files = new Map<string, PackFile>();
  const add = (file: PackFile) => {
    if (file.at !== "manifest.json" && resolve(file.from) !== out) files.set(file.at, file);
  };
  const skip = (rel: string) => rel.endsWith(".mcpb") || /\.bak-[\dTZ-]+$/.test(rel);
  const includes =
    options.include && options.include.length > 0 ? options.include : [relative(root, dirname(real))];
  for (const include of includes) {
    const from = resolve(root, include);
    const at = relative(root, from).split(sep).join("/");
    if (at.startsWith("..")) throw new Error(`${include} is outside the project (${root})`);
    if (!existsSync(from)) throw new Error(`${include} does not exist`);
    if (statSync(from).isDirectory()) for (const f of filesUnder(from, at, skip)) add(f);
    else add({ from, at, mode: statSync(from).mode & 0o777 });
  }
  add({ from: real, at: entryPoint, mode: statSync(real).mode & 0o777 });
  add({ from: join(root, "package.json"), at: "package.json", mode: 0o644 });
  for (const dep of productionPackages(root, pkg))
    for (const f of runFiles(filesUnder(dep.dir, dep.at))) add(f);

  const sorted = [...files.values()].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const contents = sorted.map((f) => ({ path: f.at, data: readFileSync(f.from), mode: f.mode }));
  const offer = await probeBundled(contents, entryPoint, args, env);
  const native = nativePackages(sorted, pkg.name);
  const warnings =
    native.length === 0
      ? []
      : [
          `native code in ${native.join(", ")}: built for ${process.platform}, so the bundle declares ${process.platform} only; build a bundle on each platform it should run on`,
        ];

  const userConfigs: Record<string, unknown> = {};
  const mcpEnv: Record<string, string> = {};
  for (const [name, spec] of env) {
    const [key, entry] = userConfig(name, spec);
    userConfigs[key] = entry;
    mcpEnv[name] = `\${user_config.${key}}`;
  }
  const manifest: Record<string, unknown> = {
    manifest_version: MANIFEST_VERSION,
    name: pkg.name,
    ...(offer.serverInfo.title ? { display_name: offer.serverInfo.title } : {}),
    version: pkg.version,
    description:
      typeof pkg.description === "string" && pkg.description ? pkg.description : `The ${pkg.name} MCP server`,
    author,
    ...(typeof pkg.license === "string" ? { license: pkg.license } : {}),
    ...(Array.isArray(pkg.keywords) && pkg.keywords.every((k) => typeof k === "string")
      ? { keywords: pkg.keywords }
      : {}),
    server: {
      type: "node",
      entry_point: entryPoint,
      mcp_config: {
        command: "node",
        args: [`\${__dirname}/${entryPoint}`, ...args],
        ...(env.size > 0 ? { env: mcpEnv } : {}),
      },
    },
    ...(offer.tools.length > 0 ? { tools: offer.tools } : {}),
    ...(offer.prompts.length > 0 ? { prompts: offer.prompts } : {}),
    ...(env.size > 0 ? { user_config: userConfigs } : {}),
    compatibility: {
      platforms: native.length === 0 ? ["darwin", "win32", "linux"] : [process.platform],
      ...(typeof (pkg.engines as { node?: unknown } | undefined)?.node === "string"
        ? { runtimes: { node: (pkg.engines as { node: string }).node } }
        : {}),
    },
  };

  const archive = zip([
    { path: "manifest.json", data: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`), mode: 0o644 },
    ...contents,
  ]);
  // written whole or not at all: a bundle half written is never left under the bundle's name
  const temp = `${out}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, archive);
    renameSync(temp, out);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return { file: out, manifest, files: sorted.length + 1, bytes: archive.length, warnings };
}
