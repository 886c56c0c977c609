/**
 * RFC 6570 expansion, level 4 in full (the algorithm of its appendix A): prefix modifiers, lists and
 * associative arrays, explode on every operator, undefined values dropped. Independent of the scanner:
 * it writes what the RFC says even for templates that `match` could not read back.
 */
import { KEEP_RESERVED, KEEP_UNRESERVED, percentEncode } from "./percent.js";
import type { Expr, UriOperator } from "./template-error.js";

/** One scalar: a string, or a number or boolean written as `String(value)`. */
export type UriScalar = string | number | boolean;

/** A value `expand` takes: a scalar, a list, an associative array; `null`, `undefined`, `[]` and `{}` are undefined. */
export type UriExpandValue =
  | UriScalar
  | readonly UriScalar[]
  | { readonly [key: string]: UriScalar | null | undefined }
  | null
  | undefined;

/** What `expand` takes: any variable may be missing (it is dropped, as RFC 6570 says). */
export type UriExpandValues = { readonly [name: string]: UriExpandValue };

/** An operator's expansion rules, as in RFC 6570 appendix A. */
interface Rules {
  readonly first: string;
  readonly sep: string;
  readonly named: boolean;
  readonly ifemp: string;
  readonly keep: Uint8Array;
  readonly reserved: boolean;
}

const rules = (first: string, sep: string, named: boolean, ifemp: string, reserved: boolean): Rules => ({
  first,
  sep,
  named,
  ifemp,
  keep: reserved ? KEEP_RESERVED : KEEP_UNRESERVED,
  reserved,
});

const RULES: Record<UriOperator, Rules> = {
  "": rules("", ",", false, "", false),
  "+": rules("", ",", false, "", true),
  "#": rules("#", ",", false, "", true),
  ".": rules(".", ".", false, "", false),
  "/": rules("/", "/", false, "", false),
  ";": rules(";", ";", true, "", false),
  "?": rules("?", "&", true, "=", false),
  "&": rules("&", "&", true, "=", false),
};

/** The URI for `values`; `parts` are encoded literals and expressions. Throws `TypeError` for a bad value. */
export function expandParts(parts: readonly (string | Expr)[], values: UriExpandValues): string {
  let out = "";
  for (const p of parts) out += typeof p === "string" ? p : expandExpr(p, values);
  return out;
}

function expandExpr(e: Expr, values: UriExpandValues): string {
  const r = RULES[e.op];
  let out = "";
  let defined = false;
  for (const v of e.vars) {
    const value = Object.hasOwn(values, v.name) ? values[v.name] : undefined;
    const text = expandVar(r, v, value);
    if (text === undefined) continue;
    out += (defined ? r.sep : r.first) + text;
    defined = true;
  }
  return out;
}

/** One variable's text, without its leading `first`/`sep`; undefined when the value is undefined. */
function expandVar(r: Rules, v: Expr["vars"][number], value: UriExpandValue): string | undefined {
  if (value === undefined || value === null) return undefined;
  const name = v.name;
  if (typeof value !== "object") {
    let s = scalar(name, value);
    if (v.prefix > 0) s = codePoints(s, v.prefix);
    const text = enc(r, s, name);
    return r.named ? name + (s === "" ? r.ifemp : "=") + text : text;
  }
  if (v.prefix > 0)
    throw new TypeError(`expand: '${name}' has a prefix modifier, so its value must be a string, not a list`);
  const pairs = Array.isArray(value) ? null : Object.entries(value).filter((kv) => kv[1] != null);
  const items = pairs === null ? (value as readonly UriScalar[]) : null;
  if ((items ?? pairs)!.length === 0) return undefined;
  let out = "";
  if (!v.explode) {
    if (items) for (const item of items) out += (out === "" ? "" : ",") + enc(r, scalar(name, item), name);
    else
      for (const [k, x] of pairs!)
        out += (out === "" ? "" : ",") + enc(r, k, name) + "," + enc(r, scalar(name, x!), name);
    return r.named ? `${name}=${out}` : out;
  }
  let first = true;
  const each = (key: string, s: string, pair: boolean) => {
    out += first ? "" : r.sep;
    first = false;
    if (r.named) out += key + (s === "" ? r.ifemp : "=") + enc(r, s, name);
    else out += pair ? `${key}=${enc(r, s, name)}` : enc(r, s, name);
  };
  if (items) for (const item of items) each(name, scalar(name, item), false);
  else for (const [k, x] of pairs!) each(enc(r, k, name), scalar(name, x!), true);
  return out;
}

function enc(r: Rules, s: string, name: string): string {
  return percentEncode(s, r.keep, name, r.reserved);
}

function scalar(name: string, v: unknown): string {
  const t = typeof v;
  if (t === "string") return v as string;
  if (t === "number" || t === "boolean" || t === "bigint") return String(v);
  throw new TypeError(`expand: the value of '${name}' must be a string, a number, a list or an object`);
}

/** The first `n` code points of `s` (a surrogate pair counts once, as RFC 6570 counts characters). */
function codePoints(s: string, n: number): string {
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
  }
  return s.slice(0, i);
}
