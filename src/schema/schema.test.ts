import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import * as v from "valibot";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  compileSchema,
  formatIssues,
  type InferInput,
  type InferOutput,
  isStandardSchema,
  type SchemaResult,
  type StandardSchemaV1,
} from "./schema.js";

const SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema";

const libraries = {
  zod: z.object({ query: z.string(), limit: z.number().int().min(1).optional() }),
  valibot: toStandardJsonSchema(
    v.object({ query: v.string(), limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))) }),
  ),
  arktype: type({ query: "string", "limit?": "number.integer >= 1" }),
};

describe.each(Object.entries(libraries))("a %s schema", (_, schema) => {
  const compiled = compileSchema(schema, "input");

  it("lists its 2020-12 JSON Schema", () => {
    expect(compiled.jsonSchema).toMatchObject({
      $schema: SCHEMA_2020_12,
      type: "object",
      properties: { query: { type: "string" }, limit: { minimum: 1 } },
      required: ["query"],
    });
  });

  it("passes valid arguments through", async () => {
    expect(await compiled.validate({ query: "dune", limit: 3 })).toEqual({
      ok: true,
      value: { query: "dune", limit: 3 },
    });
  });

  it("names each failing field", async () => {
    const result = await compiled.validate({ query: 5, limit: 0 });
    expect(result.ok).toBe(false);
    const issues = result.ok ? [] : result.issues;
    expect(issues.map((i) => i.path).sort()).toEqual(["limit", "query"]);
    for (const i of issues) expect(i.message).not.toMatch(/^(query|limit)\b/);
    expect(formatIssues(issues)).toMatch(/^(query|limit): .+; (query|limit): .+$/);
  });

  it("reports a wrong root at the root", async () => {
    const result = await compiled.validate("dune");
    expect(result).toMatchObject({ ok: false, issues: [{ path: "" }] });
  });
});

describe("Standard Schemas", () => {
  it("keeps arktype's message without the repeated path", async () => {
    const result = await compileSchema(type({ query: "string" }), "input").validate({ query: 5 });
    expect(result).toEqual({
      ok: false,
      issues: [{ path: "query", message: "must be a string (was a number)" }],
    });
  });

  it("formats nested and indexed paths", async () => {
    const schema = z.object({ address: z.object({ city: z.string() }), tags: z.array(z.string()) });
    const result = await compileSchema(schema, "input").validate({
      address: { city: 5 },
      tags: ["a", "b", 3],
    });
    expect(result.ok ? [] : result.issues.map((i) => i.path)).toEqual(["address.city", "tags[2]"]);
    const vschema = toStandardJsonSchema(v.object({ address: v.object({ city: v.string() }) }));
    const vresult = await compileSchema(vschema, "input").validate({ address: { city: 5 } });
    expect(vresult.ok ? [] : vresult.issues.map((i) => i.path)).toEqual(["address.city"]);
  });

  it("returns the library's output value (defaults, transforms)", async () => {
    const schema = z.object({ n: z.string().transform(Number), tags: z.array(z.string()).default([]) });
    expect(await compileSchema(schema, "input").validate({ n: "42" })).toEqual({
      ok: true,
      value: { n: 42, tags: [] },
    });
  });

  it("lists the input JSON Schema for input and the output JSON Schema for output", () => {
    const schema = z.object({ tags: z.array(z.string()).default([]) });
    expect(compileSchema(schema, "input").jsonSchema.required).toBeUndefined();
    expect(compileSchema(schema, "output").jsonSchema.required).toEqual(["tags"]);
  });

  it("validates synchronously when the library does", () => {
    const result = compileSchema(libraries.zod, "input").validate({ query: "x" });
    expect(result).not.toBeInstanceOf(Promise);
  });

  it("awaits an async validator", async () => {
    const schema = z.object({ id: z.string().refine(async (s) => s.startsWith("b"), "unknown book") });
    const result = compileSchema(schema, "input").validate({ id: "x1" });
    expect(result).toBeInstanceOf(Promise);
    expect(await result).toEqual({ ok: false, issues: [{ path: "id", message: "unknown book" }] });
  });

  function fake(validate: () => unknown, jsonSchema = { type: "object" }): StandardSchemaV1 {
    return {
      "~standard": {
        version: 1,
        vendor: "fake",
        validate: validate as never,
        jsonSchema: { input: () => jsonSchema, output: () => jsonSchema },
      },
    };
  }

  it("turns a throwing or rejecting validator into one issue", async () => {
    const error = new Error("internal detail");
    for (const validate of [
      () => {
        throw error;
      },
      () => Promise.reject(error),
      () => null,
    ]) {
      const result = await compileSchema(fake(validate), "input").validate({});
      expect(result).toMatchObject({ ok: false, issues: [{ path: "", message: expect.any(String) }] });
      if (!result.ok) expect(result.issues[0]!.message).not.toContain("internal detail");
    }
    const thrown = await compileSchema(
      fake(() => Promise.reject(error)),
      "input",
    ).validate({});
    expect(thrown.ok ? undefined : thrown.issues[0]!.cause).toBe(error);
  });

  it("accepts { key } path segments and treats empty issues as a failure", async () => {
    const keyed = fake(() => ({ issues: [{ message: "bad", path: [{ key: "a" }, { key: 0 }] }] }));
    expect(await compileSchema(keyed, "input").validate({})).toEqual({
      ok: false,
      issues: [{ path: "a[0]", message: "bad" }],
    });
    const empty = fake(() => ({ issues: [] }));
    expect(await compileSchema(empty, "input").validate({})).toMatchObject({
      ok: false,
      issues: [{ path: "" }],
    });
  });
});

describe("registration errors", () => {
  it("asks to wrap a valibot schema without JSON Schema support", () => {
    expect(() => compileSchema(v.object({ a: v.string() }), "input")).toThrow(
      /\(valibot\) cannot give its JSON Schema: wrap it with toStandardJsonSchema\(schema\) from "@valibot\/to-json-schema", or pass a plain JSON Schema/,
    );
    const bare = { "~standard": { version: 1 as const, vendor: "acme", validate: () => ({ value: 1 }) } };
    expect(() => compileSchema(bare, "output")).toThrow(
      /The output schema \(acme\) cannot give its JSON Schema: use a version/,
    );
    // zod 3's objects have ~standard but no jsonSchema
    const zod3 = { "~standard": { version: 1 as const, vendor: "zod", validate: () => ({ value: {} }) } };
    expect(() => compileSchema(zod3, "input")).toThrow(
      "The input schema (zod) cannot give its JSON Schema: zod 3 and early zod 4 lack Standard JSON Schema, upgrade with `npm install zod@latest`, or pass a plain JSON Schema object instead",
    );
  });

  it("explains a type that has no JSON Schema form", () => {
    expect(() => compileSchema(z.object({ at: z.date() }), "input")).toThrow(
      /The input schema \(zod\) has no JSON Schema form: .*Date.*plain JSON Schema/,
    );
  });

  it("requires an object at the root", () => {
    expect(() => compileSchema(z.string(), "input")).toThrow(
      /input schema \(zod\) must describe an object \(tool and prompt arguments are always a JSON object\).*"type": "string"/,
    );
    expect(() => compileSchema(type("string | number"), "output")).toThrow(
      /structuredContent is always a JSON object/,
    );
    expect(() => compileSchema({ type: "array" }, "input")).toThrow(/must have "type": "object" at its root/);
    expect(() => compileSchema({ properties: {} }, "input")).toThrow(/got none/);
  });

  it("rejects what is neither kind of schema", () => {
    expect(() => compileSchema(null as never, "input")).toThrow(
      /Standard Schema .* or a plain JSON Schema object, not null/,
    );
    expect(() => compileSchema({ "~standard": { version: 2 } } as never, "input")).toThrow(
      /not a Standard Schema v1/,
    );
    expect(() =>
      compileSchema({ type: "object", properties: { a: { $ref: "http://x/y" } } }, "input"),
    ).toThrow(/never fetches remote/);
  });
});

describe("plain JSON Schemas", () => {
  const raw = JSON.parse(
    '{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}',
  );
  const copy = structuredClone(raw);
  const compiled = compileSchema(raw, "input");

  it("lists the conformance schema exactly as given", () => {
    expect(compiled.jsonSchema).toEqual(copy);
    expect(JSON.stringify(compiled.jsonSchema)).toBe(JSON.stringify(copy));
  });

  it("validates it: valid, a nested wrong type, an extra property", async () => {
    const value = { name: "Ada", address: { street: "Main St", city: "London" } };
    expect(compiled.validate(value)).toEqual({ ok: true, value });
    expect(compiled.validate({ address: { city: 5 } })).toEqual({
      ok: false,
      issues: [{ path: "address.city", message: "expected string, received number" }],
    });
    const extra = await compiled.validate({ name: "Ada", extra: 1 });
    expect(extra.ok ? "" : formatIssues(extra.issues, "Invalid arguments")).toBe(
      "Invalid arguments: extra: unexpected property",
    );
    expect(raw).toEqual(copy);
  });
});

describe("isStandardSchema", () => {
  it("recognizes zod, valibot and arktype (a function) but not JSON Schemas", () => {
    expect(isStandardSchema(libraries.zod)).toBe(true);
    expect(isStandardSchema(v.string())).toBe(true);
    expect(isStandardSchema(libraries.arktype)).toBe(true);
    expect(isStandardSchema({ type: "object" })).toBe(false);
    expect(isStandardSchema(null)).toBe(false);
  });
});

describe("formatIssues", () => {
  it("joins issues, puts the root's message bare, and caps the list", () => {
    expect(formatIssues([{ path: "", message: "expected object, received string" }])).toBe(
      "expected object, received string",
    );
    const many = Array.from({ length: 12 }, (_, i) => ({ path: `a${i}`, message: "is required" }));
    expect(formatIssues(many)).toMatch(/^a0: is required; .*a9: is required; and 2 more$/);
  });
});

describe("types", () => {
  it("infers input and output types from zod, valibot and arktype", () => {
    const zs = z.object({ n: z.string().transform(Number), q: z.string().optional() });
    expectTypeOf<InferInput<typeof zs>>().toEqualTypeOf<{ n: string; q?: string | undefined }>();
    expectTypeOf<InferOutput<typeof zs>>().toEqualTypeOf<{ n: number; q?: string | undefined }>();

    const vs = toStandardJsonSchema(v.object({ n: v.pipe(v.string(), v.transform(Number)) }));
    expectTypeOf<InferInput<typeof vs>>().toEqualTypeOf<{ n: string }>();
    expectTypeOf<InferOutput<typeof vs>>().toEqualTypeOf<{ n: number }>();

    const as = type({ n: "string.numeric.parse", "q?": "string" });
    expectTypeOf<InferInput<typeof as>>().toEqualTypeOf<{ n: string; q?: string }>();
    expectTypeOf<InferOutput<typeof as>>().toEqualTypeOf<{ n: number; q?: string }>();

    expectTypeOf<InferOutput<{ type: "object" }>>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf(compileSchema(zs, "input").validate).returns.toEqualTypeOf<
      | SchemaResult<{ n: number; q?: string | undefined }>
      | Promise<SchemaResult<{ n: number; q?: string | undefined }>>
    >();
  });

  it("accepts the real libraries as Standard Schemas", () => {
    expectTypeOf(libraries.zod).toExtend<StandardSchemaV1>();
    expectTypeOf(libraries.valibot).toExtend<StandardSchemaV1>();
    expectTypeOf(libraries.arktype).toExtend<StandardSchemaV1>();
    // @ts-expect-error a number is not a schema
    expect(() => compileSchema(5, "input")).toThrow(/not number/);
  });
});
