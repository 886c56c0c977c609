/**
 * `FromJsonSchema<S>`: the type a plain JSON Schema literal describes, for tool `input` and `output` written
 * inline (or `as const`). Types only. It reads `type` (and lists of types), `properties`, `required`,
 * `additionalProperties`, `items`, `enum`, `const`, `anyOf`, `oneOf` and `allOf`. A schema with OpenAPI's
 * `nullable` is `never`: registration refuses it (write `"type": ["…", "null"]`); anything else (`$ref`, `prefixItems`, `not`, `if`) is `unknown`, and a schema that is not a literal
 * (its `type` a plain `string`) is `unknown` too. Each keyword is one step, so deep schemas stay cheap.
 */

/** The type that plain JSON Schema `S` describes; `unknown` where it cannot tell. */
export type FromJsonSchema<S> = S extends true
  ? unknown
  : S extends false
    ? never
    : S extends object
      ? Nullable<S, S extends Composition ? Composed<S, Core<S>> : Core<S>>
      : unknown;

type Composition = { readonly anyOf: unknown } | { readonly oneOf: unknown } | { readonly allOf: unknown };

/** `const` wins, then `enum`, then `type`; with none of them, `unknown`. */
type Core<S> = S extends { readonly const: infer C }
  ? C
  : S extends { readonly enum: readonly (infer E)[] }
    ? E
    : S extends { readonly type: infer T }
      ? OfType<S, T>
      : S extends { readonly properties: object }
        ? ObjectOf<S>
        : unknown;

/** One type name, or a list of them (`["string", "null"]`). */
type OfType<S, T> = T extends readonly (infer Each)[] ? OneType<S, Each> : OneType<S, T>;

type OneType<S, T> = string extends T
  ? unknown
  : T extends "string"
    ? string
    : T extends "number" | "integer"
      ? number
      : T extends "boolean"
        ? boolean
        : T extends "null"
          ? null
          : T extends "object"
            ? ObjectOf<S>
            : T extends "array"
              ? S extends { readonly items: infer I }
                ? FromJsonSchema<I>[]
                : unknown[]
              : unknown;

/** `properties` with `required`, plus what `additionalProperties` lets in (nothing extra when absent). */
type ObjectOf<S> = S extends { readonly properties: infer P }
  ? Flat<
      { -readonly [K in keyof P as K extends RequiredOf<S> ? K : never]: FromJsonSchema<P[K]> } & {
        -readonly [K in keyof P as K extends RequiredOf<S> ? never : K]?: FromJsonSchema<P[K]>;
      } & Extra<S, true>
    >
  : Extra<S, false>;

type RequiredOf<S> = S extends { readonly required: readonly (infer R)[] } ? R : never;

/** Keys beyond `properties`: typed by `additionalProperties` alone only where no properties sit beside them. */
type Extra<S, HasProperties> = S extends { readonly additionalProperties: infer A }
  ? A extends false
    ? HasProperties extends true
      ? {}
      : Record<string, never>
    : HasProperties extends true
      ? { [key: string]: unknown }
      : { [key: string]: FromJsonSchema<A> }
  : HasProperties extends true
    ? {}
    : { [key: string]: unknown };

/** `anyOf` and `oneOf` are the union of their branches, `allOf` the intersection, each with the keywords beside them. */
type Composed<S, Base> = (S extends { readonly anyOf: readonly (infer B)[] } ? Branches<B> : unknown) &
  (S extends { readonly oneOf: readonly (infer B)[] } ? Branches<B> : unknown) &
  (S extends { readonly allOf: readonly unknown[] } ? AllOf<S["allOf"]> : unknown) extends infer C
  ? unknown extends C
    ? Base
    : unknown extends Base
      ? C
      : Base & C
  : never;

type Branches<B> = B extends unknown ? FromJsonSchema<B> : never;

type AllOf<L> = L extends readonly [infer Head, ...infer Rest] ? FromJsonSchema<Head> & AllOf<Rest> : unknown;

/** OpenAPI 3.0's `nullable` (any value) is `never`, as registration refuses it. */
type Nullable<S, T> = S extends { readonly nullable: unknown } ? never : T;

type Flat<T> = { [K in keyof T]: T[K] } & {};
