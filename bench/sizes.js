// Installed size of each contender: picomcp's `npm pack` (what a user downloads), and for each peer the
// bytes on disk of the packages a user installs to serve stdio and HTTP on Node, with their dependencies
// (zod, the fixture's own validator, left out for all).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MODULES = join(ROOT, "node_modules");
const ROOTS = {
  floor: [],
  "mcp-lite": ["mcp-lite", "@hono/node-server"],
  tmcp: ["tmcp", "@tmcp/adapter-zod", "@tmcp/transport-stdio", "@tmcp/transport-http", "@hono/node-server"],
  sdk1: ["@modelcontextprotocol/sdk"],
  sdk2: ["@modelcontextprotocol/server", "@modelcontextprotocol/node"],
  // HTTP only, both: mcp-use serves on its own Hono app; mcp-handler needs a Request adapter on Node
  "mcp-use": ["mcp-use"],
  "mcp-handler": ["mcp-handler", "@modelcontextprotocol/server", "@hono/node-server"],
};

function bytesUnder(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/** Every package `roots` pull in (dependencies, transitively), as directories. */
function closure(roots) {
  const seen = new Map();
  const visit = (name, from) => {
    if (name === "zod") return;
    // Node's resolution: nested node_modules first, then the top level
    let dir = join(from, "node_modules", name);
    if (!existsSync(dir)) dir = join(MODULES, name);
    if (seen.has(dir) || !existsSync(dir)) return;
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    seen.set(dir, pkg.name);
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, dir);
  };
  for (const r of roots) visit(r, ROOT);
  return [...seen.keys()];
}

/** `{ [contender]: { packages, bytes, packed? } }`. */
export function installedSizes(names) {
  const sizes = {};
  for (const name of names) {
    if (name === "baseline") continue;
    if (name === "picomcp") {
      const [pack] = JSON.parse(
        execFileSync("npm", ["pack", "--dry-run", "--json"], { cwd: ROOT, encoding: "utf8" }),
      );
      const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
      sizes[name] = {
        packages: 1,
        dependencies: Object.keys(pkg.dependencies ?? {}).length,
        bytes: pack.unpackedSize,
        packed: pack.size,
      };
    } else {
      const dirs = closure(ROOTS[name] ?? []);
      // nested node_modules are counted once, as packages of their own
      const bytes = dirs.reduce((sum, d) => sum + bytesUnder(d) - nestedBytes(d), 0);
      sizes[name] = { packages: dirs.length, dependencies: Math.max(0, dirs.length - 1), bytes };
    }
  }
  return sizes;
}

function nestedBytes(dir) {
  const nested = join(dir, "node_modules");
  return existsSync(nested) ? bytesUnder(nested) : 0;
}
