/**
 * picomcp's validator and ajv (2020 build) give the same verdict on random values, for schemas where both
 * follow the spec (no decimal `multipleOf`: ajv divides in floating point; see also `contains` below).
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileJsonSchema, type JsonSchemaObject } from "../../src/schema/json-schema.js";

const SCHEMAS: { readonly [name: string]: JsonSchemaObject } = {
  tool: {
    type: "object",
    $defs: {
      user: {
        type: "object",
        properties: { login: { type: "string", pattern: "^[a-z]+$" } },
        required: ["login"],
      },
    },
    properties: {
      owner: { type: "string", minLength: 1, maxLength: 3 },
      tags: { type: "array", items: { type: "string" }, maxItems: 3, uniqueItems: true },
      users: { type: "array", items: { $ref: "#/$defs/user" } },
      priority: { enum: ["low", "high", 1, null] },
      estimate: { type: "integer", minimum: 0, multipleOf: 2 },
      milestone: { anyOf: [{ type: "integer", minimum: 1 }, { type: "null" }] },
    },
    required: ["owner"],
    additionalProperties: false,
  },
  unevaluated: {
    type: "object",
    properties: { a: { type: "number" } },
    allOf: [{ properties: { b: { type: "string" } } }],
    anyOf: [{ properties: { c: { type: "boolean" } }, required: ["c"] }, { properties: { d: {} } }],
    patternProperties: { "^x": true },
    unevaluatedProperties: { type: "null" },
  },
  conditional: JSON.parse(
    '{"if":{"properties":{"kind":{"const":"card"}},"required":["kind"]},"then":{"required":["number"]},' +
      '"else":{"not":{"required":["number"]}},"dependentSchemas":{"a":{"minProperties":2}},' +
      '"dependentRequired":{"b":["c"]},"propertyNames":{"maxLength":6}}',
  ),
  // apart: with prefixItems beside it, ajv 8.20 lets `contains` pass when no item matches ([] or [[]])
  contains: {
    type: "array",
    items: { type: ["null", "string"] },
    contains: { type: "null" },
    maxContains: 2,
  },
  arrays: {
    type: "array",
    prefixItems: [{ type: "string" }, { type: "number" }],
    allOf: [{ prefixItems: [true, true, { type: "null" }] }],
    unevaluatedItems: { type: "boolean" },
  },
};

const keys = fc.constantFrom(
  "owner",
  "tags",
  "users",
  "priority",
  "estimate",
  "milestone",
  "a",
  "b",
  "c",
  "d",
  "x1",
  "kind",
  "number",
  "extra",
);
const leaf = fc.oneof(
  fc.constantFrom(null, true, false, 0, 1, 2, 3, -1, 1.5, "", "a", "ab", "abcd", "low", "card", "A"),
  fc.string({ maxLength: 4 }),
);
const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(keys, tie("v"), { maxKeys: 5 }),
  ),
})).v;

describe("picomcp and ajv agree", () => {
  const ajv = new Ajv2020({ strict: false, logger: false });
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`on random values for the ${name} schema`, () => {
      const ours = compileJsonSchema(schema);
      const theirs = ajv.compile(schema);
      fc.assert(
        fc.property(value, (v) => {
          expect(ours(v).length === 0).toBe(theirs(v));
        }),
        { numRuns: 2000, seed: 42 },
      );
    });
  }
});
