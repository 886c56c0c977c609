import { describe, expect, it } from "vitest";
import { compileJsonSchema, type JsonSchemaObject } from "./json-schema.js";

const messages = (schema: JsonSchemaObject | boolean, value: unknown) =>
  compileJsonSchema(schema)(value).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
// `then` as a key trips the linter's thenable check: these schemas come from JSON text
const json = (text: string) => JSON.parse(text) as JsonSchemaObject;

type Case = readonly [JsonSchemaObject, unknown, readonly string[]];
const CASES: { readonly [topic: string]: readonly Case[] } = {
  unevaluatedProperties: [
    [{ allOf: [{ properties: { a: {} } }], unevaluatedProperties: false }, { a: 1 }, []],
    [
      { allOf: [{ properties: { a: {} } }], unevaluatedProperties: false },
      { a: 1, extra: 2 },
      ["extra: unexpected property"],
    ],
    [
      {
        anyOf: [{ properties: { a: { type: "string" } } }, { properties: { b: {} } }],
        unevaluatedProperties: false,
      },
      { a: 1, b: 2 },
      ["a: unexpected property"],
    ],
    [
      json('{"if":{"required":["a"]},"then":{"properties":{"b":{}}},"unevaluatedProperties":false}'),
      { a: 1, b: 2 },
      ["a: unexpected property"],
    ],
    [
      {
        $defs: { base: { properties: { id: {} } } },
        $ref: "#/$defs/base",
        properties: { name: {} },
        unevaluatedProperties: false,
      },
      { id: 1, name: "x" },
      [],
    ],
    [
      { properties: { a: {} }, unevaluatedProperties: { type: "number" } },
      { a: "x", b: "y" },
      ["b: expected number, received string"],
    ],
    [
      { not: { required: ["a"], properties: { b: {} } }, unevaluatedProperties: false },
      { b: 1 },
      ["b: unexpected property"],
    ],
  ],
  unevaluatedItems: [
    [
      { prefixItems: [{ type: "string" }], unevaluatedItems: false },
      ["a", "b"],
      ["[1]: no value is allowed here"],
    ],
    [{ allOf: [{ prefixItems: [{}, {}] }], unevaluatedItems: false }, [1, 2], []],
    [{ contains: { type: "string" }, unevaluatedItems: { type: "number" } }, ["a", 1, "b"], []],
    [
      { contains: { type: "string" }, unevaluatedItems: { type: "number" } },
      ["a", true],
      ["[1]: expected number, received boolean"],
    ],
  ],
  dependentSchemas: [
    [{ dependentSchemas: { card: { required: ["cvv"] } } }, { card: 1 }, ["cvv: is required"]],
    [{ dependentSchemas: { card: { required: ["cvv"] } } }, { other: 1 }, []],
  ],
  draft07: [
    [
      { dependencies: { a: ["b"], c: { required: ["d"] } } },
      { a: 1, c: 1 },
      ['b: is required when "a" is present', "d: is required"],
    ],
    [
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        definitions: { n: { type: "number" } },
        properties: { x: { $ref: "#/definitions/n" } },
      },
      { x: "1" },
      ["x: expected number, received string"],
    ],
    [
      { items: [{ type: "string" }], additionalItems: { type: "number" } },
      ["a", 1, "b"],
      ["[2]: expected number, received string"],
    ],
    [
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        definitions: { a: { $id: "#A", type: "string" } },
        $ref: "#A",
      },
      1,
      ["expected string, received number"],
    ],
  ],
  anchors_and_ids: [
    [
      { $defs: { s: { $anchor: "str", type: "string" } }, properties: { a: { $ref: "#str" } } },
      { a: 1 },
      ["a: expected string, received number"],
    ],
    [
      {
        $id: "https://example.com/root.json",
        properties: { a: { $ref: "item.json" } },
        $defs: { item: { $id: "item.json", type: "integer" } },
      },
      { a: 1.5 },
      ["a: expected integer, received number"],
    ],
    [
      // a relative reference resolves against the nearest $id, not the root's
      {
        $id: "https://example.com/a/root.json",
        $defs: {
          inner: { $id: "https://example.com/b/inner.json", $ref: "leaf.json" },
          leaf: { $id: "https://example.com/b/leaf.json", type: "string" },
          wrong: { $id: "https://example.com/a/leaf.json", type: "number" },
        },
        $ref: "https://example.com/b/inner.json",
      },
      1,
      ["expected string, received number"],
    ],
  ],
  dynamicRef: [
    [
      {
        $id: "https://example.com/strict-list",
        $ref: "list",
        $defs: {
          item: { $dynamicAnchor: "item", type: "string" },
          list: {
            $id: "list",
            type: "array",
            items: { $dynamicRef: "#item" },
            $defs: { item: { $dynamicAnchor: "item" } },
          },
        },
      },
      ["a", 1],
      ["[1]: expected string, received number"],
    ],
  ],
  exactMultipleOf: [
    [{ type: "integer", multipleOf: 2 }, 1000000001, ["must be a multiple of 2"]],
    [{ type: "integer", multipleOf: 2 }, 1000000002, []],
    [{ multipleOf: 0.01 }, 0.07, []],
    [{ multipleOf: 0.01 }, 19.99, []],
    [{ multipleOf: 0.01 }, 19.991, ["must be a multiple of 0.01"]],
    [{ multipleOf: 0.1 }, 0.30000000000000004, ["must be a multiple of 0.1"]],
    [{ multipleOf: 1e-8 }, 12391239123, []],
    [{ multipleOf: 0.123456789 }, 1e308, ["must be a multiple of 0.123456789"]],
    [{ multipleOf: 3 }, 4.5, ["must be a multiple of 3"]],
  ],
  deepEquality: [
    [{ const: { a: [1, { b: 2 }] } }, { a: [1, { b: 2 }] }, []],
    [{ enum: [[1, 2], { x: null }] }, { x: null }, []],
    [{ enum: [[1, 2], { x: null }] }, [2, 1], ['must be one of [1,2], {"x":null}']],
    [{ const: false }, 0, ["must be false"]],
  ],
};

describe("2020-12 keywords", () => {
  for (const [topic, cases] of Object.entries(CASES)) {
    it.each(cases.map(([schema, value, expected]) => ({ schema, value, expected })))(
      `${topic}: $schema against $value`,
      ({ schema, value, expected }) => {
        expect(messages(schema, value)).toEqual(expected);
      },
    );
  }

  it("returns one frozen empty list for every valid value", () => {
    const validate = compileJsonSchema({ type: "object", properties: { a: { type: "string" } } });
    const first = validate({ a: "x" });
    expect(first).toEqual([]);
    expect(Object.isFrozen(first)).toBe(true);
    expect(validate({ a: "y" })).toBe(first);
  });
});

describe("refused at registration, by name", () => {
  it.each([
    [
      { nullable: true },
      /unsupported keyword "nullable" at # \(OpenAPI's "nullable"; use "type": \["…", "null"\]\)/,
    ],
    [{ properties: { a: { minLenght: 2 } } }, /unsupported keyword "minLenght" at #\/properties\/a/],
    [{ $recursiveRef: "#" }, /unsupported keyword "\$recursiveRef" at #.*use "\$dynamicRef"/],
    [
      { $ref: "https://example.com/s.json" },
      /Unsupported \$ref "https:\/\/example.com\/s.json" at #: a remote schema.*never fetches/,
    ],
    [{ $ref: "other.json#/a" }, /a schema outside this document/],
    [
      { $schema: "http://json-schema.org/draft-04/schema#" },
      /"\$schema" .* is not supported: picomcp validates JSON Schema 2020-12/,
    ],
    [
      { $schema: "http://json-schema.org/draft-07/schema#", prefixItems: [{}] },
      /"prefixItems" at # is not a draft-07 keyword/,
    ],
    [
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        $ref: "#/definitions/a",
        definitions: { a: {} },
        type: "string",
      },
      /"type" at # sits beside "\$ref", which draft-07 ignores/,
    ],
    [{ additionalItems: false }, /"additionalItems" at # has no effect without an array "items"/],
    [
      { pattern: "^(a)\\1$" },
      /pattern "\^\(a\)\\\\1\$" at #\/pattern uses a backreference \(\\1\), which picomcp's linear-time matcher cannot run/,
    ],
    [
      { patternProperties: { "(?<q>['\"]).*\\k<q>": {} } },
      /uses a backreference \(\\k<…>\).*jsonSchemaValidator/,
    ],
    [
      { $defs: { a: { $id: "x.json" }, b: { $id: "x.json" } } },
      /"\$id" .*x.json" at #\/\$defs\/b is used twice/,
    ],
    [{ $anchor: "1bad" }, /"\$anchor" at # must be a plain name/],
  ] as const)("refuses %j", (schema, message) => {
    expect(() => compileJsonSchema(schema as JsonSchemaObject)).toThrow(message);
  });

  it("allows annotations and x- extensions, x-mcp-header included", () => {
    const schema = {
      type: "object",
      $comment: "c",
      properties: { region: { type: "string", "x-mcp-header": "Region", examples: ["eu"], writeOnly: true } },
    };
    expect(messages(schema, { region: "eu" })).toEqual([]);
  });
});
