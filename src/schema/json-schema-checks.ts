/**
 * The floor under `json-schema.ts`: the validation context every check reports into, the helpers checks
 * share, and the bounds (`minimum` … `maxProperties`) and `pattern`. A check answers whether the value is
 * valid; it writes issues only while reporting.
 */
import { compilePattern, type Pattern, UnsupportedPattern } from "./json-schema-regex.js";

/** One validation failure: where (`"address.city"`, `"tags[2]"`, `""` for the root) and what. */
export interface SchemaIssue {
  /** The failing field, as `a.b[2]`; `""` for the value itself. */
  readonly path: string;
  /** What is wrong, e.g. `expected string, received number`. */
  readonly message: string;
  /** The error thrown when validation itself failed (for the server's error hook; never sent to clients). */
  readonly cause?: unknown;
}

/**
 * What the schemas applied so far to the current value evaluated (JSON Schema's annotations), kept only
 * while an `unevaluatedProperties` / `unevaluatedItems` needs it.
 */
export interface Evaluated {
  keys: Set<string> | null;
  allKeys: boolean;
  /** Items before this index were evaluated (by `prefixItems`). */
  upTo: number;
  allItems: boolean;
  indexes: Set<number> | null;
}

/**
 * The state of one validation run. The first run decides (`report` false: no path, no issues, stop at the
 * first failure); only an invalid value is run again, reporting, to say what is wrong and where.
 */
export interface Ctx {
  report: boolean;
  issues: SchemaIssue[];
  readonly path: PropertyKey[];
  depth: number;
  readonly maxDepth: number;
  /** The annotations of the current value, or null when no `unevaluated*` keyword asks for them. */
  ev: Evaluated | null;
  /** The dynamic scope: the indexes of the schema resources entered, outermost first (for `$dynamicRef`). */
  readonly scope: number[];
  /** While an `anyOf` / `oneOf` explains a failure: the type each type mismatch expected, to merge them. */
  expected: Map<SchemaIssue, string> | null;
}
/** A compiled (sub)schema: whether the value is valid; never throws on purpose. */
export type Check = (value: unknown, ctx: Ctx) => boolean;
/** A JSON object, as seen by the checks. */
export type Obj = { readonly [key: string]: unknown };

/** Issues past this many are dropped; checks over collections stop early. */
export const MAX_ISSUES = 100;
/** The check that accepts everything. */
export const pass: Check = () => true;
/** A non-null, non-array object. */
export const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** A value as JSON, for messages. */
export const show = (v: unknown) => JSON.stringify(v) ?? String(v);
/** Whether a reporting run has collected all the issues it may. */
export const full = (c: Ctx) => c.report && c.issues.length >= MAX_ISSUES;

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

/** Records an issue at the current path (or at `key` under it) when reporting; always false. */
export function issue(c: Ctx, message: string, key?: PropertyKey): false {
  if (c.report && c.issues.length < MAX_ISSUES) {
    c.issues.push({ path: formatPath(key === undefined ? c.path : [...c.path, key]), message });
  }
  return false;
}

/** Runs `check` on `v`, the value under `key`: its own annotations, and the key on the path when reporting. */
export function child(c: Ctx, key: PropertyKey, check: Check, v: unknown): boolean {
  if (!c.report && c.ev === null) return check(v, c);
  const ev = c.ev;
  c.ev = null;
  let ok: boolean;
  if (c.report) {
    c.path.push(key);
    ok = check(v, c);
    c.path.pop();
  } else ok = check(v, c);
  c.ev = ev;
  return ok;
}

/** Whether `v` passes `check`, without reporting and without annotations (for `not`, `contains`, …). */
export function test(check: Check, v: unknown, c: Ctx): boolean {
  const { report, ev } = c;
  c.report = false;
  c.ev = null;
  const ok = check(v, c);
  c.report = report;
  c.ev = ev;
  return ok;
}

/** Runs `check` reporting into a list of its own, and returns that list. */
export function trial(check: Check, v: unknown, c: Ctx): SchemaIssue[] {
  const { issues, report, ev } = c;
  c.issues = [];
  c.report = true;
  c.ev = null;
  check(v, c);
  const found = c.issues;
  c.issues = issues;
  c.report = report;
  c.ev = ev;
  return found;
}

/** A fresh record of annotations. */
export const evaluated = (): Evaluated => ({
  keys: null,
  allKeys: false,
  upTo: 0,
  allItems: false,
  indexes: null,
});

/** Adds what `from` evaluated to `to`. */
export function merge(to: Evaluated, from: Evaluated): void {
  to.allKeys ||= from.allKeys;
  to.allItems ||= from.allItems;
  to.upTo = Math.max(to.upTo, from.upTo);
  if (from.keys) to.keys = to.keys ? new Set([...to.keys, ...from.keys]) : new Set(from.keys);
  if (from.indexes)
    to.indexes = to.indexes ? new Set([...to.indexes, ...from.indexes]) : new Set(from.indexes);
}

/** One check running each of `checks` in turn (`pass` for none); a reporting run goes on past a failure. */
export function all(checks: readonly Check[]): Check {
  if (checks.length <= 1) return checks[0] ?? pass;
  if (checks.length === 2) {
    const [a, b] = checks as [Check, Check];
    return (v, c) => {
      if (a(v, c)) return b(v, c);
      if (c.report) b(v, c);
      return false;
    };
  }
  if (checks.length === 3) {
    const [a, b, d] = checks as [Check, Check, Check];
    return (v, c) => {
      if (!c.report) return a(v, c) && b(v, c) && d(v, c);
      const first = a(v, c);
      const second = b(v, c);
      return d(v, c) && first && second;
    };
  }
  return (v, c) => {
    let ok = true;
    for (const check of checks) {
      if (check(v, c)) continue;
      if (!c.report) return false;
      ok = false;
    }
    return ok;
  };
}

/** The error for an unusable schema. */
export const fail = (message: string) => new TypeError(`Invalid JSON Schema: ${message}`);
/** The error for a malformed keyword: `"key" at where must be what`. */
export const bad = (where: string, key: string, what: string) => fail(`"${key}" at ${where} must be ${what}`);

/** The non-negative integer `s[key]`, or undefined when it is absent. */
export function count(s: Obj, key: string, where: string): number | undefined {
  const v = s[key];
  if (v !== undefined && (!Number.isInteger(v) || (v as number) < 0))
    throw bad(where, key, "a non-negative integer");
  return v as number | undefined;
}

/** The object `s[key]` (`{}` when absent). */
export function keyed(s: Obj, key: string, where: string): Obj {
  const v = s[key] ?? {};
  if (!isObject(v)) throw bad(where, key, "an object");
  return v;
}

/**
 * Compiles a `pattern` (or a `patternProperties` key) for the linear-time matcher, refusing, by name,
 * what it cannot run (backreferences, lookaround).
 */
export function regex(source: unknown, where: string): Pattern {
  if (typeof source !== "string") throw bad(where, "pattern", "a string");
  let re: RegExp | undefined;
  for (const flags of ["u", ""]) {
    try {
      re = new RegExp(source, flags); // then without "u", for patterns such as `[\w-.]`
      break;
    } catch {}
  }
  if (!re) throw fail(`pattern ${show(source)} at ${where} is not a valid regular expression`);
  try {
    return compilePattern(re);
  } catch (error) {
    if (!(error instanceof UnsupportedPattern)) throw error;
    throw fail(
      `pattern ${show(source)} at ${where} ${error.message}, which picomcp's linear-time matcher cannot run ` +
        "(it never backtracks, so no input can make a pattern slow): rewrite the pattern, or validate this " +
        "schema with a jsonSchemaValidator of your own",
    );
  }
}

/** The number of code points of `s` (what `minLength` / `maxLength` count). */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) n--;
  }
  return n;
}

/** The number of keys of `v` (for-in: a JSON object has no inherited keys, and any would count). */
export function keyCount(v: Obj): number {
  let n = 0;
  for (const _ in v) n++;
  return n;
}

// code points ≤ code units ≤ 2 × code points: the length alone decides most strings
const longEnough = (s: string, min: number) =>
  s.length >= 2 * min || (s.length >= min && codePoints(s) >= min);
const shortEnough = (s: string, max: number) => s.length <= max || codePoints(s) <= max;

type Bound = number | undefined;

/** The limit `s[key]`: a finite number, or (`integer`) a non-negative integer. */
function limit(s: Obj, key: string, where: string, integer: boolean): Bound {
  const n = s[key];
  if (n === undefined) return undefined;
  if (typeof n === "boolean" && key.startsWith("exclusive")) {
    throw bad(where, key, `a number (the boolean form is draft-04's; write "${key}": <limit> instead)`);
  }
  if (integer) return count(s, key, where);
  if (typeof n !== "number" || !Number.isFinite(n)) throw bad(where, key, "a number");
  return n;
}

/**
 * The checks of the bounds `s` sets, one per kind of value: `minimum` … `exclusiveMaximum`,
 * `minLength` / `maxLength` (in code points), `minItems` / `maxItems`, `minProperties` / `maxProperties`.
 */
export function limitChecks(s: Obj, where: string): Check[] {
  const checks: Check[] = [];
  const [min, max, xmin, xmax] = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"].map((k) =>
    limit(s, k, where, false),
  );
  if (min !== undefined || max !== undefined || xmin !== undefined || xmax !== undefined) {
    checks.push((v, c) => {
      if (typeof v !== "number") return true;
      let ok = true;
      if (min !== undefined && !(v >= min)) ok = issue(c, `must be >= ${min}`);
      if (max !== undefined && !(v <= max)) ok = issue(c, `must be <= ${max}`);
      if (xmin !== undefined && !(v > xmin)) ok = issue(c, `must be > ${xmin}`);
      if (xmax !== undefined && !(v < xmax)) ok = issue(c, `must be < ${xmax}`);
      return ok;
    });
  }
  const [minLength, maxLength] = ["minLength", "maxLength"].map((k) => limit(s, k, where, true));
  if (minLength !== undefined || maxLength !== undefined) {
    checks.push((v, c) => {
      if (typeof v !== "string") return true;
      let ok = true;
      if (minLength !== undefined && !longEnough(v, minLength)) {
        ok = issue(c, `must be at least ${minLength} characters`);
      }
      if (maxLength !== undefined && !shortEnough(v, maxLength)) {
        ok = issue(c, `must be at most ${maxLength} characters`);
      }
      return ok;
    });
  }
  const sizes = [
    ["minItems", "maxItems", "items", (v: unknown) => (Array.isArray(v) ? v.length : -1)],
    ["minProperties", "maxProperties", "properties", (v: unknown) => (isObject(v) ? keyCount(v) : -1)],
  ] as const;
  for (const [low, high, what, measure] of sizes) {
    const least = limit(s, low, where, true);
    const most = limit(s, high, where, true);
    if (least === undefined && most === undefined) continue;
    checks.push((v, c) => {
      const n = measure(v);
      if (n < 0) return true;
      let ok = true;
      if (least !== undefined && n < least) ok = issue(c, `must have at least ${least} ${what}`);
      if (most !== undefined && n > most) ok = issue(c, `must have at most ${most} ${what}`);
      return ok;
    });
  }
  return checks;
}
