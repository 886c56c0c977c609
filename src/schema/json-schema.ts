/**
 * A small JSON Schema (draft 2020-12 subset) validator for plain schemas: compiled once into closures
 * (no `eval`, no `new Function`), zero dependencies. Supported keywords:
 * `type` (incl. arrays and "integer"), `enum`, `const`; `minimum`, `maximum`, `exclusiveMinimum`,
 * `exclusiveMaximum`, `multipleOf`; `minLength`, `maxLength` (in code points), `pattern`, `format`
 * (checked lightly: email, uri, uuid, date, date-time; any other format is ignored); `items`,
 * `prefixItems` (and draft-07 array `items` / `additionalItems`), `minItems`, `maxItems`, `uniqueItems`,
 * `contains`, `minContains`, `maxContains`; `properties`, `required`, `additionalProperties`,
 * `patternProperties`, `propertyNames`, `minProperties`, `maxProperties`, `dependentRequired`;
 * `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`; `$ref` to `#` and `#/json/pointer` (`$defs`,
 * `definitions`, anything local). `default` is never applied; `unevaluated*`, `$dynamicRef`, draft-04
 * boolean `exclusiveMinimum` and other unknown keywords are ignored; a `$ref` resolves against the root
 * (a nested `$id` does not change the base).
 */
import {
  all,
  arrayCheck,
  bad,
  type Check,
  type Ctx,
  fail,
  formatPath,
  isObject,
  issue,
  limitChecks,
  MAX_ISSUES,
  type Obj,
  objectCheck,
  pass,
  type SchemaIssue,
  type Subschemas,
  scalarCheck,
  show,
  trial,
} from "./json-schema-checks.js";

export { formatPath, type SchemaIssue } from "./json-schema-checks.js";

/** A plain JSON Schema object: the common keywords typed, any other keyword allowed. */
export interface JsonSchemaObject {
  readonly type?: string | readonly string[];
  readonly properties?: { readonly [name: string]: JsonSchemaObject | boolean };
  readonly required?: readonly string[];
  readonly [keyword: string]: unknown;
}

/** Options of {@link compileJsonSchema}. */
export interface JsonSchemaOptions {
  /** How many `$ref`s deep validation may go before it stops with an issue (recursive schemas). Default 128. */
  readonly maxDepth?: number;
}

/** A compiled validator: the issues found, an empty array when the value is valid. */
export type JsonSchemaValidator = (value: unknown) => SchemaIssue[];

const TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"];
// the expected type of each type-mismatch issue, so that a failed anyOf can merge them
const expectedTypes = new WeakMap<SchemaIssue, string>();

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isFinite(v) ? "number" : String(v);
  return typeof v;
}

function isType(t: string, v: unknown): boolean {
  if (t === "integer") return Number.isInteger(v);
  if (t === "number") return typeof v === "number" && Number.isFinite(v);
  if (t === "object") return isObject(v);
  if (t === "array") return Array.isArray(v);
  return t === "null" ? v === null : typeof v === t;
}

/** Deep equality of JSON values; iterative, and bounded by the size of `a` (the schema's side). */
function deepEqual(a: unknown, b: unknown): boolean {
  const stack: unknown[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === y) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    const keys = Object.keys(x);
    if (keys.length !== Object.keys(y).length) return false;
    for (const k of keys) {
      if (!Object.hasOwn(y, k)) return false;
      stack.push((x as Obj)[k], (y as Obj)[k]);
    }
  }
  return true;
}

/**
 * Compiles a plain JSON Schema into a validator, once. Throws a `TypeError` for a schema that cannot be
 * used: a malformed keyword, an invalid `pattern`, a `$ref` that does not resolve or is not local
 * (remote schemas are never fetched). The validator never throws.
 */
export function compileJsonSchema(
  root: JsonSchemaObject | boolean,
  options: JsonSchemaOptions = {},
): JsonSchemaValidator {
  const maxDepth = options.maxDepth ?? 128;
  const cache = new Map<object, Check>();

  function node(s: unknown, where: string): Check {
    if (s === true) return pass;
    if (s === false) return (_, c) => void issue(c, "no value is allowed here");
    if (!isObject(s)) throw fail(`the schema at ${where} must be an object or a boolean`);
    const cached = cache.get(s);
    if (cached) return cached;
    let built: Check = pass;
    cache.set(s, (v, c) => built(v, c)); // a recursive $ref reaches this before `built` is ready
    built = build(s, where);
    cache.set(s, built);
    return built;
  }
  const sub = (s: Obj, key: string, where: string) =>
    s[key] === undefined ? undefined : node(s[key], `${where}/${key}`);
  function list(s: Obj, key: string, where: string): Check[] | undefined {
    const v = s[key];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length === 0) throw bad(where, key, "a non-empty array of schemas");
    return v.map((x, i) => node(x, `${where}/${key}/${i}`));
  }
  const schemas: Subschemas = { node, sub, list };

  function resolve(ref: unknown, where: string): Check {
    if (typeof ref !== "string") throw bad(where, "$ref", "a string");
    const id = isObject(root) && typeof root.$id === "string" ? root.$id.replace(/#$/, "") : "";
    const r = id && ref.startsWith(id) ? ref.slice(id.length) || "#" : ref;
    if (!r.startsWith("#")) {
      throw new TypeError(
        `Unsupported $ref ${show(ref)} at ${where}: picomcp never fetches remote or external schemas. ` +
          `Copy the referenced schema into "$defs" and refer to it as "#/$defs/<name>".`,
      );
    }
    let target: unknown = r === "#" || r.startsWith("#/") ? root : undefined; // `#anchor` is not supported
    for (const raw of r.startsWith("#/") ? r.slice(2).split("/") : []) {
      let key = raw;
      try {
        key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      } catch {}
      const parent = target as Obj;
      target =
        typeof parent === "object" && parent !== null && Object.hasOwn(parent, key) ? parent[key] : undefined;
    }
    if (target === undefined)
      throw fail(`$ref ${show(ref)} at ${where} does not point to anything in the schema`);
    return node(target, r);
  }

  function build(s: Obj, where: string): Check {
    const checks: Check[] = [];
    const add = (check: Check | undefined) => check && check !== pass && checks.push(check);
    if (s.$ref !== undefined) {
      const target = resolve(s.$ref, where);
      add((v, c) => {
        if (c.depth >= c.maxDepth)
          return void issue(c, `is nested too deeply (more than ${c.maxDepth} $refs)`);
        c.depth++;
        target(v, c);
        c.depth--;
      });
    }
    if (s.const !== undefined) {
      const value = s.const;
      const message = `must be ${show(value)}`;
      add((v, c) => void (deepEqual(value, v) || issue(c, message)));
    }
    if (s.enum !== undefined) {
      const values = s.enum;
      if (!Array.isArray(values)) throw bad(where, "enum", "an array");
      const flat = new Set(values.filter((x) => typeof x !== "object" || x === null));
      const nested = values.filter((x) => typeof x === "object" && x !== null);
      const message = `must be one of ${values.slice(0, 10).map(show).join(", ")}${values.length > 10 ? ", …" : ""}`;
      add((v, c) => void (flat.has(v) || nested.some((x) => deepEqual(x, v)) || issue(c, message)));
    }
    for (const check of limitChecks(s, where)) add(check);
    add(scalarCheck(s, where));
    add(arrayCheck(s, where, schemas));
    add(objectCheck(s, where, schemas));
    add(logicCheck(s, where));

    const rest = all(checks);
    if (s.type === undefined) return rest;
    const types = typeof s.type === "string" ? [s.type] : s.type;
    if (!Array.isArray(types) || !types.every((t) => TYPES.includes(t))) {
      throw bad(where, "type", `one of ${TYPES.join(", ")}, or an array of them`);
    }
    const expected = types.join(" or ");
    return (v, c) => {
      for (const t of types) if (isType(t, v)) return rest(v, c);
      const it = issue(c, `expected ${expected}, received ${typeName(v)}`);
      if (it) expectedTypes.set(it, expected);
    };
  }

  function logicCheck(s: Obj, where: string): Check | undefined {
    const checks = list(s, "allOf", where) ?? [];
    for (const key of ["anyOf", "oneOf"]) {
      const branches = list(s, key, where);
      if (!branches) continue;
      checks.push((v, c) => {
        const failures: SchemaIssue[][] = [];
        for (const check of branches) {
          const found = trial(check, v, c);
          if (found.length === 0 && key === "anyOf") return;
          if (found.length > 0) failures.push(found);
        }
        const matches = branches.length - failures.length;
        if (matches === 0) noMatch(failures, v, c);
        else if (matches > 1) issue(c, `must match exactly one schema in oneOf, but matches ${matches}`);
      });
    }
    const not = sub(s, "not", where);
    if (not)
      checks.push(
        (v, c) => void (trial(not, v, c).length === 0 && issue(c, 'must not match the "not" schema')),
      );
    const cond = sub(s, "if", where);
    const then = sub(s, "then", where);
    const otherwise = sub(s, "else", where);
    if (cond && (then || otherwise))
      checks.push((v, c) => (trial(cond, v, c).length === 0 ? then : otherwise)?.(v, c));
    return all(checks);
  }

  const check = node(root, "#");
  return (value) => {
    const c: Ctx = { issues: [], path: [], depth: 0, maxDepth };
    try {
      check(value, c);
    } catch (error) {
      // a stack overflow on absurdly deep or circular values, or a throwing getter: fail closed
      return [{ path: "", message: "could not be validated (too deeply nested or circular)", cause: error }];
    }
    return c.issues;
  };
}

/**
 * Reports that no branch of an anyOf / oneOf matched: the one branch that got past the value's type
 * speaks for all (it is the most specific), type mismatches merge into one, anything else is summarized.
 */
function noMatch(failures: SchemaIssue[][], v: unknown, c: Ctx): void {
  const here = formatPath(c.path);
  const deep = failures.filter((f) => f.some((i) => i.path !== here));
  const expected = failures.map((f) => (f.length === 1 ? expectedTypes.get(f[0]!) : undefined));
  if (deep.length !== 1 && expected.every((e) => e !== undefined)) {
    const merged = [...new Set(expected)].join(" or ");
    const it = issue(c, `expected ${merged}, received ${typeName(v)}`);
    if (it) expectedTypes.set(it, merged);
    return;
  }
  const only = deep.length === 1 ? deep[0]! : failures.length === 1 ? failures[0]! : undefined;
  if (!only) return void issue(c, "does not match any of the allowed schemas");
  for (const i of only) if (c.issues.length < MAX_ISSUES) c.issues.push(i);
}
