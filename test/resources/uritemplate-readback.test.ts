/**
 * Read-back over the RFC 6570 test suite: for every template of its expansion files, random values of the
 * types the suite gives its variables are expanded by picomcp, the URI is matched back, and the result
 * must be the values as RFC 6570 lets a URI carry them (normalised below). The templates where two
 * different value sets expand to the same URI are listed in {@link AMBIGUOUS} with the reason and a
 * witness pair, which the test checks; docs/resources.md lists the same.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  parseUriTemplate,
  type UriExpandValues,
  type UriTemplate,
  UriTemplateError,
  type UriVariable,
} from "../../src/resources/template.js";
import { plain, valueUnits } from "../template-cases.js";

interface Group {
  readonly variables: Record<string, unknown>;
  readonly testcases: readonly [template: string, expected: unknown][];
}

const dir = new URL("../suites/uritemplate-test/", import.meta.url);
const files = ["spec-examples.json", "spec-examples-by-section.json", "extended-tests.json"];

/** Each template of the expansion files once, with the values its group gives (for their types). */
const suite = new Map<string, Record<string, unknown>>();
for (const file of files) {
  const groups = JSON.parse(readFileSync(new URL(file, dir), "utf8")) as Record<string, Group>;
  for (const { variables, testcases } of Object.values(groups)) {
    for (const [template] of testcases) if (!suite.has(template)) suite.set(template, variables);
  }
}

/**
 * Two value sets that expand to the same URI and mean different things; or values whose URI `match`
 * cannot read (`unread`); or none, for a template refused for `match`.
 */
type Witness = readonly [UriExpandValues, UriExpandValues] | { readonly unread: UriExpandValues } | null;

/**
 * The templates whose URI cannot tell two value sets apart, each with why and two such value sets
 * (expanding to the same URI, reading back differently); a template `parseUriTemplate` refuses for
 * `match` is there too, with the value sets that make its shape ambiguous.
 */
const UNREAD =
  "with every variable of {#…} undefined, the '#' is not written and the literal after it stands in the path, where the template has none";
const AMP = "a {&…} with no query before it writes '&' where no query starts (refused at registration)";

const AMBIGUOUS: Record<string, { readonly reason: string; readonly witness: Witness }> = {
  "?{undef,y}": {
    reason:
      "an unnamed expression fills its variables from the left: an undefined one before a defined one reads as the first",
    witness: [{ y: "768" }, { undef: "768" }],
  },
  "{x,hello,y}": {
    reason: "the same: {x,y,z} with y undefined reads z's value as y's",
    witness: [
      { x: "1024", y: "768" },
      { x: "1024", hello: "768" },
    ],
  },
  "up{+path}{var}/here": {
    reason: "two variables with no literal between them (refused at registration)",
    witness: [{ path: "a", var: "b" }, { path: "ab" }],
  },
  "{;keys*}": {
    reason:
      "an exploded map in {;…} writes its keys as names, as a list writes its own name: ;keys=a is the map {keys: a} or the list [a], and match reads lists",
    witness: [{ keys: { keys: "a" } }, { keys: ["a"] }],
  },
  "{#path,x}/here": { reason: UNREAD, witness: { unread: {} } },
  "{#path:6}/here": { reason: UNREAD, witness: { unread: {} } },
  "{/list*,path:4}": {
    reason: "an exploded variable with another in its expression (refused at registration)",
    witness: [{ list: ["a", "b"] }, { list: ["a"], path: "b" }],
  },
  "{.who,who}": {
    reason: "a name used twice (refused at registration: match reads one value per name)",
    witness: null,
  },
  "{/who,who}": {
    reason: "a name used twice (refused at registration: match reads one value per name)",
    witness: null,
  },
  "{/var:1,var}": {
    reason: "a name used twice (refused at registration: match reads one value per name)",
    witness: null,
  },
  "{&count*}": { reason: AMP, witness: null },
  "{&half}": { reason: AMP, witness: null },
  "{&keys*}": { reason: AMP, witness: null },
  "{&keys}": { reason: AMP, witness: null },
  "{&list*}": { reason: AMP, witness: null },
  "{&list}": { reason: AMP, witness: null },
  "{&var:3}": { reason: AMP, witness: null },
  "{&who}": { reason: AMP, witness: null },
  "{&x,y,empty}": { reason: AMP, witness: null },
  "{&x,y,undef}": { reason: AMP, witness: null },
};

/** The suite's value of a variable says its type: a list, a map, or a string. */
const kindOf = (v: unknown) =>
  Array.isArray(v) ? "list" : v !== null && typeof v === "object" ? "map" : "string";

/**
 * Characters a value is drawn from, by operator. Left out: unreserved punctuation (`.-_~`, which `expand`
 * writes as it is, so `{.x}` could not tell `a.b` from `a` and `b`), the letters of the suite's literals,
 * and, for `{+x}` and `{#x}`, what they keep raw that could end them (`/ , ? # & %`).
 */
const SIMPLE = fc.constantFrom(...valueUnits, "/", "?", "#", ",", "&", "%", "%2F", "[");
const RESERVED = fc.constantFrom(...valueUnits);

/** The variables of each expression of `t`, in order. */
function expressions(t: UriTemplate): UriVariable[][] {
  const out: UriVariable[][] = [];
  const text = t.template;
  let i = 0;
  for (let at = text.indexOf("{"); at >= 0; at = text.indexOf("{", at + 1)) {
    const n = text.slice(at + 1, text.indexOf("}", at)).split(",").length;
    out.push(t.variables.slice(i, i + n));
    i += n;
  }
  return out;
}

/** Random values for `t`: of the suite's types, each variable that may be absent sometimes undefined. */
function valuesOf(t: UriTemplate, suiteValues: Record<string, unknown>): fc.Arbitrary<UriExpandValues> {
  const groups = expressions(t).map((vars) => {
    const op = vars[0]!.operator;
    const named = op === ";" || op === "?" || op === "&";
    const one = vars.map((v) => arbitraryOf(v, kindOf(suiteValues[v.name]), op));
    // named: any of them may be undefined; unnamed: a defined prefix (the first always, without a lead)
    const defined = named
      ? fc.array(fc.boolean(), { minLength: vars.length, maxLength: vars.length })
      : fc
          .integer({ min: op === "" || op === "+" ? 1 : 0, max: vars.length })
          .map((k) => vars.map((_, i) => i < k));
    return fc
      .tuple(defined, fc.tuple(...one))
      .map(([on, vals]) => vars.map((v, i) => [v.name, on[i] ? vals[i] : undefined] as const));
  });
  return fc.tuple(...groups).map((gs) => {
    const out: Record<string, unknown> = {};
    for (const g of gs) for (const [name, v] of g) if (v !== undefined) out[name] = v;
    return out as UriExpandValues;
  });
}

/** Random values of one variable, of the type the suite gives it. */
function arbitraryOf(v: UriVariable, kind: string, op: string): fc.Arbitrary<unknown> {
  const unit = op === "+" || op === "#" ? RESERVED : SIMPLE;
  const text = fc.array(unit, { maxLength: 5 }).map((a) => a.join(""));
  if (kind === "string" || v.prefix > 0) return text;
  const item = fc.array(unit, { minLength: 1, maxLength: 4 }).map((a) => a.join(""));
  if (kind === "list") return fc.array(item, { maxLength: 3 });
  return fc
    .uniqueArray(
      fc.tuple(
        item.map((k) => `k${k}`),
        text,
      ),
      { maxLength: 3, selector: (e) => e[0] },
    )
    .map((e) => Object.fromEntries(e));
}

/**
 * What `match` reads back for `values`, as RFC 6570 writes them: an empty list or map is undefined; a
 * list or map without explode is its items joined by `,`; an exploded map in the path is its `k=v` items;
 * an exploded list in the query is the record of its repeated key; a prefix keeps n code points; an
 * undefined `{x}` writes what an empty one does; an exploded path variable without items is `[]`.
 */
function normalise(t: UriTemplate, values: UriExpandValues): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const firsts = new Set(expressions(t).map((e) => e[0]));
  for (const v of t.variables) {
    let x: unknown = values[v.name];
    if (Array.isArray(x) && x.length === 0) x = undefined;
    if (x !== null && typeof x === "object" && !Array.isArray(x) && Object.keys(x).length === 0)
      x = undefined;
    const lead = v.operator !== "" && v.operator !== "+";
    const first = firsts.has(v);
    if (x === undefined) {
      if (v.explode && !v.query) out[v.name] = [];
      else if (!lead && !v.query && first) out[v.name] = "";
      continue;
    }
    if (typeof x === "string" && v.explode) out[v.name] = v.query ? { [v.name]: x } : [x];
    else if (typeof x === "string")
      out[v.name] = v.prefix > 0 ? Array.from(x).slice(0, v.prefix).join("") : x;
    else if (Array.isArray(x)) {
      if (!v.explode) out[v.name] = x.join(",");
      else if (v.query) out[v.name] = { [v.name]: x.length === 1 ? x[0] : x };
      else out[v.name] = x;
    } else {
      const entries = Object.entries(x as Record<string, string>);
      if (!v.explode) out[v.name] = entries.flat().join(",");
      else if (v.query) out[v.name] = Object.fromEntries(entries);
      else out[v.name] = entries.map(([k, y]) => `${k}=${y}`);
    }
  }
  return out;
}

describe("RFC 6570 read-back: every template of the suite", () => {
  it("has the templates of the three expansion files, and lists only templates of theirs", () => {
    expect(suite.size).toBe(164);
    expect(Object.keys(AMBIGUOUS).filter((t) => !suite.has(t))).toEqual([]);
  });

  for (const [template, suiteValues] of suite) {
    const listed = AMBIGUOUS[template];
    if (listed !== undefined) {
      it(`lists ${template} as ambiguous: ${listed.reason}`, () => {
        if (listed.witness === null) {
          expect(() => parseUriTemplate(template)).toThrow(UriTemplateError);
          return;
        }
        const t = parseUriTemplate(template, { expandOnly: true });
        if ("unread" in listed.witness) {
          expect(t.match(t.expand(listed.witness.unread))).toBeNull();
          return;
        }
        const [a, b] = listed.witness;
        expect(t.expand(a)).toBe(t.expand(b));
        expect(normalise(t, a)).not.toStrictEqual(normalise(t, b));
      });
      continue;
    }
    it(`reads back what ${template} expands`, () => {
      const t = parseUriTemplate(template);
      fc.assert(
        fc.property(valuesOf(t, suiteValues), (values) => {
          expect(plain(t.match(t.expand(values)))).toStrictEqual(normalise(t, values));
        }),
        { numRuns: 200 },
      );
    });
  }
});
