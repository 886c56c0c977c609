/**
 * The screen that keeps a schema `pattern` from blocking the server: a regular expression whose
 * backtracking can grow exponentially with the input (`^(\w+\s?)*$`) is refused at registration.
 *
 * The rule: a part repeated more than once (`*`, `+`, `{n,}`, `{n,m}` with m ≥ 2) must not contain a part
 * that can match the same text in more than one way — a variable-length repetition (`a+`, `\s?`) or an
 * alternation whose branches can begin with the same character — unless each repetition holds a required
 * character that none of those parts can match (`(?:[a-z]+\.)*` is fine: every round ends at a dot).
 * The screen is conservative: it works on character sets (exact for ASCII; any other character counts as
 * overlapping), so it may refuse a pattern that is in fact safe. It does not look for polynomial
 * backtracking (`^\s*(.*?)\s*$`), which the transports' body limits bound.
 */

/** A set of characters: bits for ASCII, and whether it may hold any non-ASCII character. */
interface Chars {
  readonly bits: number[]; // four 32-bit words
  wide: boolean;
}
type Node =
  | { readonly kind: "char"; readonly chars: Chars }
  | { readonly kind: "seq"; readonly items: Node[] }
  | { readonly kind: "alt"; readonly options: Node[] }
  | {
      readonly kind: "repeat";
      readonly body: Node;
      readonly min: number;
      readonly max: number;
      readonly src: string;
    };

const none = (): Chars => ({ bits: [0, 0, 0, 0], wide: false });
const EMPTY: Node = { kind: "seq", items: [] };

function add(set: Chars, from: number, to: number): Chars {
  for (let c = from; c <= Math.min(to, 127); c++) set.bits[c >> 5]! |= 1 << (c & 31);
  if (to > 127) set.wide = true;
  return set;
}
function union(a: Chars, b: Chars): Chars {
  return { bits: a.bits.map((w, i) => w | b.bits[i]!), wide: a.wide || b.wide };
}
const overlap = (a: Chars, b: Chars) => (a.wide && b.wide) || a.bits.some((w, i) => (w & b.bits[i]!) !== 0);
function negate(set: Chars): Chars {
  return { bits: set.bits.map((w) => ~w), wide: true };
}
const ANY = (): Chars => add(none(), 0, 0x10ffff);
const DIGIT = () => add(none(), 48, 57);
const WORD = () => add(add(add(add(none(), 48, 57), 65, 90), 97, 122), 95, 95);
const SPACE = () => ({ ...add(add(none(), 9, 13), 32, 32), wide: true });

/** A parser for the ECMA-262 pattern syntax, enough to see its structure; it never rejects a pattern. */
class Parser {
  i = 0;
  readonly s: string;
  constructor(pattern: string) {
    this.s = pattern;
  }

  alt(): Node {
    const options = [this.seq()];
    while (this.s[this.i] === "|") {
      this.i++;
      options.push(this.seq());
    }
    return options.length === 1 ? options[0]! : { kind: "alt", options };
  }

  seq(): Node {
    const items: Node[] = [];
    while (this.i < this.s.length && this.s[this.i] !== "|" && this.s[this.i] !== ")") {
      const start = this.i;
      let node = this.atom();
      for (let q = this.quantifier(); q; q = this.quantifier()) {
        node = { kind: "repeat", body: node, min: q[0], max: q[1], src: this.s.slice(start, this.i) };
      }
      items.push(node);
    }
    return items.length === 1 ? items[0]! : { kind: "seq", items };
  }

  quantifier(): readonly [number, number] | undefined {
    const c = this.s[this.i];
    let q: readonly [number, number] | undefined;
    if (c === "*") q = [0, Number.POSITIVE_INFINITY];
    else if (c === "+") q = [1, Number.POSITIVE_INFINITY];
    else if (c === "?") q = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
      if (!m) return undefined;
      const min = Number(m[1]);
      q = [min, m[2] === undefined ? min : m[3] ? Number(m[3]) : Number.POSITIVE_INFINITY];
      this.i += m[0].length - 1;
    } else return undefined;
    this.i++;
    if (this.s[this.i] === "?") this.i++; // lazy: the same matches, in another order
    return q;
  }

  atom(): Node {
    const c = this.s[this.i++]!;
    if (c === "(") {
      let look = false;
      if (this.s[this.i] === "?") {
        const m = /^\?(?::|=|!|<=|<!|<[^>]*>)/.exec(this.s.slice(this.i));
        look = m !== null && /^\?(?:=|!|<=|<!)$/.test(m[0]);
        this.i += m ? m[0].length : 1;
      }
      const inner = this.alt();
      this.i++; // ")"
      if (look) this.lookarounds.push(inner);
      return look ? EMPTY : inner;
    }
    if (c === "[") return { kind: "char", chars: this.set() };
    if (c === ".") return { kind: "char", chars: ANY() };
    if (c === "^" || c === "$") return EMPTY;
    if (c === "\\") return this.escape(false) ?? EMPTY;
    const code = this.s.codePointAt(this.i - 1)!;
    if (code > 0xffff) this.i++;
    return { kind: "char", chars: add(none(), code, code) };
  }

  /** Bodies of lookarounds: zero-width, but screened too. */
  readonly lookarounds: Node[] = [];

  /** An escape after `\`: a node, or undefined for a zero-width one (`\b`, `\B`). */
  escape(inClass: boolean): Node | undefined {
    const c = this.s[this.i] ?? "\\";
    if ((c === "b" || c === "B") && !inClass) {
      this.i++;
      return undefined;
    }
    if (/[1-9]/.test(c) || (c === "k" && this.s[this.i + 1] === "<")) {
      this.i = c === "k" ? this.s.indexOf(">", this.i) + 1 || this.s.length : this.i + 1;
      while (c !== "k" && /\d/.test(this.s[this.i] ?? "")) this.i++;
      // a back-reference matches text of any length: count it as a variable part
      const body: Node = { kind: "char", chars: ANY() };
      return { kind: "repeat", body, min: 0, max: Number.POSITIVE_INFINITY, src: "\\1" };
    }
    const one = this.escaped();
    return { kind: "char", chars: typeof one === "number" ? add(none(), one, one) : one };
  }

  /** The character, or the class, of an escape after `\`. */
  escaped(): number | Chars {
    const c = this.s[this.i++] ?? "\\";
    const classes: { readonly [c: string]: () => Chars } = { d: DIGIT, w: WORD, s: SPACE };
    const lower = c.toLowerCase();
    if (classes[lower]) return c === lower ? classes[lower]() : negate(classes[lower]());
    if (c === "p" || c === "P") {
      if (this.s[this.i] === "{") this.i = this.s.indexOf("}", this.i) + 1 || this.s.length;
      return ANY();
    }
    const hex = /^(?:x([\da-fA-F]{2})|u([\da-fA-F]{4})|u\{([\da-fA-F]+)\})/.exec(this.s.slice(this.i - 1));
    if (hex) {
      this.i += hex[0].length - 1;
      return Number.parseInt(hex[1] ?? hex[2] ?? hex[3]!, 16);
    }
    return { n: 10, r: 13, t: 9, v: 11, f: 12, b: 8, "0": 0 }[c] ?? c.codePointAt(0)!;
  }

  /** A class `[…]`, after the `[`. */
  set(): Chars {
    const negated = this.s[this.i] === "^";
    if (negated) this.i++;
    let set = none();
    while (this.i < this.s.length && this.s[this.i] !== "]") {
      const from = this.classAtom();
      if (this.s[this.i] === "-" && this.s[this.i + 1] !== "]" && typeof from === "number") {
        this.i++;
        const to = this.classAtom();
        set = typeof to === "number" ? add(set, from, to) : union(add(set, from, from), to);
      } else set = typeof from === "number" ? add(set, from, from) : union(set, from);
    }
    this.i++; // "]"
    return negated ? negate(set) : set;
  }

  classAtom(): number | Chars {
    if (this.s[this.i] === "\\") {
      this.i++;
      return this.escaped();
    }
    const code = this.s.codePointAt(this.i)!;
    this.i += code > 0xffff ? 2 : 1;
    return code;
  }
}

/** Every character the node can match. */
function charsOf(node: Node): Chars {
  if (node.kind === "char") return node.chars;
  if (node.kind === "repeat") return charsOf(node.body);
  return (node.kind === "seq" ? node.items : node.options).reduce((a, n) => union(a, charsOf(n)), none());
}

function nullable(node: Node): boolean {
  if (node.kind === "char") return false;
  if (node.kind === "repeat") return node.min === 0 || nullable(node.body);
  return node.kind === "seq" ? node.items.every(nullable) : node.options.some(nullable);
}

/** The characters the node's match can begin with. */
function firstOf(node: Node): Chars {
  if (node.kind === "char") return node.chars;
  if (node.kind === "repeat") return firstOf(node.body);
  if (node.kind === "alt") return node.options.reduce((a, n) => union(a, firstOf(n)), none());
  let set = none();
  for (const item of node.items) {
    set = union(set, firstOf(item));
    if (!nullable(item)) break;
  }
  return set;
}

/** The parts of `node` that can match one text in more than one way, as the characters each can match. */
function ambiguous(node: Node, out: Chars[]): Chars[] {
  if (node.kind === "repeat") {
    if (node.max > node.min) out.push(charsOf(node.body));
    else ambiguous(node.body, out);
  } else if (node.kind === "seq") {
    for (const item of node.items) ambiguous(item, out);
  } else if (node.kind === "alt") {
    const firsts = node.options.map(firstOf);
    if (firsts.some((f, i) => firsts.some((g, j) => j > i && overlap(f, g)))) out.push(charsOf(node));
    else for (const option of node.options) ambiguous(option, out);
  }
  return out;
}

/** The characters that every match of `node` must contain, one set per required single-character part. */
function required(node: Node): Chars[] {
  if (node.kind === "char") return [node.chars];
  if (node.kind === "repeat") return node.min > 0 && node.max === node.min ? required(node.body) : [];
  return node.kind === "seq" ? node.items.flatMap(required) : [];
}

/** The first repeated part of `node` that can backtrack catastrophically, as its source text. */
function unsafe(node: Node): string | undefined {
  if (node.kind === "char") return undefined;
  if (node.kind === "repeat") {
    if (node.max >= 2) {
      const parts = ambiguous(node.body, []);
      const separated = required(node.body).some((sep) => parts.every((p) => !overlap(p, sep)));
      if (parts.length > 0 && !separated) return node.src;
    }
    return unsafe(node.body);
  }
  for (const n of node.kind === "seq" ? node.items : node.options) {
    const found = unsafe(n);
    if (found) return found;
  }
  return undefined;
}

/**
 * The part of a regular expression that can backtrack catastrophically (see the rule above), or
 * undefined when the pattern passes the screen.
 */
export function catastrophicPart(pattern: string): string | undefined {
  const parser = new Parser(pattern);
  let tree = parser.alt();
  while (parser.i < pattern.length) {
    parser.i++; // a stray ")": the RegExp constructor decides whether the pattern is valid
    tree = { kind: "seq", items: [tree, parser.alt()] };
  }
  for (const node of [tree, ...parser.lookarounds]) {
    const found = unsafe(node);
    if (found) return found;
  }
  return undefined;
}
