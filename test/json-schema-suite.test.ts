/**
 * The official JSON-Schema-Test-Suite, draft 2020-12, required tests (vendored under
 * test/suites/json-schema-test-suite/, see its README): every case runs through picomcp's validator.
 * The groups in SKIP need a document from outside the schema; picomcp refuses those at registration
 * (it never fetches), and this file checks that it does.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compileJsonSchema, type JsonSchemaObject } from "../src/schema/json-schema.js";

const dir = join(dirname(fileURLToPath(import.meta.url)), "suites", "json-schema-test-suite", "tests");

interface Group {
  readonly description: string;
  readonly schema: JsonSchemaObject | boolean;
  readonly tests: readonly {
    readonly description: string;
    readonly data: unknown;
    readonly valid: boolean;
  }[];
}

const REMOTE =
  "a $ref to a document outside the schema (the suite's remotes/ or the meta-schema): never fetched";
const METASCHEMA = "a custom meta-schema ($schema outside the document): only 2020-12 and draft-07 are known";
/** `file | group` → why the group is refused at registration instead of run. */
const SKIP: { readonly [group: string]: string } = {
  "defs.json | validate definition against metaschema": REMOTE,
  "ref.json | remote ref, containing refs itself": REMOTE,
  "dynamicRef.json | strict-tree schema, guards against misspelled properties": REMOTE,
  "dynamicRef.json | tests for implementation dynamic anchor and reference link": REMOTE,
  "dynamicRef.json | $ref and $dynamicAnchor are independent of order - $defs first": REMOTE,
  "dynamicRef.json | $ref and $dynamicAnchor are independent of order - $ref first": REMOTE,
  "dynamicRef.json | $ref to $dynamicRef finds detached $dynamicAnchor": REMOTE,
  "vocabulary.json | schema that uses custom metaschema with with no validation vocabulary": METASCHEMA,
  "vocabulary.json | ignore unrecognized optional vocabulary": METASCHEMA,
};
/** Every group of refRemote.json is about remote documents. */
const skipReason = (file: string, group: Group) =>
  file === "refRemote.json" ? REMOTE : SKIP[`${file} | ${group.description}`];

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
  it("runs all 1299 cases but the remote ones, more than 99% of them", () => {
    expect(total).toBe(1299);
    expect(skipped).toBe(53);
    expect((total - skipped) / (total - 53)).toBeGreaterThanOrEqual(0.99);
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
