/**
 * picomcp's JSON Schema validator for plain schemas: JSON Schema 2020-12 (and the draft-07 forms older
 * clients send), compiled once into closures — no `eval`, no `new Function`, zero dependencies — and
 * allocation-free on valid input (save for the records `unevaluated*` keeps). Every keyword is checked
 * or refused at compile time, by name; `format` and the `content*` keywords are annotations, as 2020-12
 * says. `$ref`, `$anchor`, `$dynamicRef` resolve inside the document, against the nearest `$id`; a
 * reference to anything outside it is refused (nothing is ever fetched). See docs/tools.md.
 */
import { arrayChecks, objectChecks, type Subschemas, unevaluatedCheck } from "./json-schema-apply.js";
import {
  all,
  bad,
  type Check,
  type Ctx,
  evaluated,
  formatPath,
  isObject,
  issue,
  limitChecks,
  MAX_ISSUES,
  merge,
  type Obj,
  pass,
  regex,
  type SchemaIssue,
  show,
  test,
  trial,
} from "./json-schema-checks.js";
import { mapSchema, type Place, resolveRef } from "./json-schema-refs.js";
import { constCheck, enumCheck, multipleCheck } from "./json-schema-values.js";

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

/** A compiled schema: the issues found, an empty array when the value is valid. */
export type CompiledJsonSchema = (value: unknown) => readonly SchemaIssue[];

const TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"];
const VALID: readonly SchemaIssue[] = Object.freeze([]);

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isFinite(v) ? "number" : String(v);
  return typeof v;
}

const IS: { readonly [type: string]: (v: unknown) => boolean } = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  object: isObject,
  array: Array.isArray,
  null: (v) => v === null,
};
type Report = (v: unknown, c: Ctx) => boolean;
/** One closure per type, so that each call site sees one shape of check. */
const ONE_TYPE: { readonly [type: string]: (report: Report) => Check } = {
  string: (report) => (v, c) => typeof v === "string" || report(v, c),
  number: (report) => (v, c) => (typeof v === "number" && Number.isFinite(v)) || report(v, c),
  integer: (report) => (v, c) => Number.isInteger(v) || report(v, c),
  boolean: (report) => (v, c) => typeof v === "boolean" || report(v, c),
  object: (report) => (v, c) => (typeof v === "object" && v !== null && !Array.isArray(v)) || report(v, c),
  array: (report) => (v, c) => Array.isArray(v) || report(v, c),
  null: (report) => (v, c) => v === null || report(v, c),
};

function typeCheck(type: unknown, where: string): Check {
  const types = typeof type === "string" ? [type] : type;
  if (!Array.isArray(types) || !types.every((t) => TYPES.includes(t))) {
    throw bad(where, "type", `one of ${TYPES.join(", ")}, or an array of them`);
  }
  const expected = types.join(" or ");
  const report = (v: unknown, c: Ctx) => {
    if (c.report && c.issues.length < MAX_ISSUES) {
      const it = { path: formatPath(c.path), message: `expected ${expected}, received ${typeName(v)}` };
      c.expected?.set(it, expected);
      c.issues.push(it);
    }
    return false;
  };
  if (types.length === 1) return ONE_TYPE[types[0]]!(report);
  const tests = types.map((t) => IS[t]!);
  return (v, c) => {
    for (const is of tests) if (is(v)) return true;
    return report(v, c);
  };
}

/**
 * Compiles a plain JSON Schema into a validator, once. Throws a `TypeError` for a schema that cannot be
 * used: a malformed or unknown keyword, a `pattern` that is invalid or can backtrack catastrophically, a
 * `$ref` that does not resolve or points outside the document. The validator never throws.
 */
export function compileJsonSchema(
  root: JsonSchemaObject | boolean,
  options: JsonSchemaOptions = {},
): CompiledJsonSchema {
  const maxDepth = options.maxDepth ?? 128;
  const map = mapSchema(root);
  const cache = new Map<object, Check>();
  const roots = new Map(map.resources.map((r) => [r.node, r.index]));

  function node(s: unknown, place: Place): Check {
    if (s === true) return pass;
    if (s === false) return (_, c) => issue(c, "no value is allowed here");
    if (!isObject(s)) throw bad(place.where, "schema", "an object or a boolean");
    const cached = cache.get(s);
    if (cached) return cached;
    let built: Check = pass;
    cache.set(s, (v, c) => built(v, c)); // a recursive $ref reaches this before `built` is ready
    built = build(s, map.places.get(s) ?? place);
    const index = roots.get(s);
    if (map.dynamic && index !== undefined) built = entering(index, built);
    cache.set(s, built);
    return built;
  }

  function schemasOf(place: Place): Subschemas {
    const at = (key: string): Place => ({ ...place, where: `${place.where}/${key}` });
    return {
      sub: (o, key) => (o[key] === undefined ? undefined : node(o[key], at(key))),
      list: (o, key) => {
        const v = o[key];
        if (v === undefined) return undefined;
        if (!Array.isArray(v) || (v.length === 0 && key !== "prefixItems" && key !== "items")) {
          throw bad(place.where, key, "a non-empty array of schemas");
        }
        return v.map((x, i) => node(x, at(`${key}/${i}`)));
      },
      member: (o, key, name) => node((o[key] as Obj)[name], at(`${key}/${name}`)),
    };
  }

  function refCheck(s: Obj, place: Place): Check | undefined {
    if (s.$ref === undefined) return undefined;
    const target = resolveRef(map, s.$ref, place, "$ref");
    const check = node(target.node, target.place);
    const index = target.place.resource.index;
    const enter = map.dynamic && index !== place.resource.index && !roots.has(target.node);
    return deeper(enter ? entering(index, check) : check);
  }

  function dynamicRefCheck(s: Obj, place: Place): Check | undefined {
    if (s.$dynamicRef === undefined) return undefined;
    const target = resolveRef(map, s.$dynamicRef, place, "$dynamicRef");
    const fallback = node(target.node, target.place);
    const name = String(s.$dynamicRef).replace(/^[^#]*#?/, "");
    const anchored = isObject(target.node) && target.node.$dynamicAnchor === name;
    if (!anchored) return deeper(fallback);
    // the outermost resource in the dynamic scope that declares the same $dynamicAnchor wins
    const candidates: (Check | undefined)[] = map.resources.map((r) =>
      r.dynamic.has(name)
        ? node(r.anchors.get(name), map.places.get(r.anchors.get(name) as object)!)
        : undefined,
    );
    return deeper((v, c) => {
      for (const index of c.scope) {
        const check = candidates[index];
        if (check) return check(v, c);
      }
      return fallback(v, c);
    });
  }

  function build(s: Obj, place: Place): Check {
    const where = place.where;
    const schemas = schemasOf(place);
    const checks: Check[] = [];
    const add = (check: Check | undefined) => void (check && check !== pass && checks.push(check));
    if (s.type !== undefined) add(typeCheck(s.type, where));
    add(refCheck(s, place));
    add(dynamicRefCheck(s, place));
    if (s.const !== undefined) add(constCheck(s.const));
    if (s.enum !== undefined) add(enumCheck(s.enum, where));
    for (const check of limitChecks(s, where)) add(check);
    if (s.multipleOf !== undefined) add(multipleCheck(s.multipleOf, where));
    if (s.pattern !== undefined) {
      const re = regex(s.pattern, `${where}/pattern`);
      const message = `must match pattern ${show(re.source)}`;
      // a string surely past `maxLength` (twice as many code units) fails there: no report runs the pattern on it
      const most = typeof s.maxLength === "number" ? 2 * s.maxLength : Number.POSITIVE_INFINITY;
      add((v, c) => typeof v !== "string" || (v.length <= most && (re.test(v) || issue(c, message))));
    }
    for (const check of arrayChecks(s, where, schemas)) add(check);
    for (const check of objectChecks(s, where, schemas)) add(check);
    for (const check of logicChecks(s, schemas)) add(check);
    const rest = all(checks);
    if (s.unevaluatedProperties === undefined && s.unevaluatedItems === undefined) return rest;
    return unevaluatedCheck(s, rest, schemas);
  }

  const deeper =
    (check: Check): Check =>
    (v, c) => {
      if (c.depth >= c.maxDepth) return issue(c, `is nested too deeply (more than ${c.maxDepth} $refs)`);
      c.depth++;
      const ok = check(v, c);
      c.depth--;
      return ok;
    };

  const check = node(
    root,
    map.places.get(root as object) ?? { resource: map.resources[0]!, dialect: "2020-12", where: "#" },
  );
  const fresh = (): Ctx => ({
    report: false,
    issues: [],
    path: [],
    depth: 0,
    maxDepth,
    ev: null,
    scope: [],
    expected: null,
  });
  const shared = fresh();
  let busy = false;
  return (value) => {
    const mine = !busy; // a getter on the value may validate again: it gets a context of its own
    const c = mine ? shared : fresh();
    busy = true;
    try {
      reset(c, false);
      if (check(value, c)) return VALID;
      reset(c, true);
      check(value, c);
      const issues = c.issues;
      c.issues = [];
      return issues.length > 0 ? issues : [{ path: "", message: "is invalid" }];
    } catch (error) {
      // a stack overflow on absurdly deep or circular values, or a throwing getter: fail closed
      return [{ path: "", message: "could not be validated (too deeply nested or circular)", cause: error }];
    } finally {
      if (mine) busy = false;
    }
  };
}

function reset(c: Ctx, report: boolean): void {
  c.report = report;
  c.issues = report ? [] : c.issues;
  if (c.path.length > 0) c.path.length = 0;
  c.depth = 0;
  c.ev = null;
  c.expected = null;
  if (c.scope.length > 0) c.scope.length = 0;
}

/** Keeps `index` on the dynamic scope while `check` runs. */
function entering(index: number, check: Check): Check {
  return (v, c) => {
    c.scope.push(index);
    const ok = check(v, c);
    c.scope.pop();
    return ok;
  };
}

/** The in-place applicators: `allOf`, `anyOf`, `oneOf`, `not`, `if` / `then` / `else`. */
function logicChecks(s: Obj, schemas: Subschemas): Check[] {
  const checks = schemas.list(s, "allOf") ?? [];
  const anyOf = schemas.list(s, "anyOf");
  if (anyOf) {
    checks.push((v, c) => {
      if (c.ev === null) {
        for (const branch of anyOf) if (test(branch, v, c)) return true;
      } else if (branches(anyOf, v, c) > 0) return true; // every passing branch's annotations count
      return c.report ? noMatch(anyOf, v, c) : false;
    });
  }
  const oneOf = schemas.list(s, "oneOf");
  if (oneOf) {
    checks.push((v, c) => {
      const matches = branches(oneOf, v, c, c.report ? Number.POSITIVE_INFINITY : 2);
      if (matches === 1) return true;
      if (matches === 0) return c.report ? noMatch(oneOf, v, c) : false;
      return issue(c, `must match exactly one schema in oneOf, but matches ${matches}`);
    });
  }
  const not = schemas.sub(s, "not");
  if (not) checks.push((v, c) => !test(not, v, c) || issue(c, 'must not match the "not" schema'));
  const cond = schemas.sub(s, "if");
  const then = schemas.sub(s, "then");
  const otherwise = schemas.sub(s, "else");
  if (cond) {
    checks.push((v, c) => {
      if (!then && !otherwise && c.ev === null) return true; // a lone `if` only gives annotations
      const next = branches([cond], v, c) === 1 ? then : otherwise;
      return next ? next(v, c) : true;
    });
  }
  return checks;
}

/**
 * How many of `checks` `v` passes (counting stops at `stop`). While annotations are kept, each branch
 * records into a record of its own, which counts only when the branch passes.
 */
function branches(checks: readonly Check[], v: unknown, c: Ctx, stop = Number.POSITIVE_INFINITY): number {
  let n = 0;
  const parent = c.ev;
  for (const check of checks) {
    if (parent === null) {
      if (test(check, v, c) && ++n >= stop) return n;
      continue;
    }
    const ev = evaluated();
    const report = c.report;
    c.report = false;
    c.ev = ev;
    const ok = check(v, c);
    c.report = report;
    c.ev = parent;
    if (ok) {
      merge(parent, ev);
      if (++n >= stop) return n;
    }
  }
  return n;
}

/**
 * Reports that no branch of an anyOf / oneOf matched: the one branch that got past the value's type
 * speaks for all (it is the most specific), type mismatches merge into one, anything else is summarized.
 */
function noMatch(checks: readonly Check[], v: unknown, c: Ctx): false {
  const outer = c.expected;
  const types = new Map<SchemaIssue, string>();
  c.expected = types;
  const failures = checks.map((check) => trial(check, v, c));
  c.expected = outer;
  const here = formatPath(c.path);
  const deep = failures.filter((f) => f.some((i) => i.path !== here));
  const expected = failures.map((f) => (f.length === 1 ? types.get(f[0]!) : undefined));
  if (deep.length !== 1 && expected.every((e) => e !== undefined)) {
    const merged = [...new Set(expected)].join(" or ");
    if (c.issues.length < MAX_ISSUES) {
      const it = { path: here, message: `expected ${merged}, received ${typeName(v)}` };
      outer?.set(it, merged);
      c.issues.push(it);
    }
    return false;
  }
  const only = deep.length === 1 ? deep[0]! : failures.length === 1 ? failures[0]! : undefined;
  if (!only) return issue(c, "does not match any of the allowed schemas");
  for (const i of only) if (c.issues.length < MAX_ISSUES) c.issues.push(i);
  return false;
}
