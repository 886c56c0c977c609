/**
 * The applicators of arrays and objects (`prefixItems`, `items`, `contains`, `properties`,
 * `patternProperties`, `additionalProperties`, `propertyNames`, `required`, `dependent*`, draft-07's
 * `dependencies` and array `items` / `additionalItems`) and the `unevaluated*` keywords that read what
 * they evaluated. Subschemas are compiled through the {@link Subschemas} the caller passes in.
 */
import {
  type Check,
  type Ctx,
  child,
  count,
  type Evaluated,
  evaluated,
  full,
  isObject,
  issue,
  keyed,
  merge,
  type Obj,
  regex,
  show,
  test,
} from "./json-schema-checks.js";
import type { Pattern } from "./json-schema-regex.js";
import { uniqueCheck } from "./json-schema-values.js";

/** What a keyword compiler needs from the schema compiler: compiled subschemas (cached, `$ref`-aware). */
export interface Subschemas {
  /** The check of `s[key]`, or undefined when it is absent. */
  sub(s: Obj, key: string): Check | undefined;
  /** The checks of the array of schemas `s[key]`, or undefined when it is absent. */
  list(s: Obj, key: string): Check[] | undefined;
  /** The check of the schema `s[key][name]`. */
  member(s: Obj, key: string, name: string): Check;
}

function markKey(ev: Evaluated, k: string): void {
  if (ev.keys) ev.keys.add(k);
  else ev.keys = new Set([k]);
}

/** The checks of the array keywords of `s`. */
export function arrayChecks(s: Obj, where: string, schemas: Subschemas): Check[] {
  const checks: Check[] = [];
  const tuple = Array.isArray(s.items); // draft-07 tuples, in either dialect
  if (s.additionalItems !== undefined && !tuple) {
    throw new TypeError(
      `Invalid JSON Schema: "additionalItems" at ${where} has no effect without an array "items"; ` +
        'use "items" (2020-12) for the items after "prefixItems"',
    );
  }
  if (tuple && s.prefixItems !== undefined)
    throw new TypeError(`Invalid JSON Schema: "prefixItems" at ${where} cannot sit beside an array "items"`);
  const prefix = schemas.list(s, tuple ? "items" : "prefixItems") ?? [];
  const rest = schemas.sub(s, tuple ? "additionalItems" : "items");
  const n = prefix.length;
  if (n > 0 || rest) {
    checks.push((v, c) => {
      if (!Array.isArray(v)) return true;
      let ok = true;
      for (let i = 0; i < v.length && !full(c); i++) {
        const check = i < n ? prefix[i]! : rest;
        if (!check) break;
        if (child(c, i, check, v[i])) continue;
        if (!c.report) return false;
        ok = false;
      }
      if (c.ev) {
        if (rest) c.ev.allItems = true;
        else c.ev.upTo = Math.max(c.ev.upTo, Math.min(n, v.length));
      }
      return ok;
    });
  }
  const contains = schemas.sub(s, "contains");
  const min = count(s, "minContains", where) ?? 1;
  const max = count(s, "maxContains", where) ?? Number.POSITIVE_INFINITY;
  if (contains) {
    const few = `must contain at least ${min} matching item(s)`;
    const many = `must contain at most ${max} matching item(s)`;
    checks.push((v, c) => {
      if (!Array.isArray(v)) return true;
      let found = 0;
      for (let i = 0; i < v.length; i++) {
        if (!test(contains, v[i], c)) continue;
        found++;
        if (c.ev?.indexes) c.ev.indexes.add(i);
        else if (c.ev) c.ev.indexes = new Set([i]);
        else if (found >= min && max === Number.POSITIVE_INFINITY) return true;
      }
      return (found >= min || issue(c, few)) && (found <= max || issue(c, many));
    });
  }
  if (s.uniqueItems !== undefined && typeof s.uniqueItems !== "boolean")
    throw new TypeError(`Invalid JSON Schema: "uniqueItems" at ${where} must be a boolean`);
  if (s.uniqueItems === true) checks.push(uniqueCheck);
  return checks;
}

/** The checks of the object keywords of `s`. */
export function objectChecks(s: Obj, where: string, schemas: Subschemas): Check[] {
  const checks: Check[] = [];
  const names = Object.keys(keyed(s, "properties", where));
  const known = names.map((k) => schemas.member(s, "properties", k));
  const required = s.required ?? [];
  if (!Array.isArray(required) || !required.every((k) => typeof k === "string")) {
    throw new TypeError(`Invalid JSON Schema: "required" at ${where} must be an array of strings`);
  }
  const inside = [...new Set(required)].filter((k) => names.includes(k));
  const outside = [...new Set(required)].filter((k) => !names.includes(k));
  const pp = keyed(s, "patternProperties", where);
  const patterns = Object.keys(pp).map((k) => regex(k, `${where}/patternProperties`));
  const patternChecks = Object.keys(pp).map((k) => schemas.member(s, "patternProperties", k));
  const extra = s.additionalProperties === false ? false : schemas.sub(s, "additionalProperties");
  if (names.length > 0 || patterns.length > 0 || extra !== undefined) {
    checks.push(scan({ names, known, inside, patterns, patternChecks, extra }));
  }
  if (outside.length > 0) checks.push(requires(outside, "is required"));
  const deps = keyed(s, "dependencies", where);
  for (const [key, title] of [
    ["dependentRequired", undefined],
    ["dependencies", "dependencies"],
  ] as const) {
    for (const [k, needs] of Object.entries(key === "dependencies" ? deps : keyed(s, key, where))) {
      if (key === "dependencies" && !Array.isArray(needs)) continue;
      if (!Array.isArray(needs) || !needs.every((n) => typeof n === "string")) {
        throw new TypeError(
          `Invalid JSON Schema: "${title ?? key}/${k}" at ${where} must be an array of strings`,
        );
      }
      const check = requires(needs, `is required when ${show(k)} is present`);
      checks.push((v, c) => !isObject(v) || !Object.hasOwn(v, k) || check(v, c));
    }
  }
  for (const key of ["dependentSchemas", "dependencies"]) {
    const map = keyed(s, key, where);
    for (const k of Object.keys(map)) {
      if (Array.isArray(map[k])) continue;
      const check = schemas.member(s, key, k);
      checks.push((v, c) => !isObject(v) || !Object.hasOwn(v, k) || check(v, c));
    }
  }
  const propertyNames = schemas.sub(s, "propertyNames");
  if (propertyNames) {
    checks.push((v, c) => {
      if (!isObject(v)) return true;
      let ok = true;
      for (const k in v) {
        if (child(c, k, propertyNames, k)) continue;
        if (!c.report || full(c)) return false;
        ok = false;
      }
      return ok;
    });
  }
  return checks;
}

/** What an object schema's keywords say of the keys of an object, compiled. */
interface KeyRules {
  /** The names `properties` lists, and the check of each. */
  readonly names: readonly string[];
  readonly known: readonly Check[];
  /** The `required` names among them. */
  readonly inside: readonly string[];
  /** `patternProperties`: the patterns, and the check of each. */
  readonly patterns: readonly Pattern[];
  readonly patternChecks: readonly Check[];
  /** `additionalProperties`: its check, `false`, or undefined (any key allowed). */
  readonly extra: Check | false | undefined;
}

/**
 * `properties`, the `required` names among them, `patternProperties` and `additionalProperties`, in one
 * pass over the object's keys (a for-in reads each value fast, where a lookup by name would not).
 */
function scan(keys: KeyRules): Check {
  const { names, known, inside, patterns, patternChecks, extra } = keys;
  const index = new Map(names.map((k, i) => [k, i]));
  // a few names compare faster one by one than through a hash
  const find = names.length > 12 ? (k: string) => index.get(k) ?? -1 : (k: string) => names.indexOf(k);
  const needed = names.map((k) => inside.includes(k));
  const missing = requires(inside, "is required");
  return (v, c) => {
    if (!isObject(v)) return true;
    let ok = true;
    let seen = 0;
    for (const k in v) {
      if (full(c)) return false;
      const x = v[k];
      const i = find(k);
      if (i >= 0 && x !== undefined) {
        if (needed[i]) seen++;
        if (c.ev) markKey(c.ev, k);
        if (!child(c, k, known[i]!, x)) {
          if (!c.report) return false;
          ok = false;
        }
      }
      let matched = i >= 0;
      for (let p = 0; p < patterns.length; p++) {
        if (!patterns[p]!.test(k)) continue;
        matched = true;
        if (c.ev) markKey(c.ev, k);
        if (child(c, k, patternChecks[p]!, x)) continue;
        if (!c.report) return false;
        ok = false;
      }
      if (matched || extra === undefined) continue;
      if (c.ev) markKey(c.ev, k);
      if (extra === false ? issue(c, "unexpected property", k) : child(c, k, extra, x)) continue;
      if (!c.report) return false;
      ok = false;
    }
    return (seen === inside.length || missing(v, c)) && ok;
  };
}

function requires(keys: readonly string[], message: string): Check {
  const inherited = keys.map((k) => k in Object.prototype);
  return (v, c) => {
    if (!isObject(v)) return true;
    let ok = true;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (v[k] !== undefined && (!inherited[i] || Object.hasOwn(v, k))) continue;
      if (!c.report) return false;
      ok = issue(c, message, k);
    }
    return ok;
  };
}

/**
 * Wraps the checks of a schema with `unevaluatedProperties` / `unevaluatedItems`: the other keywords run
 * first and record what they evaluated; the rest of the object's keys (the array's items) go through
 * the `unevaluated*` subschema. What a passing schema evaluated counts for the schema around it.
 */
export function unevaluatedCheck(s: Obj, rest: Check, schemas: Subschemas): Check {
  const props = s.unevaluatedProperties === false ? false : schemas.sub(s, "unevaluatedProperties");
  const items = s.unevaluatedItems === false ? false : schemas.sub(s, "unevaluatedItems");
  const leftOver = (v: unknown, c: Ctx, ev: Evaluated): boolean => {
    let ok = true;
    if (isObject(v) && props !== undefined && !ev.allKeys) {
      for (const k in v) {
        if (ev.keys?.has(k)) continue;
        if (props === false ? issue(c, "unexpected property", k) : child(c, k, props, v[k])) continue;
        if (!c.report || full(c)) return false;
        ok = false;
      }
      ev.allKeys = true;
    }
    if (Array.isArray(v) && items !== undefined && !ev.allItems) {
      for (let i = ev.upTo; i < v.length; i++) {
        if (ev.indexes?.has(i)) continue;
        if (items === false ? issue(c, "no value is allowed here", i) : child(c, i, items, v[i])) continue;
        if (!c.report || full(c)) return false;
        ok = false;
      }
      ev.allItems = true;
    }
    return ok;
  };
  return (v, c) => {
    if (typeof v !== "object" || v === null) return rest(v, c);
    const parent = c.ev;
    const ev = evaluated();
    c.ev = ev;
    let ok = rest(v, c);
    if (ok || c.report) ok = leftOver(v, c, ev) && ok;
    c.ev = parent;
    if (ok && parent) merge(parent, ev);
    return ok;
  };
}
