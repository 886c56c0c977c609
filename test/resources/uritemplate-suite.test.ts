/**
 * The RFC 6570 test suite (uritemplate-test, vendored in test/suites/uritemplate-test): every expansion
 * case must give its result (or one of its results), every negative case must be refused, at parse time
 * or at expansion. Templates are parsed with `expandOnly`, since some (`{a}{b}`, `{/x:1,x}`) expand but
 * could not be matched back.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  parseUriTemplate,
  type UriExpandValues,
  type UriTemplate,
  UriTemplateError,
} from "../../src/resources/template.js";

interface Group {
  readonly variables: UriExpandValues;
  readonly testcases: readonly [template: string, expected: string | readonly string[] | false][];
}

const dir = new URL("../suites/uritemplate-test/", import.meta.url);
const files = [
  "spec-examples.json",
  "spec-examples-by-section.json",
  "extended-tests.json",
  "negative-tests.json",
];

/** Every case of the four files, with its group's variables. */
const suiteCases = files.flatMap((file) =>
  Object.entries(JSON.parse(readFileSync(new URL(file, dir), "utf8")) as Record<string, Group>).flatMap(
    ([group, { variables, testcases }]) =>
      testcases.map(([template, expected]) => ({ file, group, template, expected, variables })),
  ),
);

describe("the RFC 6570 test suite", () => {
  it("has the cases of all four files", () => {
    expect(suiteCases.length).toBe(270);
  });

  for (const c of suiteCases) {
    const name = `${c.file} · ${c.group} · ${c.template}`;
    if (c.expected === false) {
      it(`refuses ${name}`, () => {
        let error: unknown;
        try {
          parseUriTemplate(c.template, { expandOnly: true }).expand(c.variables);
        } catch (e) {
          error = e;
        }
        expect(error instanceof UriTemplateError || error instanceof TypeError).toBe(true);
      });
    } else {
      const accepted = typeof c.expected === "string" ? [c.expected] : c.expected;
      it(`expands ${name}`, () => {
        expect(accepted).toContain(parseUriTemplate(c.template, { expandOnly: true }).expand(c.variables));
      });
    }
  }
});

/**
 * Whether the URI `t` writes for `values` determines them, as docs/resources.md says: every variable
 * defined, scalars (in `{+x}`/`{#x}` without a `%XX`, which is passed through and then decoded), lists
 * only exploded in the path, maps only exploded in the query.
 */
function determined(t: UriTemplate, values: UriExpandValues): boolean {
  return t.variables.every((v) => {
    const x = values[v.name];
    if (x === null || x === undefined) return false;
    if (typeof x !== "object") {
      const reserved = v.operator === "+" || v.operator === "#";
      return !(reserved && /%[0-9A-Fa-f]{2}/.test(String(x)));
    }
    if (Array.isArray(x)) return v.explode && !v.query && x.length > 0;
    return v.explode && v.query && Object.keys(x).length > 0;
  });
}

describe("matching what the RFC 6570 test suite expands", () => {
  const cases = suiteCases.filter((c) => {
    if (c.expected === false) return false;
    try {
      return determined(parseUriTemplate(c.template), c.variables);
    } catch {
      return false; // a template that match cannot read back: {a}{b}, a repeated name, a leading {&…}
    }
  });

  it("covers most of the expansion cases", () => {
    expect(cases.length).toBe(133);
  });

  for (const c of cases) {
    it(`matches back ${c.file} · ${c.template}`, () => {
      const t = parseUriTemplate(c.template);
      const uri = t.expand(c.variables);
      const values = t.match(uri);
      expect(values).not.toBeNull();
      expect(t.expand(values as UriExpandValues)).toBe(uri);
    });
  }
});
