/**
 * Every `@example` in src/'s JSDoc is a region of test/jsdoc-examples.ts, which `npm run typecheck`
 * compiles: an example that would not compile, or that drifted from its region, fails here
 * (`npm run docs:sync` writes the regions into the comments).
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the repository's scripts, without types
import { examples, regions } from "../../scripts/jsdoc-examples.js";

type Example = { key: string; shown: string[]; region: string[] | undefined };

describe("the JSDoc examples of src/", () => {
  const all = examples() as Example[];

  it("are there, on the main entry points", () => {
    const files = new Set(all.map((e) => e.key.split("#")[0]));
    for (const f of ["server.ts", "stdio.ts", "testing.ts", "http/index.ts", "http/node.ts", "auth/index.ts"])
      expect(files).toContain(f);
  });

  it.each(all.map((e) => [e.key, e] as const))("%s is its type-checked region, word for word", (_key, e) => {
    expect(e.region, `no region "// @example ${e.key}" in test/jsdoc-examples.ts`).toBeDefined();
    expect(e.shown).toEqual(e.region);
  });

  it("has no region that names no example", () => {
    const keys = new Set(all.map((e) => e.key));
    expect([...(regions() as Map<string, string[]>).keys()].filter((k) => !keys.has(k))).toEqual([]);
  });
});
