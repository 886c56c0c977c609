/**
 * The run-time half of a URI template: the compiled form (a {@link Scanner}) and `match`, run on every
 * read. The matching contract is documented in `template.ts`; `template-compile.ts` builds the scanner
 * once, at registration.
 */
import { codePointLength, encodeUriText, percentDecode } from "./percent.js";

/**
 * What `match` returns: exploded path variables as arrays, an exploded query variable as a record (a key
 * the URI repeats as the list of its values), absent query keys omitted. Its prototype (and a record's)
 * has no properties, so variables named `constructor` or `__proto__` are safe, and an absent one reads
 * undefined.
 */
export type UriValues = Record<string, string | string[] | Record<string, string | string[]>>;

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
/**
 * Token kind: one value behind the text its expression writes before it (`lead`: `/`, `.`, `#`, `;name`, or
 * the `,` of `{x,y}`), which RFC 6570 leaves out with the value when the variable is undefined: absent
 * where the URI does not have that text, and then left out of the result.
 */
export const OPT = 3;

/** One step of a compiled path or fragment part; one shape for every kind keeps the scanner monomorphic. */
export interface Tok {
  kind: number;
  /** LIT: the text. SLOT/LIST/OPT: the variable name. */
  text: string;
  /** OPT: the text before its value (`/`, `.`, `#`, `,`, `;name`); "" for the other kinds. */
  lead: string;
  /** SLOT/OPT: `;` style, the value follows `=` and may be empty. LIST: items are `name=value`. */
  named: boolean;
  /** A list, or the last `{+…}`/`{#…}` variable of its expression: must be the pivot. */
  wide: boolean;
  forbid: Uint8Array | null;
  /**
   * Before the pivot: the literal that ends this value (first occurrence); `soft` = a list prefix or an
   * OPT's lead, which may be absent. After it, for OPT: `prev` + `lead`, searched from the right.
   */
  next: string;
  /** Before the pivot, when OPTs follow: the texts after `next` that may end this value too (the earliest wins); else null. */
  alt: string[] | null;
  /** OPT before the pivot: the literal that ends its run of OPTs ("" when none does). */
  lit: string;
  soft: boolean;
  /** After the pivot: the literal that starts this value (last occurrence); for OPT, the literal before its lead ("" after a variable). */
  prev: string;
  /** LIST: prefix and separator char codes (prefix -1 when none). */
  prefix: number;
  sep: number;
  /** The operator's expansion rules. */
  op: OpInfo;
  /** Where in the template, for errors. */
  at: number;
}

/**
 * A path or fragment part: its tokens, the index of the one that takes what is left (-1: none), and how
 * far its leading literal reaches (the tokens after the pivot, matched from the right, never reach into it).
 */
export interface Section {
  toks: Tok[];
  pivot: number;
  floor: number;
}

/** A `{?…}`/`{&…}` variable that is not exploded; `max` is its prefix length (0: none). */
export interface QueryVar {
  name: string;
  max: number;
}

/** A compiled template: everything `match` and `expand` read, built once by `compileScanner`. */
export interface Scanner {
  readonly template: string;
  readonly isTemplate: boolean;
  readonly maxUriLength: number;
  readonly path: Section;
  readonly fragment: Section;
  readonly queryVars: QueryVar[];
  /** Literal `key=value` pairs of the query, which must all be present, and their keys. */
  readonly queryPairs: string[];
  readonly pairKeys: string[];
  /** The exploded query variable, which collects every query key no other variable or pair claims. */
  record: string | null;
  /** Variables with a prefix modifier: their decoded value has at most `max` code points. */
  readonly prefixed: { name: string; max: number }[];
  literalPrefix: string;
  hasQuery: boolean;
  hasFragment: boolean;
  /** The query starts with `{?…}` and goes on: with all of `{?…}` undefined, it starts at `&` (RFC 6570). */
  ampQuery: boolean;
  /** A literal had to be encoded: a URI is encoded the same way (`é` as `%C3%A9`) before it is matched. */
  iri: boolean;
}

/** The prototype of results: empty, so inherited names never show through; unlike a null prototype, keeps objects fast. */
const NO_PROTO: object = Object.freeze(Object.create(null));

/** The decoded variables of `uri`, or null; as `UriTemplate.match`. */
export function matchUri(s: Scanner, given: string): UriValues | null {
  if (given.length > s.maxUriLength) return null;
  if (!s.isTemplate) return given === s.template ? (Object.create(NO_PROTO) as UriValues) : null;
  const uri = s.iri ? encodeUriText(given) : given;
  if (uri === null) return null;
  const len = uri.length;
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
    if (query < 0 && s.ampQuery) {
      query = uri.indexOf("&");
      if (query > frag) query = -1;
    }
  }
  const out = Object.create(NO_PROTO) as UriValues;
  if (!matchSection(s.path, uri, 0, query < 0 ? frag : query, out)) return null;
  if (s.hasFragment && !matchSection(s.fragment, uri, frag, len, out)) return null;
  if (s.hasQuery && !matchQuery(s, uri, query < 0 ? frag : query + 1, frag, out)) return null;
  if (uri.includes("%")) {
    for (const name in out) {
      const v = out[name]!;
      if (typeof v === "string") out[name] = percentDecode(v, given);
      else if (Array.isArray(v)) for (let i = 0; i < v.length; i++) v[i] = percentDecode(v[i]!, given);
      else {
        const r = Object.create(NO_PROTO) as Record<string, string | string[]>;
        for (const k in v) {
          const key = percentDecode(k, given);
          const x = v[k]!;
          if (typeof x === "string") add(r, key, percentDecode(x, given));
          else for (const item of x) add(r, key, percentDecode(item, given));
        }
        out[name] = r;
      }
    }
  }
  const prefixed = s.prefixed;
  for (let i = 0; i < prefixed.length; i++) {
    const v = out[prefixed[i]!.name];
    if (typeof v === "string" && codePointLength(v) > prefixed[i]!.max) return null;
  }
  return out;
}

function matchQuery(s: Scanner, uri: string, start: number, end: number, out: UriValues): boolean {
  const vars = s.queryVars;
  const pairs = s.queryPairs;
  const record = s.record;
  let seen = 0;
  let i = start;
  while (i < end) {
    let amp = uri.indexOf("&", i);
    if (amp < 0 || amp > end) amp = end;
    let claimed = false;
    for (let p = 0; p < pairs.length; p++) {
      const pair = pairs[p]!;
      if (pair.length === amp - i && uri.startsWith(pair, i)) seen |= 1 << p;
    }
    for (let v = 0; v < vars.length; v++) {
      const name = vars[v]!.name;
      const n = i + name.length;
      if (n > amp || !uri.startsWith(name, i) || (n < amp && uri.charCodeAt(n) !== 61)) continue;
      if (out[name] === undefined) out[name] = n === amp ? "" : uri.slice(n + 1, amp);
      claimed = true;
      break;
    }
    if (record !== null && !claimed && amp > i) collect(s, uri, i, amp, out);
    i = amp + 1;
  }
  return seen === (1 << pairs.length) - 1;
}

/** Adds the pair `uri[i, amp)` to the scanner's record variable, unless a literal pair claims its key. */
function collect(s: Scanner, uri: string, i: number, amp: number, out: UriValues): void {
  const record = s.record!;
  let eq = uri.indexOf("=", i);
  if (eq < 0 || eq > amp) eq = amp;
  const key = uri.slice(i, eq);
  if (s.pairKeys.includes(key)) return;
  let r = out[record] as Record<string, string | string[]> | undefined;
  if (r === undefined) out[record] = r = Object.create(NO_PROTO) as Record<string, string | string[]>;
  add(r, key, eq === amp ? "" : uri.slice(eq + 1, amp));
}

/** A key the URI repeats becomes the list of its values, in order: `{?list*}` writes a list so. */
function add(r: Record<string, string | string[]>, key: string, value: string): void {
  const had = r[key];
  if (had === undefined) r[key] = value;
  else if (typeof had === "string") r[key] = [had, value];
  else had.push(value);
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
  const floor = start + sec.floor;
  for (let i = toks.length - 1; i > pivot; i--) {
    const k = toks[i]!;
    if (k.kind === LIT) {
      const s = q - k.text.length;
      if (s < start || !uri.startsWith(k.text, s)) return false;
      q = s;
    } else if (k.kind === OPT) {
      // present at the last occurrence of its literal and lead; absent (nothing taken) without one
      const from = q - k.next.length;
      const found = from >= floor ? uri.lastIndexOf(k.next, from) : -1;
      if (found >= floor && takeSlot(k, uri, found + k.next.length, q, out)) q = found + k.prev.length;
    } else {
      const from = q - k.prev.length;
      if (from < floor) return false;
      const found = uri.lastIndexOf(k.prev, from);
      if (found < floor) return false;
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
    } else if (k.kind === OPT) {
      // present where the URI has its lead and, after it, what ends it; absent (nothing taken) otherwise
      const s = p + k.lead.length;
      if (s > q || !uri.startsWith(k.lead, p)) continue;
      // present only if the literal that must follow still comes after the lead: `{/a}/pages` on `/pages`
      if (k.lit !== "") {
        const f = uri.indexOf(k.lit, s);
        if (f < 0 || f + k.lit.length > q) continue;
      }
      // a `;name` that goes on with `=` has a value: its end is searched after that `=`
      const e = endOf(k, uri, k.named && uri.charCodeAt(s) === 61 ? s + 1 : s, q);
      if (e >= 0 && takeSlot(k, uri, s, e, out)) p = e;
    } else {
      const e = endOf(k, uri, p, q);
      if (e < 0 || !takeSlot(k, uri, p, e, out)) return false;
      p = e;
    }
  }
  if (p > q) return false;
  const k = toks[pivot]!;
  if (k.kind === LIST) return takeList(k, uri, p, q, out);
  if (k.kind !== OPT) return takeSlot(k, uri, p, q, out);
  // the pivot: absent when nothing is left, else it starts with its lead
  if (p === q) return true;
  const s = p + k.lead.length;
  return s <= q && uri.startsWith(k.lead, p) && takeSlot(k, uri, s, q, out);
}

/** Where a value before the pivot ends: the first of `next` and `alt` in `uri[from, q)`; else q if `soft`, else -1. */
function endOf(k: Tok, uri: string, from: number, q: number): number {
  let e = uri.indexOf(k.next, from);
  if (e + k.next.length > q) e = -1;
  const alt = k.alt;
  if (alt !== null) {
    for (let i = 0; i < alt.length; i++) {
      const f = uri.indexOf(alt[i]!, from);
      if (f >= 0 && f + alt[i]!.length <= q && (e < 0 || f < e)) e = f;
    }
  }
  return e < 0 && k.soft ? q : e;
}

function takeSlot(k: Tok, uri: string, s: number, e: number, out: UriValues): boolean {
  if (k.named) {
    if (s === e) {
      out[k.text] = "";
      return true;
    }
    if (uri.charCodeAt(s) !== 61) return false;
    s++;
  }
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
