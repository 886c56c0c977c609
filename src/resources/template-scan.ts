/**
 * The run-time half of a URI template: the compiled form (a {@link Scanner}) and the two things done with
 * it on every call, `match` and `expand`. The matching contract is documented in `uri-template.ts`;
 * `uri-template-compile.ts` builds the scanner once, at registration.
 */
import { percentDecode, percentEncode } from "./percent.js";

/**
 * What `match` returns: exploded variables as arrays, absent query keys omitted. Its prototype has no
 * properties, so variables named `constructor` or `__proto__` are safe, and an absent one reads undefined.
 */
export type UriValues = Record<string, string | string[]>;

/** What `expand` takes: path variables are required, query variables may be missing. */
export type UriExpandValues = Readonly<Record<string, string | readonly string[] | undefined>>;

/** How an operator writes its expression: the first prefix, the separator, `name=` pairs, reserved characters. */
export interface OpInfo {
  readonly first: string;
  readonly sep: string;
  readonly named: boolean;
  readonly reserved: boolean;
}

/** Token kind: literal text. */
export const LIT = 0;
/** Token kind: one value. */
export const SLOT = 1;
/** Token kind: an exploded list. */
export const LIST = 2;

/** One step of a compiled path or fragment part; one shape for every kind keeps the scanner monomorphic. */
export interface Tok {
  kind: number;
  /** LIT: the text. SLOT/LIST: the variable name. */
  text: string;
  /** SLOT: `;` style, the value follows `=` and may be empty. LIST: items are `name=value`. */
  named: boolean;
  nonEmpty: boolean;
  /** A list, or the last `{+…}`/`{#…}` variable of its expression: must be the pivot. */
  wide: boolean;
  forbid: Uint8Array | null;
  /** Before the pivot: the literal that ends this value (first occurrence); `soft` = a list prefix that may be absent. */
  next: string;
  soft: boolean;
  /** After the pivot: the literal that starts this value (last occurrence). */
  prev: string;
  /** LIST: prefix and separator char codes (prefix -1 when none). */
  prefix: number;
  sep: number;
  /** Expansion: operator info and the ASCII characters written as they are. */
  op: OpInfo;
  keep: Uint8Array;
  at: number;
}

/** A path or fragment part: its tokens, and the index of the one that takes what is left (-1: none). */
export interface Section {
  toks: Tok[];
  pivot: number;
}

/** A `{?…}`/`{&…}` variable. */
export interface QueryVar {
  name: string;
  explode: boolean;
  keep: Uint8Array;
}

/** Expansion steps in template order: a literal, a path/fragment expression, a query pair or variable. */
export type Step =
  | { kind: "lit"; text: string }
  | { kind: "expr"; op: OpInfo; toks: Tok[] }
  | { kind: "qpair"; text: string }
  | { kind: "qvar"; v: QueryVar };

/** A compiled template: everything `match` and `expand` read, built once by `compileScanner`. */
export interface Scanner {
  readonly template: string;
  readonly isTemplate: boolean;
  readonly maxUriLength: number;
  readonly path: Section;
  readonly fragment: Section;
  readonly queryVars: QueryVar[];
  readonly queryPairs: string[];
  readonly steps: Step[];
  hasQuery: boolean;
  hasFragment: boolean;
}

/** The prototype of results: empty, so inherited names never show through; unlike a null prototype, keeps objects fast. */
const NO_PROTO: object = Object.freeze(Object.create(null));

/** The decoded variables of `uri`, or null; as `UriTemplate.match`. */
export function matchUri(s: Scanner, uri: string): UriValues | null {
  const len = uri.length;
  if (len > s.maxUriLength) return null;
  if (!s.isTemplate) return uri === s.template ? (Object.create(NO_PROTO) as UriValues) : null;
  let frag = len;
  let query = -1;
  if (s.hasQuery || s.hasFragment) {
    const h = uri.indexOf("#");
    if (h >= 0) {
      if (!s.hasFragment) return null;
      frag = h;
    }
  }
  if (s.hasQuery) {
    query = uri.indexOf("?");
    if (query > frag) query = -1;
  }
  const out = Object.create(NO_PROTO) as UriValues;
  if (!matchSection(s.path, uri, 0, query < 0 ? frag : query, out)) return null;
  if (s.hasFragment && !matchSection(s.fragment, uri, frag, len, out)) return null;
  if (s.hasQuery && !matchQuery(s, uri, query < 0 ? frag : query + 1, frag, out)) return null;
  if (uri.includes("%")) {
    for (const name in out) {
      const v = out[name]!;
      if (typeof v === "string") out[name] = percentDecode(v, uri);
      else for (let i = 0; i < v.length; i++) v[i] = percentDecode(v[i]!, uri);
    }
  }
  return out;
}

function matchQuery(s: Scanner, uri: string, start: number, end: number, out: UriValues): boolean {
  const vars = s.queryVars;
  const pairs = s.queryPairs;
  let seen = 0;
  let i = start;
  while (i < end) {
    let amp = uri.indexOf("&", i);
    if (amp < 0 || amp > end) amp = end;
    for (let p = 0; p < pairs.length; p++) {
      const pair = pairs[p]!;
      if (pair.length === amp - i && uri.startsWith(pair, i)) seen |= 1 << p;
    }
    for (let v = 0; v < vars.length; v++) {
      const { name, explode } = vars[v]!;
      const n = i + name.length;
      if (n > amp || !uri.startsWith(name, i) || (n < amp && uri.charCodeAt(n) !== 61)) continue;
      const value = n === amp ? "" : uri.slice(n + 1, amp);
      const had = out[name];
      if (explode) {
        if (had === undefined) out[name] = [value];
        else (had as string[]).push(value);
      } else if (had === undefined) out[name] = value;
      break;
    }
    i = amp + 1;
  }
  return seen === (1 << pairs.length) - 1;
}

/** The URI for `values`; as `UriTemplate.expand`. */
export function expandUri(s: Scanner, values: UriExpandValues): string {
  if (!s.isTemplate) return s.template;
  let out = "";
  let query = false;
  for (const step of s.steps) {
    if (step.kind === "lit") out += step.text;
    else if (step.kind === "qpair") {
      out += (query ? "&" : "?") + step.text;
      query = true;
    } else if (step.kind === "qvar") {
      const { name, explode, keep } = step.v;
      const v = Object.hasOwn(values, name) ? values[name] : undefined;
      if (v === undefined) continue;
      for (const item of explode ? listValue(name, v) : [stringValue(name, v)]) {
        out += (query ? "&" : "?") + name + "=" + percentEncode(item, keep, name);
        query = true;
      }
    } else out += expandExpr(step.op, step.toks, values);
  }
  return out;
}

function expandExpr(op: OpInfo, toks: Tok[], values: UriExpandValues): string {
  let out = "";
  for (let i = 0; i < toks.length; i++) {
    const k = toks[i]!;
    const v = Object.hasOwn(values, k.text) ? values[k.text] : undefined;
    if (v === undefined) throw new TypeError(`expand: the path variable '${k.text}' is missing`);
    if (k.kind === LIST) {
      const items = listValue(k.text, v);
      for (let j = 0; j < items.length; j++) {
        out += j === 0 ? op.first : op.sep;
        if (k.named) out += k.text + (items[j] === "" ? "" : "=");
        out += percentEncode(items[j]!, k.keep, k.text);
      }
      continue;
    }
    const s = stringValue(k.text, v);
    // an empty `;` value is written `;x`, but `;x=` when a literal '=' follows, which match skips first
    const eq = s !== "" || k.next.charCodeAt(0) === 61;
    out +=
      (i === 0 ? op.first : op.sep) +
      (k.named ? k.text + (eq ? "=" : "") : "") +
      percentEncode(s, k.keep, k.text);
  }
  return out;
}

function stringValue(name: string, v: string | readonly string[]): string {
  if (typeof v !== "string")
    throw new TypeError(`expand: '${name}' is not exploded, so its value must be a string`);
  return v;
}

function listValue(name: string, v: string | readonly string[]): readonly string[] {
  if (!Array.isArray(v))
    throw new TypeError(`expand: '${name}' is exploded, so its value must be an array of strings`);
  return v;
}

/** Matches one part; forward up to the pivot, backward after it, the pivot takes the rest. */
function matchSection(sec: Section, uri: string, start: number, end: number, out: UriValues): boolean {
  const toks = sec.toks;
  const pivot = sec.pivot;
  if (pivot < 0) {
    const text = toks.length === 0 ? "" : toks[0]!.text;
    return end - start === text.length && uri.startsWith(text, start);
  }
  let q = end;
  for (let i = toks.length - 1; i > pivot; i--) {
    const k = toks[i]!;
    if (k.kind === LIT) {
      const s = q - k.text.length;
      if (s < start || !uri.startsWith(k.text, s)) return false;
      q = s;
    } else {
      const from = q - k.prev.length;
      if (from < start) return false;
      const found = uri.lastIndexOf(k.prev, from);
      if (found < start) return false;
      const s = found + k.prev.length;
      if (!takeSlot(k, uri, s, q, out)) return false;
      q = s;
    }
  }
  let p = start;
  for (let i = 0; i < pivot; i++) {
    const k = toks[i]!;
    if (k.kind === LIT) {
      if (p + k.text.length > q || !uri.startsWith(k.text, p)) return false;
      p += k.text.length;
    } else {
      // a `;` value starts with its own '=', which must not end it
      let e = uri.indexOf(k.next, k.named && uri.charCodeAt(p) === 61 ? p + 1 : p);
      if (e < 0 || e + k.next.length > q) {
        if (!k.soft) return false;
        e = q;
      }
      if (!takeSlot(k, uri, p, e, out)) return false;
      p = e;
    }
  }
  if (p > q) return false;
  const k = toks[pivot]!;
  return k.kind === LIST ? takeList(k, uri, p, q, out) : takeSlot(k, uri, p, q, out);
}

function takeSlot(k: Tok, uri: string, s: number, e: number, out: UriValues): boolean {
  if (k.named) {
    if (s === e) {
      out[k.text] = "";
      return true;
    }
    if (uri.charCodeAt(s) !== 61) return false;
    s++;
  } else if (s === e && k.nonEmpty) return false;
  const forbid = k.forbid;
  if (forbid !== null) {
    for (let i = s; i < e; i++) {
      const c = uri.charCodeAt(i);
      if (c < 128 && forbid[c]) return false;
    }
  }
  out[k.text] = uri.slice(s, e);
  return true;
}

function takeList(k: Tok, uri: string, s: number, e: number, out: UriValues): boolean {
  const items: string[] = [];
  out[k.text] = items;
  if (s === e) return true;
  if (k.prefix >= 0) {
    if (uri.charCodeAt(s) !== k.prefix) return false;
    s++;
  }
  const forbid = k.forbid;
  const name = k.text;
  for (let i = s; ; ) {
    let j = i;
    while (j < e) {
      const c = uri.charCodeAt(j);
      if (c === k.sep) break;
      if (forbid !== null && c < 128 && forbid[c]) return false;
      j++;
    }
    if (!k.named) items.push(uri.slice(i, j));
    else {
      const n = i + name.length;
      if (n > j || !uri.startsWith(name, i)) return false;
      if (n === j) items.push("");
      else if (uri.charCodeAt(n) === 61) items.push(uri.slice(n + 1, j));
      else return false;
    }
    if (j === e) return true;
    i = j + 1;
  }
}
