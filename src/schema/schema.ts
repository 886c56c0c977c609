/**
 * The schemas of tools (`input`, `output`) and prompts (`args`): either a Standard Schema that can give
 * its JSON Schema (zod 4, arktype, valibot through `toStandardJsonSchema`), validated by its own library,
 * or a plain JSON Schema object, listed as given and validated by `./json-schema.ts`.
 */

import type { JsonObject } from "../types.js";
import type { FromJsonSchema } from "./infer.js";
import { compileJsonSchema, formatPath, type JsonSchemaObject, type SchemaIssue } from "./json-schema.js";

export type { FromJsonSchema, JsonSchemaObject, SchemaIssue };

/**
 * A JSON Schema validator to use for plain JSON Schemas in place of picomcp's own (the `jsonSchemaValidator`
 * server option): ajv, @cfworker/json-schema, @exodus/schemasafe, … Standard Schemas keep their own library.
 */
export interface JsonSchemaValidator {
  /**
   * Compiles a tool's `input` or `output` schema once, at registration (throw to refuse the schema);
   * the function it returns validates one value: `true`, or the issues found (at least one).
   */
  compile(schema: JsonObject): (value: unknown) => true | readonly SchemaIssue[];
}

/** picomcp's own validator (JSON Schema 2020-12 and draft-07, no `eval`): the default `jsonSchemaValidator`. */
export const picomcpJsonSchemaValidator: JsonSchemaValidator = {
  compile(schema) {
    const check = compileJsonSchema(schema as JsonSchemaObject);
    return (value) => {
      const issues = check(value);
      return issues.length === 0 || issues;
    };
  },
};

/** The Standard Schema v1 interface (standardschema.dev), declared here so that picomcp needs no package. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The Standard Schema properties. */
  readonly "~standard": StandardSchemaProps<Input, Output>;
}

/** The `~standard` properties of a Standard Schema, with the optional Standard JSON Schema converter. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  /** The version of the standard: 1. */
  readonly version: 1;
  /** The schema library, e.g. `"zod"`. */
  readonly vendor: string;
  /** Validates an unknown value. */
  readonly validate: (
    value: unknown,
    options?: { readonly libraryOptions?: Record<string, unknown> | undefined } | undefined,
  ) => StandardResult<Output> | Promise<StandardResult<Output>>;
  /** The inferred types (types only). */
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  /** The Standard JSON Schema converter; picomcp needs it to list the schema. */
  readonly jsonSchema?: StandardJsonSchemaConverter | undefined;
}

/** The Standard JSON Schema v1 converter (`~standard.jsonSchema`). */
export interface StandardJsonSchemaConverter {
  /** The JSON Schema of the accepted input; may throw when the schema has no JSON form. */
  readonly input: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
  /** The JSON Schema of the validated output; may throw when the schema has no JSON form. */
  readonly output: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
}

/** Options of the Standard JSON Schema converter. */
export interface StandardJsonSchemaOptions {
  /** The JSON Schema dialect: picomcp asks for `"draft-2020-12"`, MCP's default. */
  readonly target: "draft-2020-12" | "draft-07" | "openapi-3.0" | ({} & string);
  /** Vendor-specific options. */
  readonly libraryOptions?: Record<string, unknown> | undefined;
}

/** The result of a Standard Schema's `validate`: a value, or issues. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

/** One issue reported by a Standard Schema. */
export interface StandardIssue {
  /** What is wrong. */
  readonly message: string;
  /** Where: keys, or `{ key }` segments. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** What tools (`input`, `output`) and prompts (`args`) accept: a Standard Schema or a plain JSON Schema. */
export type SchemaLike = StandardSchemaV1 | JsonSchemaObject;

/**
 * The type a schema accepts: a Standard Schema's input type; for a plain JSON Schema literal, the type it
 * describes ({@link FromJsonSchema}), or `Record<string, unknown>` where that is unknown.
 */
export type InferInput<S> = S extends StandardSchemaV1<infer I, unknown> ? I : JsonSchemaArgs<S>;

/**
 * The type a schema validates into — what `run` / `get` receive from `input` / `args`, and what
 * `structuredContent` holds for `output`: a Standard Schema's output type; for a plain JSON Schema literal,
 * the type it describes, or `Record<string, unknown>` where that is unknown.
 */
export type InferOutput<S> = S extends StandardSchemaV1<unknown, infer O> ? O : JsonSchemaArgs<S>;

type JsonSchemaArgs<S> =
  FromJsonSchema<S> extends infer T ? (unknown extends T ? Record<string, unknown> : T) : never;

/** The outcome of {@link CompiledSchema.validate}. */
export type SchemaResult<T = unknown> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly SchemaIssue[] };

/**
 * @internal — what the tools' hot path calls instead of `validate`, without its `{ ok, value }` record
 * (one per call): the value itself, an `Invalid` with the issues, or a `Pending` around the promise of
 * `validate`'s result (an asynchronous Standard Schema). Set, under this key, on the schemas compiled here.
 */
export const CHECK: unique symbol = Symbol("picomcp.check");
/** @internal */
export type Check = (value: unknown) => unknown;
/** @internal — a value the schema refused: `validate`'s issues. */
export class Invalid {
  readonly issues: readonly SchemaIssue[];
  constructor(issues: readonly SchemaIssue[]) {
    this.issues = issues;
  }
}
/** @internal — an asynchronous schema's result, as `validate` gives it. */
export class Pending {
  readonly promise: Promise<SchemaResult>;
  constructor(promise: Promise<SchemaResult>) {
    this.promise = promise;
  }
}

/** A schema made ready once, at registration. */
export interface CompiledSchema<T = unknown> {
  /** The JSON Schema that `tools/list` shows as `inputSchema` / `outputSchema`. */
  readonly jsonSchema: JsonObject;
  /**
   * Validates a value: the (possibly transformed) value, or the issues, each naming its field. Synchronous
   * for plain JSON Schemas and for Standard Schemas that validate synchronously; never throws or rejects.
   */
  validate(value: unknown): SchemaResult<T> | Promise<SchemaResult<T>>;
}

/** Whether `value` is a Standard Schema v1 (has `~standard` with version 1 and `validate`). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const props = (value as { "~standard"?: unknown })["~standard"];
  return (
    typeof props === "object" &&
    props !== null &&
    (props as StandardSchemaProps).version === 1 &&
    typeof (props as StandardSchemaProps).validate === "function"
  );
}

/**
 * Whether `value` is a plain object of Standard Schemas, such as `{ query: z.string() }`: the raw shape
 * that SDK v1 takes as `inputSchema` and picomcp takes wrapped, `z.object({ query: z.string() })`.
 */
export function isRawShape(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value) || isStandardSchema(value))
    return false;
  const values = Object.values(value);
  return values.length > 0 && values.every(isStandardSchema);
}

/** The fix for a raw shape, to close an error message. */
export const RAW_SHAPE_FIX =
  "a plain object of schemas, such as SDK v1's raw shape { query: z.string() }, is not a schema: wrap it in z.object({ … }) (valibot: v.object, arktype: type({ … }))";

const ROOT_HINT = {
  input: "tool and prompt arguments are always a JSON object",
  output: "structuredContent is always a JSON object",
} as const;

/**
 * Compiles `input` / `output` / `args` once, at registration. Throws a `TypeError` that says what to change
 * when the schema cannot be used: a Standard Schema without Standard JSON Schema support, one whose JSON
 * Schema is not an object at the root (a root `$ref` is followed), or a plain JSON Schema that `validator`
 * refuses (default: picomcp's own).
 * @example
 * const input = compileSchema(z.object({ query: z.string() }), "input");
 * input.jsonSchema; // { $schema: "…/2020-12/schema", type: "object", properties: { query: … }, … }
 * await input.validate({ query: 1 }); // { ok: false, issues: [{ path: "query", message: "Invalid input: …" }] }
 */
export function compileSchema<S extends SchemaLike>(
  schema: S,
  role: "input" | "output",
  validator: JsonSchemaValidator = picomcpJsonSchemaValidator,
): CompiledSchema<InferOutput<S>> {
  if (isStandardSchema(schema)) return compileStandard(schema, role) as CompiledSchema<InferOutput<S>>;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new TypeError(
      `The ${role} schema must be a Standard Schema (zod 4, valibot, arktype, …) or a plain JSON Schema object, ` +
        `not ${schema === null ? "null" : Array.isArray(schema) ? "an array" : typeof schema}`,
    );
  }
  if ("~standard" in schema) {
    throw new TypeError(
      `The ${role} schema has "~standard" but is not a Standard Schema v1 (version 1, validate)`,
    );
  }
  if (isRawShape(schema)) throw new TypeError(`Invalid ${role} schema: ${RAW_SHAPE_FIX}`);
  const type = rootType(schema as JsonObject);
  if (type !== "object") {
    throw new TypeError(
      `The ${role} JSON Schema must have "type": "object" at its root (${ROOT_HINT[role]}), got ${show(type)}`,
    );
  }
  const check = validator.compile(schema as JsonObject);
  if (typeof check !== "function") throw new TypeError("jsonSchemaValidator.compile must return a function");
  const compiled: CompiledSchema<InferOutput<S>> & { [CHECK]: Check } = {
    jsonSchema: withObjectType(schema as JsonObject),
    [CHECK]: (value) => {
      let result: true | readonly SchemaIssue[];
      try {
        result = check(value);
      } catch (error) {
        return new Invalid(crashIssues(error));
      }
      if (result === true) return value;
      return new Invalid(
        Array.isArray(result) && result.length > 0 ? result : [{ path: "", message: "is invalid" }],
      );
    },
    validate(value) {
      let result: true | readonly SchemaIssue[];
      try {
        result = check(value);
      } catch (error) {
        return crashed(error);
      }
      if (result === true) return { ok: true, value: value as InferOutput<S> };
      const issues =
        Array.isArray(result) && result.length > 0 ? result : [{ path: "", message: "is invalid" }];
      return { ok: false, issues };
    },
  };
  return compiled;
}

function compileStandard(schema: StandardSchemaV1, role: "input" | "output"): CompiledSchema {
  const std = schema["~standard"];
  const vendor = String(std.vendor);
  const convert = std.jsonSchema?.[role];
  if (typeof convert !== "function") {
    const fix =
      vendor === "valibot"
        ? 'wrap it with toStandardJsonSchema(schema) from "@valibot/to-json-schema"'
        : vendor === "zod"
          ? "zod 3 and early zod 4 lack Standard JSON Schema, upgrade with `npm install zod@latest`"
          : "use a version of the library that implements Standard JSON Schema (~standard.jsonSchema)";
    throw new TypeError(
      `The ${role} schema (${vendor}) cannot give its JSON Schema: ${fix}, or pass a plain JSON Schema object instead`,
    );
  }
  let json: unknown;
  try {
    json = convert.call(std.jsonSchema, { target: "draft-2020-12" });
  } catch (error) {
    throw new TypeError(
      `The ${role} schema (${vendor}) has no JSON Schema form: ${error instanceof Error ? error.message : String(error)}. ` +
        "Use only JSON-representable types (no dates, maps, functions, …), or pass a plain JSON Schema object instead",
      { cause: error },
    );
  }
  const type = typeof json === "object" && json !== null ? rootType(json as JsonObject) : undefined;
  if (type !== "object") {
    const union = ["anyOf", "oneOf"].find((k) => Array.isArray((json as JsonObject | null)?.[k]));
    const fix = union
      ? `Its root is a union ("${union}", as z.union and z.discriminatedUnion give): use one object whose ` +
        "fields cover the alternatives (optional where they differ), or put the union under a field, " +
        "z.object({ item: z.union([…]) })"
      : "Wrap it in an object schema, e.g. z.object({ … })";
    throw new TypeError(
      `The ${role} schema (${vendor}) must describe an object (${ROOT_HINT[role]}), but its JSON Schema root has ` +
        `"type": ${show(type)}. ${fix}`,
    );
  }
  const jsonSchema = withObjectType(json as JsonObject);
  const arktype = vendor === "arktype";
  const settle = (result: StandardResult<unknown>): SchemaResult => {
    try {
      if (!result.issues) return { ok: true, value: result.value };
      const issues = Array.from(result.issues, (i): SchemaIssue => {
        const path = formatPath(
          Array.from(i.path ?? [], (s) => (typeof s === "object" && s !== null ? s.key : s)),
        );
        // arktype's message repeats the path ("query must be a string"); its `problem` does not
        const problem = arktype ? (i as { problem?: unknown }).problem : undefined;
        return { path, message: typeof problem === "string" ? problem : String(i.message) };
      });
      return { ok: false, issues: issues.length > 0 ? issues : [{ path: "", message: "is invalid" }] };
    } catch (error) {
      return crashed(error);
    }
  };
  const thenable = (result: unknown): result is Promise<StandardResult<unknown>> =>
    result instanceof Promise || typeof (result as { then?: unknown })?.then === "function";
  const compiled: CompiledSchema & { [CHECK]: Check } = {
    jsonSchema,
    [CHECK]: (value) => {
      let result: StandardResult<unknown> | Promise<StandardResult<unknown>>;
      try {
        result = std.validate(value);
      } catch (error) {
        return new Invalid(crashIssues(error));
      }
      if (thenable(result)) return new Pending(Promise.resolve(result).then(settle, crashed));
      try {
        if (!result.issues) return result.value;
      } catch (error) {
        return new Invalid(crashIssues(error));
      }
      const settled = settle(result);
      return settled.ok ? settled.value : new Invalid(settled.issues);
    },
    validate(value) {
      let result: StandardResult<unknown> | Promise<StandardResult<unknown>>;
      try {
        result = std.validate(value);
      } catch (error) {
        return crashed(error);
      }
      return thenable(result) ? Promise.resolve(result).then(settle, crashed) : settle(result);
    },
  };
  return compiled;
}

/** A validator that throws is a bug of the schema, not of the value: one issue, the error kept as `cause`. */
function crashed(error: unknown): SchemaResult<never> {
  return { ok: false, issues: crashIssues(error) };
}

function crashIssues(error: unknown): SchemaIssue[] {
  return [{ path: "", message: "could not be validated (the schema's validator failed)", cause: error }];
}

/**
 * The schema to list: as given, with `"type": "object"` beside a root `$ref` that resolves to an object —
 * the same meaning, and clients check `inputSchema.type` without following references.
 */
const withObjectType = (schema: JsonObject): JsonObject =>
  schema.type === undefined ? { type: "object", ...schema } : schema;

/**
 * The root's `type`, following a root `$ref` to a local JSON pointer (`{"$ref":"#/$defs/Foo","$defs":{…}}`,
 * as zod writes a schema with an id) — a few hops at most.
 */
function rootType(root: JsonObject): unknown {
  let s: unknown = root;
  for (let hop = 0; hop < 8; hop++) {
    if (typeof s !== "object" || s === null) return undefined;
    const { type, $ref } = s as JsonObject;
    if (type !== undefined || typeof $ref !== "string" || !$ref.startsWith("#/")) return type;
    s = root;
    for (const raw of $ref.slice(2).split("/")) {
      let key = raw;
      try {
        key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      } catch {}
      s = typeof s === "object" && s !== null && Object.hasOwn(s, key) ? (s as JsonObject)[key] : undefined;
    }
  }
  return undefined;
}

const show = (v: unknown) => (v === undefined ? "none" : (JSON.stringify(v) ?? String(v)));

/**
 * Formats issues for a tool result or an error message: `query: expected string, received number; limit: must be >= 1`
 * (at most 10, then "and N more"), after `prefix: ` when given.
 */
export function formatIssues(issues: readonly SchemaIssue[], prefix?: string): string {
  const shown = issues.slice(0, 10).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
  if (issues.length > 10) shown.push(`and ${issues.length - 10} more`);
  const text = shown.join("; ");
  return prefix === undefined ? text : `${prefix}: ${text}`;
}
