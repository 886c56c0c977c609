/**
 * One tier. No file of src/ narrows the public `Context` to the dispatcher's `RequestContext`: the
 * built-in extensions reach a request through the same `Context` an application's extension gets,
 * and the compiler holds them to it (`run` and every handler of the seam are function-typed
 * properties, so a handler declaring `ctx: RequestContext` does not compile); this test catches the
 * casts the compiler lets through.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src");

/** The files that make and run a `RequestContext`: the context itself and the dispatcher. */
const OWNERS = (file: string) => file === "context.ts" || file.startsWith("dispatch/");

/**
 * Narrowings still waiting for another change, by file, with how many: `subscriptions/listen`
 * becomes an extension of its own on the public seam in a change of its own.
 */
const PENDING: { readonly [file: string]: number } = { "ext/protocol.ts": 1 };

/** Code without comments, so that a doc comment naming the class does not count. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");

/** The lines of `text` (a file of src/ named `file`) that reach past `Context` to the internal class. */
export function narrowings(file: string, text: string): string[] {
  const found: string[] = [];
  for (const line of code(text).split("\n")) {
    // a cast is a narrowing wherever it is: the compiler lets `ctx as RequestContext` through
    const cast = /\bas\s+RequestContext\b|<RequestContext>/.test(line);
    // outside its owners, any mention (an import, a parameter, a field) is a way past the seam
    const named = !OWNERS(file) && /\bRequestContext\b/.test(line) && !/^\s*import\b/.test(line);
    if (cast || named) found.push(`${file}: ${line.trim()}`);
  }
  return found;
}

function sources(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .map((f) => f.split("\\").join("/"))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
}

describe("one tier: the built-ins reach a request only through Context", () => {
  it("flags the narrowings the built-ins used to make", () => {
    // one line of each way the seam was crossed before (eight files, nineteen places)
    expect(narrowings("ext/tasks.ts", "        const ctx = context as RequestContext;")).toHaveLength(1);
    expect(narrowings("tools/tools.ts", "  run: (p, ctx: RequestContext) => callTool(p, ctx),")).toHaveLength(
      1,
    );
    expect(narrowings("ext/task-runner.ts", "  readonly ctx: RequestContext;")).toHaveLength(1);
    expect(narrowings("resources/options.ts", "  list?: (ctx: RequestContext) => unknown;")).toHaveLength(1);
    expect(narrowings("dispatch/methods.ts", "  const c = ctx as RequestContext;")).toHaveLength(1);
    // the dispatcher makes and runs the class: naming it there is its job
    expect(narrowings("dispatch/methods.ts", "  ctx: RequestContext,")).toEqual([]);
    expect(narrowings("tools/tools.ts", "/** not a RequestContext: a Context */")).toEqual([]);
  });

  it("finds none in src/ but those waiting for the listen change", () => {
    const byFile: { [file: string]: string[] } = {};
    for (const file of sources(src)) {
      const found = narrowings(file, readFileSync(join(src, file), "utf8"));
      if (found.length) byFile[file] = found;
    }
    const counts = Object.fromEntries(Object.entries(byFile).map(([f, lines]) => [f, lines.length]));
    expect(counts, JSON.stringify(byFile, null, 2)).toEqual(PENDING);
  });
});
