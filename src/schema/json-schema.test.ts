import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileJsonSchema, formatPath, type JsonSchemaObject } from "./json-schema.js";
import { META_SCHEMA_IDS_2020_12, metaSchemas2020_12 } from "./json-schema-meta.js";

const issuesOf = (schema: JsonSchemaObject | boolean, value: unknown) => compileJsonSchema(schema)(value);
const messages = (schema: JsonSchemaObject | boolean, value: unknown) =>
  issuesOf(schema, value).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));

const CONFORMANCE = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } },
  },
  properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
  additionalProperties: false,
};

describe("the conformance suite's 2020-12 schema", () => {
  const validate = compileJsonSchema(CONFORMANCE);
  it("accepts a valid value", () => {
    expect(validate({ name: "Ada", address: { street: "1 Main St", city: "London" } })).toEqual([]);
  });
  it("names the nested field behind a $ref", () => {
    expect(validate({ name: "Ada", address: { city: 5 } })).toEqual([
      { path: "address.city", message: "expected string, received number" },
    ]);
  });
  it("rejects an extra property by name", () => {
    expect(validate({ name: "Ada", extra: true })).toEqual([
      { path: "extra", message: "unexpected property" },
    ]);
  });
});

// [schema, value, expected messages ([] = valid)]
// `then` as a key trips the linter's thenable check, so these come from JSON text, as schemas often do
const IF_THEN_ELSE = JSON.parse('{"if":{"type":"string"},"then":{"minLength":2},"else":{"minimum":10}}');
const IF_OBJECT = JSON.parse('{"if":{"type":"object"},"then":{"required":["a"]}}');

type Case = readonly [JsonSchemaObject | boolean, unknown, readonly string[]];
const KEYWORDS: { readonly [keyword: string]: readonly Case[] } = {
  type: [
    [{ type: "string" }, "x", []],
    [{ type: "string" }, 1, ["expected string, received number"]],
    [{ type: "integer" }, 2, []],
    [{ type: "integer" }, 2.5, ["expected integer, received number"]],
    [{ type: "number" }, Number.NaN, ["expected number, received NaN"]],
    [{ type: ["string", "null"] }, null, []],
    [{ type: ["string", "null"] }, [], ["expected string or null, received array"]],
    [{ type: "object" }, [], ["expected object, received array"]],
    [{ type: "array" }, {}, ["expected array, received object"]],
    [{ type: "boolean" }, undefined, ["expected boolean, received undefined"]],
  ],
  boolean_schemas: [
    [true, { anything: 1 }, []],
    [false, 1, ["no value is allowed here"]],
    [{ type: "object", properties: { gone: false } }, { gone: 1 }, ["gone: no value is allowed here"]],
  ],
  properties_required: [
    [{ type: "object", properties: { a: { type: "string" } } }, {}, []],
    [{ type: "object", required: ["a", "b"] }, { a: 1 }, ["b: is required"]],
    [{ properties: { a: { type: "string" } } }, "not an object", []],
    [
      { properties: { "odd key": { type: "number" } } },
      { "odd key": "1" },
      ['["odd key"]: expected number, received string'],
    ],
    [{ properties: { constructor: { type: "number" } } }, {}, []],
    [{ required: ["toString"] }, {}, ["toString: is required"]],
  ],
  additionalProperties: [
    [{ properties: { a: {} }, additionalProperties: false }, { a: 1, b: 2 }, ["b: unexpected property"]],
    [
      { properties: { a: {} }, additionalProperties: { type: "number" } },
      { a: "x", b: "y" },
      ["b: expected number, received string"],
    ],
    [{ additionalProperties: true }, { b: 1 }, []],
  ],
  patternProperties: [
    [{ patternProperties: { "^x-": { type: "string" } }, additionalProperties: false }, { "x-a": "1" }, []],
    [
      { patternProperties: { "^x-": { type: "string" } }, additionalProperties: false },
      { "x-a": 1, y: 1 },
      ["x-a: expected string, received number", "y: unexpected property"],
    ],
  ],
  propertyNames_and_counts: [
    [{ propertyNames: { maxLength: 3 } }, { abcd: 1 }, ["abcd: must be at most 3 characters"]],
    [{ minProperties: 1 }, {}, ["must have at least 1 properties"]],
    [{ maxProperties: 1 }, { a: 1, b: 2 }, ["must have at most 1 properties"]],
    [{ dependentRequired: { card: ["cvv"] } }, { card: "x" }, ['cvv: is required when "card" is present']],
    [{ dependentRequired: { card: ["cvv"] } }, {}, []],
  ],
  items: [
    [{ items: { type: "string" } }, ["a", "b"], []],
    [
      { items: { type: "string" } },
      ["a", 2, "c", 4],
      ["[1]: expected string, received number", "[3]: expected string, received number"],
    ],
    [
      { type: "object", properties: { tags: { items: { type: "string" } } } },
      { tags: ["a", "b", 3] },
      ["tags[2]: expected string, received number"],
    ],
    [{ prefixItems: [{ type: "string" }, { type: "number" }], items: false }, ["a", 1], []],
    [
      { prefixItems: [{ type: "string" }, { type: "number" }], items: false },
      ["a", "b", 3],
      ["[1]: expected number, received string", "[2]: no value is allowed here"],
    ],
    [{ prefixItems: [{ type: "string" }] }, ["a", 1, {}], []],
    [{ items: [{ type: "string" }], additionalItems: false }, ["a", 1], ["[1]: no value is allowed here"]],
    [{ minItems: 2 }, [1], ["must have at least 2 items"]],
    [{ maxItems: 1 }, [1, 2], ["must have at most 1 items"]],
  ],
  uniqueItems: [
    [{ uniqueItems: true }, [1, "1", { a: 1, b: 2 }, { b: 2, a: 1, c: 3 }], []],
    [{ uniqueItems: true }, [1, 2, 1], ["must not contain duplicates (items 0 and 2 are equal)"]],
    [
      { uniqueItems: true },
      [
        { a: 1, b: [2] },
        { b: [2], a: 1 },
      ],
      ["must not contain duplicates (items 0 and 1 are equal)"],
    ],
    [{ uniqueItems: false }, [1, 1], []],
  ],
  contains: [
    [{ contains: { type: "number" } }, ["a", 1], []],
    [{ contains: { type: "number" } }, ["a"], ["must contain at least 1 matching item(s)"]],
    [{ contains: { type: "number" }, maxContains: 1 }, [1, 2], ["must contain at most 1 matching item(s)"]],
    [{ contains: { type: "number" }, minContains: 0 }, [], []],
  ],
  enum_const: [
    [{ enum: ["a", 1, null, { x: [1] }] }, { x: [1] }, []],
    [{ enum: ["a", 1, null] }, 1, []],
    [{ enum: ["a", 1, null] }, "b", ['must be one of "a", 1, null']],
    [{ const: { a: [1, 2] } }, { a: [1, 2] }, []],
    [{ const: { a: [1, 2] } }, { a: [1, 2], b: 0 }, ['must be {"a":[1,2]}']],
    [{ const: 0 }, -0, []],
    [{ const: "x" }, "y", ['must be "x"']],
  ],
  numbers: [
    [{ minimum: 1 }, 1, []],
    [{ minimum: 1 }, 0, ["must be >= 1"]],
    [{ maximum: 1 }, 2, ["must be <= 1"]],
    [{ exclusiveMinimum: 1 }, 1, ["must be > 1"]],
    [{ exclusiveMaximum: 1 }, 1, ["must be < 1"]],
    [{ minimum: 1 }, "0", []],
    [{ multipleOf: 0.1 }, 0.3, []],
    [{ multipleOf: 2 }, 7, ["must be a multiple of 2"]],
    [{ multipleOf: 0.01 }, 19.99, []],
  ],
  strings: [
    [{ minLength: 2 }, "ab", []],
    [{ minLength: 2 }, "a", ["must be at least 2 characters"]],
    [{ minLength: 2 }, "😀", ["must be at least 2 characters"]],
    [{ maxLength: 1 }, "😀", []],
    [{ maxLength: 1 }, "ab", ["must be at most 1 characters"]],
    [{ pattern: "^[a-z]+$" }, "abc", []],
    [{ pattern: "^[a-z]+$" }, "ABC", ['must match pattern "^[a-z]+$"']],
    [{ pattern: "b" }, "abc", []],
    [{ pattern: "^\\p{Lu}" }, "Émile", []],
    [{ pattern: "^[\\w-.]+$" }, "a-b.c", []],
  ],
  format_is_an_annotation: [
    [{ format: "email" }, "ada at example.com", []],
    [{ format: "date" }, "2023-02-29", []],
    [{ format: "hostname" }, "not checked!", []],
  ],
  composition: [
    [{ allOf: [{ minimum: 1 }, { maximum: 3 }] }, 5, ["must be <= 3"]],
    [{ anyOf: [{ type: "string" }, { type: "number" }] }, 1, []],
    [
      { anyOf: [{ type: "string" }, { type: ["number", "null"] }] },
      true,
      ["expected string or number or null, received boolean"],
    ],
    [{ anyOf: [{ type: "string" }, { type: "object", required: ["a"] }] }, {}, ["a: is required"]],
    [{ anyOf: [{ minimum: 5 }, { maximum: 1 }] }, 3, ["does not match any of the allowed schemas"]],
    [{ oneOf: [{ type: "number" }, { type: "integer" }] }, 1.5, []],
    [
      { oneOf: [{ type: "number" }, { type: "integer" }] },
      1,
      ["must match exactly one schema in oneOf, but matches 2"],
    ],
    [{ oneOf: [{ type: "number" }, { type: "string" }] }, null, ["expected number or string, received null"]],
    [{ not: { type: "string" } }, 1, []],
    [{ not: { type: "string" } }, "x", ['must not match the "not" schema']],
    [IF_THEN_ELSE, "a", ["must be at least 2 characters"]],
    [IF_THEN_ELSE, 5, ["must be >= 10"]],
  ],
  refs: [
    [
      { definitions: { n: { type: "number" } }, properties: { a: { $ref: "#/definitions/n" } } },
      { a: "x" },
      ["a: expected number, received string"],
    ],
    [
      { $defs: { "a/b": { type: "number" } }, properties: { a: { $ref: "#/$defs/a~1b" } } },
      { a: "x" },
      ["a: expected number, received string"],
    ],
    [{ $defs: { "a b": { type: "number" } }, properties: { a: { $ref: "#/$defs/a%20b" } } }, { a: 1 }, []],
    [
      { type: "object", properties: { child: { $ref: "#" } }, additionalProperties: false },
      { child: { child: { x: 1 } } },
      ["child.child.x: unexpected property"],
    ],
    [
      { $id: "urn:example:root", $defs: { s: { type: "string" } }, $ref: "urn:example:root#/$defs/s" },
      1,
      ["expected string, received number"],
    ],
    [
      { $ref: "#/$defs/s", $defs: { s: { type: "string" } }, minLength: 2 },
      "a",
      ["must be at least 2 characters"],
    ],
  ],
  ignored: [
    [{ default: 5, type: "number" }, 1, []],
    [{ description: "x", title: "y", examples: [1], "x-vendor": { anything: true } }, "z", []],
    [{ contentMediaType: "text/html", contentEncoding: "base64", deprecated: true, readOnly: true }, "z", []],
  ],
};

describe("keywords", () => {
  for (const [keyword, cases] of Object.entries(KEYWORDS)) {
    it.each(cases.map(([schema, value, expected]) => ({ schema, value, expected })))(
      `${keyword}: $schema against $value`,
      ({ schema, value, expected }) => {
        expect(messages(schema, value)).toEqual(expected);
      },
    );
  }

  it("does not apply defaults or change the value", () => {
    const value = { a: 1 };
    const validate = compileJsonSchema({ properties: { b: { default: 2 } } });
    expect(validate(value)).toEqual([]);
    expect(value).toEqual({ a: 1 });
  });

  it("treats an own __proto__ key as a plain property", () => {
    const value = JSON.parse('{"__proto__": 1}');
    expect(messages({ properties: { ["__proto__"]: { type: "string" } } }, value)).toEqual([
      "__proto__: expected string, received number",
    ]);
    expect(messages({ additionalProperties: false }, value)).toEqual(["__proto__: unexpected property"]);
  });

  it("stops at 100 issues", () => {
    expect(
      issuesOf(
        { items: { type: "string" } },
        Array.from({ length: 1000 }, () => 1),
      ),
    ).toHaveLength(100);
  });
});

describe("registration errors", () => {
  it.each([
    [{ pattern: "(" }, /pattern "\(" at #\/pattern is not a valid regular expression/],
    [{ properties: { a: { patternProperties: { "[": {} } } } }, /not a valid regular expression/],
    [{ $ref: "https://example.com/schema.json" }, /never fetches remote or external schemas.*\$defs/],
    [{ $ref: "other.json#/a" }, /Unsupported \$ref "other.json#\/a" at #/],
    [
      { properties: { a: { $ref: "#/$defs/missing" } } },
      /"#\/\$defs\/missing" at #\/properties\/a does not point to anything/,
    ],
    [{ $ref: "#other", $defs: { a: { $anchor: "anchor" } } }, /"#other" at # does not point to anything/],
    [
      { exclusiveMinimum: true, minimum: 1 },
      /"exclusiveMinimum" at # must be a number \(the boolean form is draft-04's/,
    ],
    [{ type: "text" }, /"type" at # must be one of string, number/],
    [{ minLength: -1 }, /"minLength" at # must be a non-negative integer/],
    [{ minimum: "1" }, /"minimum" at # must be a number/],
    [{ multipleOf: 0 }, /"multipleOf" at # must be a number > 0/],
    [{ required: "a" }, /"required" at # must be an array of strings/],
    [{ anyOf: [] }, /"anyOf" at # must be a non-empty array of schemas/],
    [{ properties: { a: 5 } }, /the schema at #\/properties\/a must be an object or a boolean/],
    [{ enum: "a" }, /"enum" at # must be an array/],
  ] as const)("rejects %j", (schema, message) => {
    expect(() => compileJsonSchema(schema as JsonSchemaObject)).toThrow(message);
  });

  it("compiles each pattern once, at compile time", () => {
    const created: string[] = [];
    const Original = RegExp;
    const validate = compileJsonSchema({ items: { pattern: "^a" } });
    globalThis.RegExp = new Proxy(Original, {
      construct(target, args) {
        created.push(String(args[0]));
        return Reflect.construct(target, args);
      },
    });
    try {
      expect(validate(["a", "b", "a"])).toHaveLength(1);
    } finally {
      globalThis.RegExp = Original;
    }
    expect(created).toEqual([]);
  });
});

describe("hostile input", () => {
  const tree = { type: "object", properties: { child: { $ref: "#" } } };

  it("bounds recursive $refs on deep data", () => {
    let value: object = {};
    for (let i = 0; i < 10_000; i++) value = { child: value };
    const issues = compileJsonSchema(tree)(value);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.message).toBe("is nested too deeply (more than 128 $refs)");
    expect(issues[0]!.path).toMatch(/^child(\.child){128}$/);
  });

  it("takes the depth limit as an option", () => {
    const value = { child: { child: { child: {} } } };
    expect(compileJsonSchema(tree, { maxDepth: 3 })(value)).toEqual([]);
    expect(compileJsonSchema(tree, { maxDepth: 2 })(value)).toEqual([
      { path: "child.child.child", message: "is nested too deeply (more than 2 $refs)" },
    ]);
  });

  it("stops a $ref loop that never reaches data", () => {
    const validate = compileJsonSchema({
      $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } },
      $ref: "#/$defs/a",
    });
    expect(validate(1)).toEqual([{ path: "", message: "is nested too deeply (more than 128 $refs)" }]);
  });

  it("fails closed on circular values and throwing getters", () => {
    const [a, b]: { [k: string]: unknown }[] = [{}, {}];
    a!.self = a;
    b!.self = b;
    const validate = compileJsonSchema({ uniqueItems: true });
    expect(validate([a, b])[0]).toMatchObject({ path: "", message: expect.stringContaining("circular") });
    const getter = Object.defineProperty({}, "a", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    const issue = compileJsonSchema({ properties: { a: {} } })(getter)[0];
    expect(issue?.cause).toBeInstanceOf(Error);
  });

  it("never throws, whatever the value", () => {
    const schemas: JsonSchemaObject[] = [
      CONFORMANCE,
      tree,
      {
        anyOf: [
          { type: "array", items: { $ref: "#" }, uniqueItems: true },
          { type: "string", pattern: "^a" },
          { enum: [1, { a: [null] }] },
        ],
      },
      {
        type: "object",
        patternProperties: { ".": { not: { const: null } } },
        additionalProperties: { minProperties: 1 },
        propertyNames: { maxLength: 4 },
      },
      {
        oneOf: [{ minimum: 0, multipleOf: 0.5 }, { format: "date-time" }, { contains: { type: "object" } }],
        unevaluatedProperties: { type: "string" },
        ...IF_OBJECT,
      },
    ];
    const validators = schemas.map((s) => compileJsonSchema(s));
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.anything()), (value) => {
        for (const validate of validators) {
          const issues = validate(value);
          expect(Array.isArray(issues)).toBe(true);
          for (const i of issues) expect(typeof i.message).toBe("string");
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("formatPath", () => {
  it("joins keys with dots and indexes with brackets, quoting odd keys", () => {
    expect(formatPath([])).toBe("");
    expect(formatPath(["address", "city"])).toBe("address.city");
    expect(formatPath(["tags", 2, "x-id"])).toBe("tags[2].x-id");
    expect(formatPath([0, "a.b", ""])).toBe('[0]["a.b"][""]');
  });
});

describe("the bundled meta-schemas", () => {
  it("are named by META_SCHEMA_IDS_2020_12 in order, so that a $ref to one is known before they are made", () => {
    expect(metaSchemas2020_12().map((d) => (d as { $id: string }).$id)).toEqual(META_SCHEMA_IDS_2020_12);
    expect(Object.isFrozen(metaSchemas2020_12()[0])).toBe(true);
    expect(metaSchemas2020_12()).toBe(metaSchemas2020_12());
  });
});
