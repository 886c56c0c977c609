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

/** One validation failure: where (`"address.city"`, `"tags[2]"`, `""` for the root) and what. */
export interface SchemaIssue {
  /** The failing field, as `a.b[2]`; `""` for the value itself. */
  readonly path: string;
  /** What is wrong, e.g. `expected string, received number`. */
  readonly message: string;
  /** The error thrown when validation itself failed (for the server's error hook; never sent to clients). */
  readonly cause?: unknown;
}

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

const MAX_ISSUES = 100;
interface Ctx {
  issues: SchemaIssue[];
  readonly path: PropertyKey[];
  depth: number;
  readonly maxDepth: number;
}
type Check = (value: unknown, ctx: Ctx) => void;
type Obj = { readonly [key: string]: unknown };

const pass: Check = () => {};
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const show = (v: unknown) => JSON.stringify(v) ?? String(v);
const TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"];
// the expected type of each type-mismatch issue, so that a failed anyOf can merge them
const expectedTypes = new WeakMap<SchemaIssue, string>();

/** Formats a path as `a.b[2]["odd key"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z_$][\w$-]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

function issue(c: Ctx, message: string, key?: PropertyKey): SchemaIssue | undefined {
  if (c.issues.length >= MAX_ISSUES) return undefined;
  const it = { path: formatPath(key === undefined ? c.path : [...c.path, key]), message };
  c.issues.push(it);
  return it;
}

/** Runs `check` against its own issue list and returns that list. */
function trial(check: Check, v: unknown, c: Ctx): SchemaIssue[] {
  const saved = c.issues;
  c.issues = [];
  check(v, c);
  const found = c.issues;
  c.issues = saved;
  return found;
}

function at(c: Ctx, key: PropertyKey, check: Check, v: unknown): void {
  c.path.push(key);
  check(v, c);
  c.path.pop();
}

function all(checks: readonly Check[]): Check {
  if (checks.length <= 1) return checks[0] ?? pass;
  return (v, c) => {
    for (const check of checks) check(v, c);
  };
}

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

const sortKeys = (_: string, v: unknown) =>
  isObject(v)
    ? Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, v[k]]),
      )
    : v;

function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) n--;
  }
  return n;
}

type Limit = readonly [
  measure: (v: unknown) => number | undefined,
  ok: (x: number, n: number) => boolean,
  message: string,
];
const num = (v: unknown) => (typeof v === "number" ? v : undefined);
const chars = (v: unknown) => (typeof v === "string" ? codePoints(v) : undefined);
const items = (v: unknown) => (Array.isArray(v) ? v.length : undefined);
const props = (v: unknown) => (isObject(v) ? Object.keys(v).length : undefined);
const atLeast = (x: number, n: number) => x >= n;
const atMost = (x: number, n: number) => x <= n;
/** Keywords that bound one number measured on the value: `[measure, ok, message]`, `#` is the limit. */
const LIMITS: { readonly [keyword: string]: Limit } = {
  minimum: [num, atLeast, "must be >= #"],
  maximum: [num, atMost, "must be <= #"],
  exclusiveMinimum: [num, (x, n) => x > n, "must be > #"],
  exclusiveMaximum: [num, (x, n) => x < n, "must be < #"],
  minLength: [chars, atLeast, "must be at least # characters"],
  maxLength: [chars, atMost, "must be at most # characters"],
  minItems: [items, atLeast, "must have at least # items"],
  maxItems: [items, atMost, "must have at most # items"],
  minProperties: [props, atLeast, "must have at least # properties"],
  maxProperties: [props, atMost, "must have at most # properties"],
};

function validDate(y: string, m: string, d: string): boolean {
  const leap = +y % 4 === 0 && (+y % 100 !== 0 || +y % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][+m - 1];
  return days !== undefined && +d >= 1 && +d <= days;
}
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2})))?$/;
function dateTime(s: string, time: boolean): boolean {
  const m = DATE_TIME.exec(s);
  if (m === null || (m[4] !== undefined) !== time || !validDate(m[1]!, m[2]!, m[3]!)) return false;
  return !time || (+m[4]! < 24 && +m[5]! < 60 && +m[6]! <= 60 && +(m[7] ?? 0) < 24 && +(m[8] ?? 0) < 60);
}
/** The formats that are checked, lightly; any other `format` is an annotation only. */
const FORMATS: { readonly [name: string]: (s: string) => boolean } = {
  email: (s) => /^[^\s@]+@[^\s@]+$/.test(s),
  uri: (s) => /^[A-Za-z][A-Za-z\d+.-]*:\S*$/.test(s),
  uuid: (s) => /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i.test(s),
  date: (s) => dateTime(s, false),
  "date-time": (s) => dateTime(s, true),
};

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
  const fail = (message: string) => new TypeError(`Invalid JSON Schema: ${message}`);
  const bad = (where: string, key: string, what: string) => fail(`"${key}" at ${where} must be ${what}`);

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
  function count(s: Obj, key: string, where: string): number | undefined {
    const v = s[key];
    if (v !== undefined && (!Number.isInteger(v) || (v as number) < 0))
      throw bad(where, key, "a non-negative integer");
    return v as number | undefined;
  }
  function keyed(s: Obj, key: string, where: string): Obj {
    const v = s[key] ?? {};
    if (!isObject(v)) throw bad(where, key, "an object");
    return v;
  }
  function regex(source: unknown, where: string): RegExp {
    if (typeof source !== "string") throw bad(where, "pattern", "a string");
    for (const flags of ["u", ""]) {
      try {
        return new RegExp(source, flags); // then without "u", for patterns such as `[\w-.]`
      } catch {}
    }
    throw fail(`pattern ${show(source)} at ${where} is not a valid regular expression`);
  }

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
    for (const [key, [measure, ok, template]] of Object.entries(LIMITS)) {
      const n = s[key];
      if (n === undefined || (typeof n === "boolean" && key.startsWith("exclusive"))) continue;
      if (measure !== num) count(s, key, where);
      else if (typeof n !== "number" || !Number.isFinite(n)) throw bad(where, key, "a number");
      const message = template.replace("#", String(n));
      add((v, c) => {
        const x = measure(v);
        if (x !== undefined && !ok(x, n as number)) issue(c, message);
      });
    }
    add(scalarCheck(s, where));
    add(arrayCheck(s, where));
    add(objectCheck(s, where));
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

  function scalarCheck(s: Obj, where: string): Check | undefined {
    const step = s.multipleOf;
    if (step !== undefined && (typeof step !== "number" || !(step > 0)))
      throw bad(where, "multipleOf", "a number > 0");
    const re = s.pattern === undefined ? undefined : regex(s.pattern, `${where}/pattern`);
    const format = typeof s.format === "string" ? FORMATS[s.format] : undefined;
    if (step === undefined && !re && !format) return;
    return (v, c) => {
      if (typeof v === "number" && step !== undefined) {
        const q = v / step; // with a relative tolerance, so that 0.3 counts as a multiple of 0.1
        if (!Number.isFinite(q) || Math.abs(q - Math.round(q)) > 1e-9 * Math.max(1, Math.abs(q))) {
          issue(c, `must be a multiple of ${step}`);
        }
      }
      if (typeof v !== "string") return;
      if (re && !re.test(v)) issue(c, `must match pattern ${show(re.source)}`);
      if (format && !format(v)) issue(c, `must be a valid ${s.format}`);
    };
  }

  function arrayCheck(s: Obj, where: string): Check | undefined {
    const tuple = Array.isArray(s.items); // draft-07 tuples
    const prefix = list(s, tuple ? "items" : "prefixItems", where) ?? [];
    const rest = sub(s, tuple ? "additionalItems" : "items", where);
    const unique = s.uniqueItems === true;
    const contains = sub(s, "contains", where);
    const minContains = count(s, "minContains", where) ?? 1;
    const maxContains = count(s, "maxContains", where) ?? Number.POSITIVE_INFINITY;
    if (!prefix.length && !rest && !unique && !contains) return;
    return (v, c) => {
      if (!Array.isArray(v)) return;
      for (let i = 0; i < v.length && c.issues.length < MAX_ISSUES; i++) {
        const check = i < prefix.length ? prefix[i] : rest;
        if (!check) break;
        at(c, i, check, v[i]);
      }
      if (contains) {
        const n = v.filter((x) => trial(contains, x, c).length === 0).length;
        if (n < minContains) issue(c, `must contain at least ${minContains} matching item(s)`);
        if (n > maxContains) issue(c, `must contain at most ${maxContains} matching item(s)`);
      }
      if (!unique) return;
      const seen = new Map<string | undefined, number>();
      for (let i = 0; i < v.length; i++) {
        const key = JSON.stringify(v[i], sortKeys);
        const first = seen.get(key);
        if (first === undefined) seen.set(key, i);
        else issue(c, `must not contain duplicates (items ${first} and ${i} are equal)`);
      }
    };
  }

  function objectCheck(s: Obj, where: string): Check | undefined {
    const shape = keyed(s, "properties", where);
    const known = Object.keys(shape).map((k) => [k, node(shape[k], `${where}/properties/${k}`)] as const);
    const required = s.required ?? [];
    if (!Array.isArray(required) || !required.every((k) => typeof k === "string")) {
      throw bad(where, "required", "an array of strings");
    }
    const pp = keyed(s, "patternProperties", where);
    const patterns = Object.keys(pp).map(
      (k) =>
        [regex(k, `${where}/patternProperties`), node(pp[k], `${where}/patternProperties/${k}`)] as const,
    );
    const extra = s.additionalProperties === false ? false : sub(s, "additionalProperties", where);
    const names = sub(s, "propertyNames", where);
    const dependents = Object.entries(keyed(s, "dependentRequired", where));
    const scan = patterns.length > 0 || extra !== undefined || names !== undefined;
    if (!known.length && !required.length && !dependents.length && !scan) return;
    return (v, c) => {
      if (!isObject(v)) return;
      for (const [k, check] of known) if (Object.hasOwn(v, k)) at(c, k, check, v[k]);
      for (const k of required) if (!Object.hasOwn(v, k)) issue(c, "is required", k);
      for (const [k, needs] of dependents) {
        if (!Object.hasOwn(v, k) || !Array.isArray(needs)) continue;
        for (const n of needs)
          if (!Object.hasOwn(v, n)) issue(c, `is required when ${show(k)} is present`, n);
      }
      if (!scan) return;
      for (const k of Object.keys(v)) {
        if (c.issues.length >= MAX_ISSUES) return;
        let matched = Object.hasOwn(shape, k);
        for (const [re, check] of patterns) {
          if (!re.test(k)) continue;
          matched = true;
          at(c, k, check, v[k]);
        }
        if (!matched && extra === false) issue(c, "unexpected property", k);
        else if (!matched && extra) at(c, k, extra, v[k]);
        if (names) at(c, k, names, k);
      }
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
