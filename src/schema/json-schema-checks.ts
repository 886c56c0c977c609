/**
 * The floor under `json-schema.ts`: the validation context every check reports into, and the compilers of
 * the keywords that constrain one kind of value (number and string bounds, `multipleOf`, `pattern`,
 * `format`, arrays, objects). Subschemas are compiled through the {@link Subschemas} the caller passes in.
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

/** The state of one validation run. */
export interface Ctx {
  issues: SchemaIssue[];
  readonly path: PropertyKey[];
  depth: number;
  readonly maxDepth: number;
}
/** A compiled (sub)schema: reports into `ctx.issues`, never throws on purpose. */
export type Check = (value: unknown, ctx: Ctx) => void;
/** A JSON object, as seen by the checks. */
export type Obj = { readonly [key: string]: unknown };

/** Issues past this many are dropped; checks over collections stop early. */
export const MAX_ISSUES = 100;
/** The check that accepts everything. */
export const pass: Check = () => {};
/** A non-null, non-array object. */
export const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** A value as JSON, for messages. */
export const show = (v: unknown) => JSON.stringify(v) ?? String(v);

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

/** Records an issue at the current path (or at `key` under it); undefined once {@link MAX_ISSUES} are in. */
export function issue(c: Ctx, message: string, key?: PropertyKey): SchemaIssue | undefined {
  if (c.issues.length >= MAX_ISSUES) return undefined;
  const it = { path: formatPath(key === undefined ? c.path : [...c.path, key]), message };
  c.issues.push(it);
  return it;
}

/** Runs `check` against its own issue list and returns that list. */
export function trial(check: Check, v: unknown, c: Ctx): SchemaIssue[] {
  const saved = c.issues;
  c.issues = [];
  check(v, c);
  const found = c.issues;
  c.issues = saved;
  return found;
}

/** Runs `check` on `v` with `key` appended to the path. */
export function at(c: Ctx, key: PropertyKey, check: Check, v: unknown): void {
  c.path.push(key);
  check(v, c);
  c.path.pop();
}

/** One check running each of `checks` in turn (`pass` for none). */
export function all(checks: readonly Check[]): Check {
  if (checks.length <= 1) return checks[0] ?? pass;
  return (v, c) => {
    for (const check of checks) check(v, c);
  };
}

/** The error for an unusable schema. */
export const fail = (message: string) => new TypeError(`Invalid JSON Schema: ${message}`);
/** The error for a malformed keyword: `"key" at where must be what`. */
export const bad = (where: string, key: string, what: string) => fail(`"${key}" at ${where} must be ${what}`);

/** What a keyword compiler needs from the schema compiler: compiled subschemas (cached, `$ref`-aware). */
export interface Subschemas {
  /** The check of the schema `s`, found at `where`. */
  node(s: unknown, where: string): Check;
  /** The check of `s[key]`, or undefined when it is absent. */
  sub(s: Obj, key: string, where: string): Check | undefined;
  /** The checks of the non-empty array of schemas `s[key]`, or undefined when it is absent. */
  list(s: Obj, key: string, where: string): Check[] | undefined;
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

/** The checks of the bounds in {@link LIMITS} that `s` sets, in table order. */
export function limitChecks(s: Obj, where: string): Check[] {
  const checks: Check[] = [];
  for (const [key, [measure, ok, template]] of Object.entries(LIMITS)) {
    const n = s[key];
    if (n === undefined || (typeof n === "boolean" && key.startsWith("exclusive"))) continue;
    if (measure !== num) count(s, key, where);
    else if (typeof n !== "number" || !Number.isFinite(n)) throw bad(where, key, "a number");
    const message = template.replace("#", String(n));
    checks.push((v, c) => {
      const x = measure(v);
      if (x !== undefined && !ok(x, n as number)) issue(c, message);
    });
  }
  return checks;
}

/** The check of `multipleOf`, `pattern` and `format`, or undefined when `s` has none of them. */
export function scalarCheck(s: Obj, where: string): Check | undefined {
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

/** The check of the array keywords of `s`, or undefined when it has none. */
export function arrayCheck(s: Obj, where: string, schemas: Subschemas): Check | undefined {
  const tuple = Array.isArray(s.items); // draft-07 tuples
  const prefix = schemas.list(s, tuple ? "items" : "prefixItems", where) ?? [];
  const rest = schemas.sub(s, tuple ? "additionalItems" : "items", where);
  const unique = s.uniqueItems === true;
  const contains = schemas.sub(s, "contains", where);
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

/** The check of the object keywords of `s`, or undefined when it has none. */
export function objectCheck(s: Obj, where: string, schemas: Subschemas): Check | undefined {
  const shape = keyed(s, "properties", where);
  const known = Object.keys(shape).map(
    (k) => [k, schemas.node(shape[k], `${where}/properties/${k}`)] as const,
  );
  const required = s.required ?? [];
  if (!Array.isArray(required) || !required.every((k) => typeof k === "string")) {
    throw bad(where, "required", "an array of strings");
  }
  const pp = keyed(s, "patternProperties", where);
  const patterns = Object.keys(pp).map(
    (k) =>
      [
        regex(k, `${where}/patternProperties`),
        schemas.node(pp[k], `${where}/patternProperties/${k}`),
      ] as const,
  );
  const extra = s.additionalProperties === false ? false : schemas.sub(s, "additionalProperties", where);
  const names = schemas.sub(s, "propertyNames", where);
  const dependents = Object.entries(keyed(s, "dependentRequired", where));
  const scan = patterns.length > 0 || extra !== undefined || names !== undefined;
  if (!known.length && !required.length && !dependents.length && !scan) return;
  return (v, c) => {
    if (!isObject(v)) return;
    for (const [k, check] of known) if (Object.hasOwn(v, k)) at(c, k, check, v[k]);
    for (const k of required) if (!Object.hasOwn(v, k)) issue(c, "is required", k);
    for (const [k, needs] of dependents) {
      if (!Object.hasOwn(v, k) || !Array.isArray(needs)) continue;
      for (const n of needs) if (!Object.hasOwn(v, n)) issue(c, `is required when ${show(k)} is present`, n);
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
