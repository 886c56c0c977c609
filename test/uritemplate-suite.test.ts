/**
 * The RFC 6570 test suite (uritemplate-test, vendored in test/suites/uritemplate-test): every expansion
 * case must give its result (or one of its results), every negative case must be refused, at parse time
 * or at expansion. Templates are parsed with `expandOnly`, since some (`{a}{b}`, `{/x:1,x}`) expand but
 * could not be matched back.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseUriTemplate, type UriExpandValues, UriTemplateError } from "../src/resources/template.js";

interface Group {
  readonly variables: UriExpandValues;
  readonly testcases: readonly [template: string, expected: string | readonly string[] | false][];
}

const dir = new URL("./suites/uritemplate-test/", import.meta.url);
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
