// The @example blocks of src/'s JSDoc and the type-checked regions of test/jsdoc-examples.ts that
// they show (`// @example FILE#N` … `// @end`): read both, and write the regions into the comments.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

const root = new URL("..", import.meta.url);
const REGIONS = new URL("test/jsdoc-examples.ts", root);

/** The regions, by "FILE#N", each as its lines without their common indentation. */
export function regions() {
  const out = new Map();
  const lines = readFileSync(REGIONS, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*\/\/ @example (\S+)$/.exec(lines[i]);
    if (!m) continue;
    const body = [];
    for (i++; i < lines.length && !/^\s*\/\/ @end$/.test(lines[i]); i++) body.push(lines[i]);
    const indent = Math.min(...body.filter((l) => l.trim()).map((l) => /^ */.exec(l)[0].length));
    out.set(
      m[1],
      body.map((l) => l.slice(indent)),
    );
  }
  return out;
}

/** Every source file of src/ (tests aside), relative to src/. */
function sources() {
  return readdirSync(new URL("src/", root), { recursive: true })
    .map((f) => f.split("\\").join("/"))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .sort();
}

const EXAMPLE = /^(\s*)\* @example(?: (.*))?$/;

/** The @example blocks of `text`: where each starts and ends (line indexes), its prefix and its lines. */
function blocks(text) {
  const lines = text.split("\n");
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const m = EXAMPLE.exec(lines[i]);
    if (!m) continue;
    const prefix = `${m[1]}* `;
    const body = m[2] !== undefined ? [m[2]] : [];
    let end = i + 1;
    if (m[2] === undefined)
      for (; end < lines.length && !/^\s*\*(\/| @)/.test(lines[end]); end++)
        body.push(lines[end].replace(/^\s*\* ?/, ""));
    found.push({ start: i, end, prefix, inline: m[2] !== undefined, body });
  }
  return { lines, found };
}

/** Every example of src/ with the region that should be its text ("FILE#N": the N-th example of FILE). */
export function examples() {
  const all = regions();
  const out = [];
  for (const file of sources()) {
    const text = readFileSync(new URL(`src/${file}`, root), "utf8");
    blocks(text).found.forEach((b, n) => {
      const key = `${file}#${n + 1}`;
      out.push({ key, file, shown: b.body, region: all.get(key) });
    });
  }
  return out;
}

/** Writes each region into its comment; a one-line region stays on the `@example` line when it was there. */
export function sync() {
  const all = regions();
  for (const file of sources()) {
    const url = new URL(`src/${file}`, root);
    const text = readFileSync(url, "utf8");
    const { lines, found } = blocks(text);
    if (!found.length) continue;
    for (let n = found.length - 1; n >= 0; n--) {
      const b = found[n];
      const region = all.get(`${file}#${n + 1}`);
      if (!region) continue;
      const tag = b.prefix.replace(/\* $/, "* @example");
      const replaced =
        b.inline && region.length === 1
          ? [`${tag} ${region[0]}`]
          : [tag, ...region.map((l) => (l ? `${b.prefix}${l}` : b.prefix.trimEnd()))];
      lines.splice(b.start, b.end - b.start, ...replaced);
    }
    const synced = lines.join("\n");
    if (synced !== text) {
      writeFileSync(url, synced);
      console.log(`synced src/${file}`);
    }
  }
}
