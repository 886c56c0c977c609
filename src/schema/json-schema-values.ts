/**
 * The keywords that compare values: `multipleOf` (exactly, in decimal), `const` and `enum` (deep
 * equality), and `uniqueItems`.
 */
import { bad, type Check, isObject, issue, keyCount, type Obj, show } from "./json-schema-checks.js";

/** `x` as an exact decimal: `digits × 10^exponent`. */
function decimal(x: number): readonly [bigint, number] {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(String(x))!;
  const frac = m[3] ?? "";
  return [BigInt(`${m[1]}${m[2]}${frac}`), Number(m[4] ?? 0) - frac.length];
}

/** Whether the decimal that `v` stands for is a multiple of the one `step` stands for, exactly. */
function exactMultiple(v: number, step: number): boolean {
  const [a, ea] = decimal(v);
  const [b, eb] = decimal(step);
  const e = Math.min(ea, eb);
  return (a * 10n ** BigInt(ea - e)) % (b * 10n ** BigInt(eb - e)) === 0n;
}

/**
 * The check of `multipleOf`, exact: numbers are taken as the decimals they were written as (`0.07` is a
 * multiple of `0.01`), with no float tolerance (`1000000001` is not a multiple of 2).
 */
export function multipleCheck(step: unknown, where: string): Check {
  if (typeof step !== "number" || !(step > 0) || !Number.isFinite(step))
    throw bad(where, "multipleOf", "a number > 0");
  const message = `must be a multiple of ${step}`;
  if (Number.isInteger(step)) return (v, c) => typeof v !== "number" || v % step === 0 || issue(c, message);
  const [digits, exponent] = decimal(step);
  const pow = 10 ** -exponent;
  const unit = Number(digits);
  const fast = -exponent <= 22 && Number.isSafeInteger(unit);
  return (v, c) => {
    if (typeof v !== "number") return true;
    const scaled = v * pow;
    if (fast && Math.abs(scaled) < 2 ** 52) {
      const r = Math.round(scaled);
      // `v` is a decimal with at most -exponent places exactly when r / 10^places gives `v` back
      return (r / pow === v && r % unit === 0) || issue(c, message);
    }
    return (Number.isFinite(v) && exactMultiple(v, step)) || issue(c, message);
  };
}

/** Deep equality of JSON values (`1` equals `1.0`; key order does not count); allocates nothing. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  let n = 0;
  for (const k in a) {
    if (!Object.hasOwn(a, k)) continue;
    if (!Object.hasOwn(b, k) || !deepEqual((a as Obj)[k], (b as Obj)[k])) return false;
    n++;
  }
  return n === keyCount(b as Obj);
}

const sortKeys = (_: string, v: unknown) =>
  isObject(v)
    ? Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, v[k]]),
      )
    : v;

/** The check of `uniqueItems: true`: pairwise for short arrays (no allocation), by canonical JSON beyond. */
export const uniqueCheck: Check = (v, c) => {
  if (!Array.isArray(v)) return true;
  let ok = true;
  if (v.length <= 32) {
    for (let i = 1; i < v.length; i++) {
      for (let j = 0; j < i; j++) {
        if (!deepEqual(v[j], v[i])) continue;
        ok = issue(c, `must not contain duplicates (items ${j} and ${i} are equal)`);
        if (!c.report) return false;
        break;
      }
    }
    return ok;
  }
  const seen = new Map<string | undefined, number>();
  for (let i = 0; i < v.length; i++) {
    const key = JSON.stringify(v[i], sortKeys);
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else {
      ok = issue(c, `must not contain duplicates (items ${first} and ${i} are equal)`);
      if (!c.report) return false;
    }
  }
  return ok;
};

/** The check of `const`. */
export function constCheck(value: unknown): Check {
  const message = `must be ${show(value)}`;
  if (typeof value !== "object" || value === null) return (v, c) => v === value || issue(c, message);
  return (v, c) => deepEqual(value, v) || issue(c, message);
}

/** The check of `enum`. */
export function enumCheck(values: unknown, where: string): Check {
  if (!Array.isArray(values)) throw bad(where, "enum", "an array");
  const flat = new Set(values.filter((x) => typeof x !== "object" || x === null));
  const nested = values.filter((x) => typeof x === "object" && x !== null);
  const message = `must be one of ${values.slice(0, 10).map(show).join(", ")}${values.length > 10 ? ", …" : ""}`;
  return (v, c) => {
    if (flat.has(v)) return true;
    if (typeof v === "object" && v !== null) for (const x of nested) if (deepEqual(x, v)) return true;
    return issue(c, message);
  };
}
