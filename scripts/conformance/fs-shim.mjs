// Node 20 has no fs.globSync (Node 22), which the conformance CLI imports at load time. This module is
// node:fs plus a small globSync, handed to the CLI alone by hooks.mjs.
import fs from "node:fs";
import path from "node:path";

export * from "node:fs";
export default fs;

const toRegExp = (pattern) =>
  new RegExp(
    `^${pattern
      .split("/")
      .map((s) =>
        s === "**"
          ? "(?:.*/)?"
          : `${s
              .replace(/[.+^${}()|[\]\\]/g, "\\$&")
              .replace(/\*/g, "[^/]*")
              .replace(/\?/g, "[^/]")}/`,
      )
      .join("")
      .replace(/\/$/, "")}$`,
  );

export function globSync(pattern, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const res = (Array.isArray(pattern) ? pattern : [pattern]).map(toRegExp);
  const out = [];
  const walk = (rel) => {
    let entries = [];
    try {
      entries = fs.readdirSync(path.join(cwd, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (res.some((re) => re.test(r))) out.push(r);
      if (e.isDirectory()) walk(r);
    }
  };
  walk("");
  return out;
}
