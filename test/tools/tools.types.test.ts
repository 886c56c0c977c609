/**
 * Type tests for tool arguments inferred from a plain JSON Schema literal, checked by `tsc --noEmit`
 * (and harmlessly run by vitest).
 */
import { type FromJsonSchema, McpServer } from "picomcp";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";

const server = new McpServer({ name: "types", version: "1.0.0" });

describe("FromJsonSchema", () => {
  it("reads type, properties and required", () => {
    type S = {
      type: "object";
      properties: { a: { type: "number" }; b: { type: "string" }; c: { type: "integer" } };
      required: ["a", "b"];
    };
    expectTypeOf<FromJsonSchema<S>>().toEqualTypeOf<{ a: number; b: string; c?: number }>();
  });

  it("reads enum, const and lists of types", () => {
    expectTypeOf<FromJsonSchema<{ enum: readonly ["a", "b", 1] }>>().toEqualTypeOf<"a" | "b" | 1>();
    expectTypeOf<FromJsonSchema<{ const: "on" }>>().toEqualTypeOf<"on">();
    expectTypeOf<FromJsonSchema<{ type: readonly ["string", "null"] }>>().toEqualTypeOf<string | null>();
    expectTypeOf<FromJsonSchema<{ type: "boolean" }>>().toEqualTypeOf<boolean>();
    expectTypeOf<FromJsonSchema<true>>().toEqualTypeOf<unknown>();
    expectTypeOf<FromJsonSchema<false>>().toBeNever();
  });

  it("makes OpenAPI's nullable never, as registration refuses it", () => {
    expectTypeOf<FromJsonSchema<{ type: "string"; nullable: true }>>().toBeNever();
    expectTypeOf<FromJsonSchema<{ type: "string"; nullable: false }>>().toBeNever();
    type S = { type: "object"; properties: { a: { type: "string"; nullable: true } }; required: ["a"] };
    expectTypeOf<FromJsonSchema<S>>().toEqualTypeOf<{ a: never }>();
  });

  it("reads items, anyOf, oneOf and allOf", () => {
    expectTypeOf<FromJsonSchema<{ type: "array"; items: { type: "string" } }>>().toEqualTypeOf<string[]>();
    expectTypeOf<FromJsonSchema<{ type: "array" }>>().toEqualTypeOf<unknown[]>();
    expectTypeOf<FromJsonSchema<{ anyOf: [{ type: "string" }, { type: "number" }] }>>().toEqualTypeOf<
      string | number
    >();
    expectTypeOf<FromJsonSchema<{ oneOf: [{ const: "a" }, { type: "null" }] }>>().toEqualTypeOf<"a" | null>();
    expectTypeOf<
      FromJsonSchema<{
        allOf: [
          { type: "object"; properties: { a: { type: "string" } }; required: ["a"] },
          { type: "object"; properties: { b: { type: "number" } } },
        ];
      }>
    >().toEqualTypeOf<{ a: string } & { b?: number }>();
    // a branch with only `required` narrows nothing the type can say
    expectTypeOf<
      FromJsonSchema<{ type: "object"; properties: { a: { type: "string" } }; anyOf: [{ required: ["a"] }] }>
    >().toEqualTypeOf<{ a?: string }>();
  });

  it("reads additionalProperties", () => {
    expectTypeOf<
      FromJsonSchema<{ type: "object"; additionalProperties: { type: "number" } }>
    >().toEqualTypeOf<{ [key: string]: number }>();
    expectTypeOf<FromJsonSchema<{ type: "object" }>>().toEqualTypeOf<{ [key: string]: unknown }>();
    expectTypeOf<
      FromJsonSchema<{ type: "object"; properties: { a: { type: "string" } }; additionalProperties: true }>
    >().toEqualTypeOf<{ a?: string; [key: string]: unknown }>();
  });

  it("falls back to unknown where it cannot tell", () => {
    expectTypeOf<FromJsonSchema<{ $ref: "#/$defs/x" }>>().toEqualTypeOf<unknown>();
    expectTypeOf<FromJsonSchema<{ type: string }>>().toEqualTypeOf<unknown>();
    expectTypeOf<FromJsonSchema<{ type: "string"; format: "date" }>>().toEqualTypeOf<string>();
  });
});

describe("server.tool with a plain JSON Schema", () => {
  it("infers run's arguments from a literal written inline, without as const", () => {
    server.tool("divide", {
      input: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" }, note: { type: "string" } },
        required: ["a", "b"],
      },
      run: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ a: number; b: number; note?: string }>();
        // @ts-expect-error: no c in the schema
        args.c;
        // @ts-expect-error: a is a number, not a string
        args.a.toUpperCase();
        return String(args.a / args.b);
      },
    });
  });

  it("infers from a schema declared as const elsewhere", () => {
    const input = {
      type: "object",
      properties: { tags: { type: "array", items: { enum: ["new", "used"] } } },
      required: ["tags"],
      additionalProperties: false,
    } as const;
    server.tool("tag", {
      input,
      run: ({ tags }) => {
        expectTypeOf(tags).toEqualTypeOf<("new" | "used")[]>();
        return tags.join(",");
      },
    });
  });

  it("types the structured value of a plain JSON Schema output", () => {
    server.tool("total", {
      output: { type: "object", properties: { total: { type: "number" } }, required: ["total"] },
      run: () => ({ total: 3 }),
    });
    server.tool("total_bad", {
      output: { type: "object", properties: { total: { type: "number" } }, required: ["total"] },
      // @ts-expect-error: total must be a number
      run: () => ({ total: "3" }),
    });
  });

  it("gives a loose record for a schema that is not a literal", () => {
    const loose: { type: "object"; properties: { [k: string]: { type: string } } } = {
      type: "object",
      properties: {},
    };
    const widened = { type: "object", properties: { a: { type: "number" } } };
    server.tool("loose", {
      input: loose,
      run: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ [x: string]: unknown }>();
        return "";
      },
    });
    server.tool("widened", {
      input: widened,
      run: (args) => {
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
        return "";
      },
    });
  });

  it("still takes Standard Schemas as they are", () => {
    server.tool("zod", {
      input: z.object({ query: z.string(), limit: z.number().default(10) }),
      run: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ query: string; limit: number }>();
        return "";
      },
    });
  });
});
