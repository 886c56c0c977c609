/**
 * The official JSON-Schema-Test-Suite, draft 2020-12, required tests (vendored under
 * test/suites/json-schema-test-suite/, see its README): every case runs through picomcp's validator.
 * The groups in SKIP need a document from outside the schema (the suite's `remotes/`); picomcp refuses those
 * at registration (it never fetches), and this file checks that it does. The 2020-12 meta-schema is not
 * outside: picomcp bundles it, so the groups that refer to it by its URI run like any other.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compileJsonSchema, type JsonSchemaObject } from "../../src/schema/json-schema.js";

const dir = join(
  join(dirname(fileURLToPath(import.meta.url)), ".."),
  "suites",
  "json-schema-test-suite",
  "tests",
);

interface Group {
  readonly description: string;
  readonly schema: JsonSchemaObject | boolean;
  readonly tests: readonly {
    readonly description: string;
    readonly data: unknown;
    readonly valid: boolean;
  }[];
}

/**
 * `file | group` → why the group is refused at registration instead of run: it needs a document from
 * the suite's `remotes/`. Shared with scripts/json-schema-suite.js, which runs ajv over the same cases.
 */
const SKIP: { readonly [group: string]: string } = JSON.parse(
  readFileSync(join(dir, "..", "remote.json"), "utf8"),
);
const skipReason = (file: string, group: Group) => SKIP[`${file} | ${group.description}`];

const files = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((file) => [file, JSON.parse(readFileSync(join(dir, file), "utf8")) as Group[]] as const);

const total = files.reduce((n, [, groups]) => n + groups.reduce((m, g) => m + g.tests.length, 0), 0);
const skipped = files.reduce(
  (n, [file, groups]) =>
    n + groups.filter((g) => skipReason(file, g)).reduce((m, g) => m + g.tests.length, 0),
  0,
);

describe("JSON-Schema-Test-Suite draft2020-12 (required)", () => {
  it("runs all 1,250 cases that need no remote document (of 1,299)", () => {
    expect(total).toBe(1299);
    expect(skipped).toBe(49);
    expect(total - skipped).toBe(1250);
  });

  it("refers to the bundled meta-schema by its URI, never fetched", () => {
    const check = compileJsonSchema({ $ref: "https://json-schema.org/draft/2020-12/schema" });
    expect(check({ $defs: { a: { type: "string" } } })).toEqual([]);
    expect(check({ $defs: { a: { type: 1 } } }).length).toBeGreaterThan(0);
    expect(check({ minLength: -1 }).length).toBeGreaterThan(0);
    // a vocabulary's meta-schema too, relative to the document's own base
    const core = compileJsonSchema({
      $id: "https://json-schema.org/draft/2020-12/x",
      $ref: "meta/validation",
    });
    expect(core({ type: "nope" }).length).toBeGreaterThan(0);
    expect(core({ type: "string" })).toEqual([]);
  });

  it("names only groups that exist in SKIP", () => {
    const names = new Set(files.flatMap(([file, groups]) => groups.map((g) => `${file} | ${g.description}`)));
    for (const key of Object.keys(SKIP)) expect(names).toContain(key);
  });

  for (const [file, groups] of files) {
    describe(file, () => {
      for (const group of groups) {
        const reason = skipReason(file, group);
        if (reason) {
          it(`refuses at registration: ${group.description} (${reason})`, () => {
            expect(() => compileJsonSchema(group.schema)).toThrow(
              /never fetches remote or external schemas|"\$schema" .* is not supported/,
            );
          });
          continue;
        }
        describe(group.description, () => {
          const validate = compileJsonSchema(group.schema);
          it.each(group.tests.map((t) => [t.description, t] as const))("%s", (_, t) => {
            expect(validate(t.data).length === 0).toBe(t.valid);
          });
        });
      }
    });
  }
});
