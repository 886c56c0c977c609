/**
 * The floors of src/: every module has a floor, an import goes to its own floor or one below, and
 * no two modules import each other in a loop (type-only imports count). The core does no I/O.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src");

/**
 * Top floor first. A module belongs to the first entry that names it: a file exactly, or a folder
 * (`"http/"`) for all of its files. A new file that fits no entry fails the test: give it a floor.
 */
const FLOORS: readonly (readonly string[])[] = [
  ["index.ts", "stdio.ts", "testing.ts", "http/node.ts"], // entry points, the only ones that may use node:*
  ["dev/cli.ts"], // the `picomcp` command (Node only)
  ["dev/commands.ts"], // picomcp install and picomcp bundle on the command line: arguments, help, messages (Node only)
  ["dev/install.ts"], // picomcp install: the client's entry for a server, printed or put into its file (Node only)
  ["dev/clients.ts"], // each client's configuration file per platform and the entry it documents (Node only)
  ["dev/config-file.ts"], // a client's JSON file changed safely: refusals, backup, atomic write (Node only)
  ["dev/jsonc.ts"], // JSONC read, and one member set in place, its comments kept (Node only)
  ["dev/bundle.ts"], // picomcp bundle: the manifest and the archive of an MCP bundle (Node only)
  ["dev/probe.ts"], // a server's tools and prompts, asked of it over stdio (Node only)
  ["dev/bundle-files.ts"], // a bundle's files: the server's and its production dependencies (Node only)
  ["dev/zip.ts"], // a small zip writer (Node only)
  ["dev/runner.ts"], // picomcp dev: the child and the watcher (Node only)
  ["dev/watch.ts"], // which file changes restart the server: the child's module graph, ignores, bursts (Node only)
  ["dev/console-server.ts"], // the console's endpoints: secret, headers, page files, /send, /events (Node only)
  ["dev/console/"], // the console's page: browser modules served as they are, importing only each other
  ["auth/", "redis/", "otel/", "fs/", "proxy/"], // picomcp/auth (an OAuth resource server, with jose); picomcp/redis (a bus, and the event, rate and task stores); picomcp/otel (OpenTelemetry); picomcp/fs (a directory as resources, Node only); picomcp/proxy (another server behind this one)
  ["http/"], // Streamable HTTP on web standards
  ["server.ts"], // registration API and the seam
  ["mount/"], // server.mount: one server's primitives served by another, as a live mirror (it joins two servers' cores, so it is not an extension)
  ["dispatch/envelope.ts"], // envelope checks, the session handshake, routing between eras
  ["dispatch/"], // finding and running a method, errors → wire, the stateless request path
  ["core.ts"], // the server's state, naming no feature: the extensions and what each revision is declared
  ["ext/"], // extensions that are not a primitive: the protocol's own methods, listen, tasks, skills, MCP Apps
  ["prompts/completion.ts", "resources/as-tools.ts"], // completion and the resources-as-tools bridge read two primitives
  ["tools/", "prompts/", "resources/resources.ts", "resources/subscriptions.ts"], // the primitives: registries and their extensions
  ["resources/handler-params.ts", "resources/"], // URI templates, router, params, decoding, path safety; what a read or get destructures, from its source
  ["extension.ts", "views/"], // the one seam: the Extension every method family is, and the table of them; views/: contexts made from another, and the host an extension reaches the server through
  ["context.ts", "connection.ts", "jsonrpc.ts", "limits/", "request/", "observe/"], // per-request context and the connection; the governor (shares per caller, rate limits); request/: asking the client, request slots; observers, composed
  ["schema/", "eras/", "content.ts", "pagination.ts", "registry.ts"],
  ["errors.ts", "types.ts", "bus.ts", "bytes.ts", "stdio/"], // leaves; stdio/: the writer of serveStdio
];

/** Modules allowed to import `node:*` (everything else runs on Deno, Bun and Workers). */
const NODE_ONLY = new Set([
  "stdio.ts",
  "http/node.ts",
  "http/node-request.ts",
  "http/node-listener.ts",
  "dev/cli.ts",
  "dev/commands.ts",
  "dev/install.ts",
  "dev/clients.ts",
  "dev/config-file.ts",
  "dev/jsonc.ts",
  "dev/bundle.ts",
  "dev/probe.ts",
  "dev/bundle-files.ts",
  "dev/zip.ts",
  "dev/runner.ts",
  "dev/watch.ts",
  "dev/console-server.ts",
  "fs/index.ts",
  "fs/directory.ts",
  "fs/open.ts",
  "fs/walk.ts",
  "fs/watch.ts",
  "auth/client-metadata-node.ts", // node:* types only; the modules come from process.getBuiltinModule, on Node alone
]);

/** The only package imports in src/: each a subpath's optional peer dependency, used by that folder alone. */
const PEER_IMPORTS: { readonly [folder: string]: readonly string[] } = {
  "auth/": ["jose", "oauth4webapi"],
  "proxy/": ["@modelcontextprotocol/client", "@modelcontextprotocol/client/stdio"],
  "redis/": ["redis"],
  "otel/": ["@opentelemetry/api"],
};

function mayImport(file: string, spec: string): boolean {
  if (spec.startsWith("node:")) return NODE_ONLY.has(file);
  return Object.entries(PEER_IMPORTS).some(
    ([folder, specs]) => file.startsWith(folder) && specs.includes(spec),
  );
}

function floorOf(file: string): number {
  for (const [i, names] of FLOORS.entries()) if (names.includes(file)) return i;
  for (const [i, names] of FLOORS.entries()) {
    if (names.some((n) => n.endsWith("/") && file.startsWith(n))) return i;
  }
  return -1;
}

const IMPORT =
  /\b(?:import|export)\s[^;]*?\sfrom\s*"([^"]+)"|\bimport\s*\(\s*"([^"]+)"\s*\)|\bimport\s+"([^"]+)"/g;

/** The specifiers a module imports or re-exports, type-only ones included. */
function importsOf(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

/** One loop of the graph, as the modules along it, or undefined when there is none. */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === "done") return undefined;
    if (state.get(node) === "open") return [...path.slice(path.indexOf(node)), node];
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const loop = visit(next);
      if (loop) return loop;
    }
    path.pop();
    state.set(node, "done");
    return undefined;
  };
  for (const node of graph.keys()) {
    const loop = visit(node);
    if (loop) return loop;
  }
  return undefined;
}

function sources(): string[] {
  return (readdirSync(src, { recursive: true }) as string[])
    .map((f) => f.split("\\").join("/"))
    .filter((f) => (f.endsWith(".ts") && !f.endsWith(".test.ts")) || /^dev\/console\/[^/]+\.js$/.test(f))
    .sort();
}

const files = sources();
const texts = new Map(files.map((f) => [f, readFileSync(join(src, f), "utf8")]));
const graph = new Map<string, string[]>();
const external = new Map<string, string[]>();
for (const [file, text] of texts) {
  const local: string[] = [];
  const other: string[] = [];
  for (const spec of importsOf(text)) {
    if (spec.startsWith(".")) {
      const target = posix.normalize(posix.join(posix.dirname(file), spec));
      // TypeScript imports name the .js it compiles to; the console's browser modules are .js themselves
      local.push(file.endsWith(".js") ? target : target.replace(/\.js$/, ".ts"));
    } else other.push(spec);
  }
  graph.set(file, local);
  external.set(file, other);
}

describe("the floor checker", () => {
  it("reads static, type-only, re-export and dynamic imports", () => {
    const text = [
      'import { a } from "./a.js";',
      'import type { B } from "../b.js";',
      'export { c } from "./c.js";',
      'export type * from "./d.js";',
      "import {\n  e,\n  type F,\n} from './not-double-quoted.js';",
      'const g = await import("./g.js");',
      'import "./h.js";',
    ].join("\n");
    expect(importsOf(text)).toEqual(["./a.js", "../b.js", "./c.js", "./d.js", "./g.js", "./h.js"]);
  });

  it("finds a loop, and only a loop", () => {
    const loop = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
    ]);
    expect(findCycle(loop)).toEqual(["a", "b", "c", "a"]);
    expect(
      findCycle(
        new Map([
          ["a", ["b", "c"]],
          ["b", ["c"]],
          ["c", []],
        ]),
      ),
    ).toBeUndefined();
  });
});

describe("src/ floors", () => {
  it("gives every module a floor", () => {
    expect(files.filter((f) => floorOf(f) < 0)).toEqual([]);
  });

  it("resolves every relative import to a module of src/", () => {
    const missing = [...graph].flatMap(([f, deps]) =>
      deps.filter((d) => !texts.has(d)).map((d) => `${f} -> ${d}`),
    );
    expect(missing).toEqual([]);
  });

  it("has no import cycles, type-only imports included", () => {
    expect(findCycle(graph)).toBeUndefined();
  });

  it("has no cycles between folders either", () => {
    const room = (f: string) => f.split("/")[0]!;
    const rooms = new Map<string, string[]>();
    for (const [f, deps] of graph) {
      const out = rooms.get(room(f)) ?? [];
      for (const d of deps) if (room(d) !== room(f)) out.push(room(d));
      rooms.set(room(f), out);
    }
    expect(findCycle(rooms)).toBeUndefined();
  });

  it("never imports upward", () => {
    const upward = [...graph].flatMap(([f, deps]) =>
      deps
        .filter((d) => floorOf(d) < floorOf(f))
        .map((d) => `${f} (floor ${floorOf(f)}) -> ${d} (floor ${floorOf(d)})`),
    );
    expect(upward).toEqual([]);
  });

  it("keeps node:* to the Node entry points and imports no package but a subpath's peer", () => {
    const found = [...external].flatMap(([f, specs]) =>
      specs.filter((s) => !mayImport(f, s)).map((s) => `${f} -> ${s}`),
    );
    expect(found).toEqual([]);
  });

  it("lets only auth/ import jose, and nothing in the core import auth/", () => {
    expect(mayImport("auth/jwt.ts", "jose")).toBe(true);
    expect(mayImport("http/handler.ts", "jose")).toBe(false);
    expect(mayImport("auth/jwt.ts", "jose/jwt/verify")).toBe(false);
    expect(mayImport("auth/jwt.ts", "node:crypto")).toBe(false);
    // picomcp/redis's RedisAuthStore implements auth/store.ts's AuthStore: its types only (erased, so
    // picomcp/redis never loads picomcp/auth or jose)
    const typesOnly = (f: string, d: string) =>
      f === "redis/auth-store.ts" &&
      d === "auth/store.ts" &&
      !/^import (?!type )[^;]*"\.\.\/auth\//m.test(texts.get(f) ?? "");
    const intoAuth = [...graph].flatMap(([f, deps]) =>
      f.startsWith("auth/")
        ? []
        : deps.filter((d) => d.startsWith("auth/") && !typesOnly(f, d)).map((d) => `${f} -> ${d}`),
    );
    expect(intoAuth).toEqual([]);
  });

  it("lets only redis/ import redis, and nothing else import redis/", () => {
    expect(mayImport("redis/bus.ts", "redis")).toBe(true);
    expect(mayImport("bus.ts", "redis")).toBe(false);
    expect(mayImport("http/event-store.ts", "redis")).toBe(false);
    expect(mayImport("auth/jwt.ts", "redis")).toBe(false);
    expect(mayImport("redis/bus.ts", "jose")).toBe(false);
    expect(mayImport("redis/bus.ts", "ioredis")).toBe(false);
    const intoRedis = [...graph].flatMap(([f, deps]) =>
      f.startsWith("redis/") ? [] : deps.filter((d) => d.startsWith("redis/")).map((d) => `${f} -> ${d}`),
    );
    expect(intoRedis).toEqual([]);
  });

  it("lets only otel/ import @opentelemetry/api, and nothing else import otel/", () => {
    expect(mayImport("otel/telemetry.ts", "@opentelemetry/api")).toBe(true);
    expect(mayImport("extension.ts", "@opentelemetry/api")).toBe(false);
    expect(mayImport("otel/telemetry.ts", "@opentelemetry/sdk-trace-base")).toBe(false);
    const intoOtel = [...graph].flatMap(([f, deps]) =>
      f.startsWith("otel/") ? [] : deps.filter((d) => d.startsWith("otel/")).map((d) => `${f} -> ${d}`),
    );
    expect(intoOtel).toEqual([]);
  });

  it("never evaluates strings as code", () => {
    const found = files.filter((f) => /\beval\s*\(|\bnew\s+Function\s*\(/.test(texts.get(f)!));
    expect(found).toEqual([]);
  });

  it("keeps src/ readable at a glance: about 15 files at the top, none over 400 lines", () => {
    expect(files.filter((f) => !f.includes("/")).length).toBeLessThanOrEqual(16);
    const long = files.filter((f) => texts.get(f)!.split("\n").length > 400).map((f) => relative(".", f));
    expect(long).toEqual([]);
  });
});
