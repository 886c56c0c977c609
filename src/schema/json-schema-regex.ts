/**
 * JSON Schema `pattern`s (and `patternProperties` keys), run in linear time: the ECMA-262 syntax is read
 * here into the tree that `linear-regex.ts` compiles to an automaton, so that no caller's input can make
 * a pattern backtrack (`^(\w+\s?)*$` on 30 characters blocked the event loop for seconds as a RegExp).
 *
 * The pattern must first be a valid RegExp (with the `u` flag, else without, as `RegExp` reads it): this
 * parser follows that reading, and leaves the meaning of every character class and escape to `RegExp`
 * itself (a class is tested one character at a time, which cannot backtrack). Lookahead and lookbehind
 * run as passes of their own; what no automaton can run is refused by name: backreferences (`\1`,
 * `\k<name>`), and modifier groups (`(?i:…)`).
 */
import { type CharSet, LinearRegex, type Node, PatternTooLarge } from "./linear-regex.js";

/** A compiled `pattern`. */
export interface Pattern {
  /** The pattern as `RegExp.prototype.source` spells it. */
  readonly source: string;
  /** Whether `text` holds a match, anywhere (as `RegExp.prototype.test`). */
  test(text: string): boolean;
}

/** A valid pattern that the linear-time matcher cannot run; the message names what, and why. */
export class UnsupportedPattern extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsupportedPattern";
  }
}

/** Compiles a pattern `RegExp` accepted (`re`: with the `u` flag, or without), or throws {@link UnsupportedPattern}. */
export function compilePattern(re: RegExp): Pattern {
  const matcher = linearMatcher(re);
  return { source: re.source, test: (text) => matcher.test(text) };
}

/** @internal — the matcher itself, for tests that count its steps; throws as {@link compilePattern} does. */
export function linearMatcher(re: RegExp): LinearRegex {
  const tree = new Parser(re.source, re.unicode).parse();
  try {
    return new LinearRegex(tree, re.unicode);
  } catch (error) {
    if (!(error instanceof PatternTooLarge)) throw error;
    throw new UnsupportedPattern(`is too large: it ${error.message}`);
  }
}

// the sets of classes and escapes, by flags and source: a pattern's `\d` costs its first use only
const sets = new Map<string, CharSet>();

/** The set of characters a class or an escape matches, as `RegExp` reads it with those flags. */
function setOf(source: string, unicode: boolean): CharSet {
  const key = `${unicode ? "u" : "-"}${source}`;
  let set = sets.get(key);
  if (!set) {
    const one = new RegExp(`^(?:${source})$`, unicode ? "u" : "");
    const ascii = new Uint32Array(4);
    for (let c = 0; c < 128; c++) if (one.test(String.fromCharCode(c))) ascii[c >> 5]! |= 1 << (c & 31);
    set = { ascii, wide: (c) => one.test(String.fromCodePoint(c)) };
    if (sets.size < 4096) sets.set(key, set);
  }
  return set;
}

const EMPTY: Node = { kind: "seq", items: [] };
const CONTROL: { readonly [c: string]: number } = { f: 12, n: 10, r: 13, t: 9, v: 11 };
const HEX2 = /^[\da-fA-F]{2}$/;
const HEX4 = /^[\da-fA-F]{4}$/;
const BRACES = /\{(\d+)(,(\d*))?\}/y;

/** Reads a pattern that `RegExp` accepted with these flags into a {@link Node} tree. */
class Parser {
  readonly #s: string;
  readonly #unicode: boolean;
  #i = 0;
  readonly #groups: number;
  readonly #named: boolean;

  constructor(source: string, unicode: boolean) {
    this.#s = source;
    this.#unicode = unicode;
    const { groups, named } = countGroups(source);
    this.#groups = groups;
    this.#named = named;
  }

  parse(): Node {
    const tree = this.#alt();
    // RegExp accepted the pattern, so the parse ends at its end
    return tree;
  }

  #alt(): Node {
    const options = [this.#seq()];
    while (this.#s[this.#i] === "|") {
      this.#i++;
      options.push(this.#seq());
    }
    return options.length === 1 ? options[0]! : { kind: "alt", options };
  }

  #seq(): Node {
    const items: Node[] = [];
    while (this.#i < this.#s.length && this.#s[this.#i] !== "|" && this.#s[this.#i] !== ")") {
      const atom = this.#atom();
      const q = this.#quantifier();
      items.push(q ? { kind: "repeat", body: atom, min: q[0], max: q[1] } : atom);
    }
    return items.length === 1 ? items[0]! : { kind: "seq", items };
  }

  /** `*`, `+`, `?`, `{n}`, `{n,}` or `{n,m}` (lazy or not: the same matches), or undefined. */
  #quantifier(): readonly [number, number] | undefined {
    const s = this.#s;
    const c = s[this.#i];
    let q: readonly [number, number] | undefined;
    if (c === "*") q = [0, Number.POSITIVE_INFINITY];
    else if (c === "+") q = [1, Number.POSITIVE_INFINITY];
    else if (c === "?") q = [0, 1];
    else if (c === "{") {
      // without the u flag, a "{" that is no quantifier is a plain character
      BRACES.lastIndex = this.#i;
      const m = BRACES.exec(s);
      if (!m) return undefined;
      const min = Number(m[1]);
      q = [min, m[2] === undefined ? min : m[3] ? Number(m[3]) : Number.POSITIVE_INFINITY];
      this.#i += m[0].length - 1;
    } else return undefined;
    this.#i++;
    if (s[this.#i] === "?") this.#i++;
    return q;
  }

  #atom(): Node {
    const s = this.#s;
    const c = s[this.#i]!;
    if (c === "(") return this.#group();
    if (c === "[") {
      const start = this.#i;
      let j = start + 1;
      if (s[j] === "^") j++;
      // a class ends at its first unescaped "]" ("[]" is the empty class, "[^]" any character)
      while (j < s.length && s[j] !== "]") j += s[j] === "\\" ? 2 : 1;
      this.#i = j + 1;
      return { kind: "set", set: setOf(s.slice(start, j + 1), this.#unicode) };
    }
    this.#i++;
    if (c === ".") return { kind: "any" };
    if (c === "^" || c === "$") return { kind: "assert", what: c };
    if (c === "\\") return this.#escape();
    return { kind: "char", code: this.#literal(c) };
  }

  /** The character just read: a code point with the u flag (a surrogate pair is one), else a code unit. */
  #literal(c: string): number {
    const code = c.charCodeAt(0);
    if (!this.#unicode || code < 0xd800 || code > 0xdbff) return code;
    const pair = this.#s.codePointAt(this.#i - 1)!;
    if (pair > 0xffff) this.#i++;
    return pair;
  }

  #group(): Node {
    const s = this.#s;
    this.#i++; // "("
    if (s[this.#i] === "?") {
      const kind = s.slice(this.#i + 1, this.#i + 3);
      const ahead = kind[0] === "=" || kind[0] === "!";
      if (ahead || kind === "<=" || kind === "<!") {
        this.#i += ahead ? 2 : 3;
        const body = this.#alt();
        this.#i++; // ")"
        return { kind: "look", ahead, negate: kind.includes("!"), body };
      }
      if (kind[0] === "<") this.#i = s.indexOf(">", this.#i) + 1;
      else if (kind[0] === ":") this.#i += 2;
      else
        throw new UnsupportedPattern(
          `uses a modifier group (?${/^[a-z-]*/.exec(s.slice(this.#i + 1))![0]}:…)`,
        );
    }
    const inner = this.#alt();
    this.#i++; // ")"
    return inner;
  }

  /** An escape, after its `\`. */
  #escape(): Node {
    const s = this.#s;
    const u = this.#unicode;
    const c = s[this.#i] ?? "";
    const start = this.#i - 1;
    this.#i++;
    if (c === "b" || c === "B") return { kind: "assert", what: c === "b" ? "\\b" : "\\B" };
    if ("dDwWsS".includes(c) || (u && (c === "p" || c === "P"))) {
      if (c === "p" || c === "P") this.#i = s.indexOf("}", this.#i) + 1;
      return { kind: "set", set: setOf(s.slice(start, this.#i), u) };
    }
    if (c >= "1" && c <= "9") {
      let end = this.#i;
      while (/\d/.test(s[end] ?? "")) end++;
      const n = Number(s.slice(this.#i - 1, end));
      if (u || n <= this.#groups) throw new UnsupportedPattern(`uses a backreference (\\${n})`);
      // without the u flag, a number past the groups is an octal escape, or "8" and "9" themselves
      if (c === "8" || c === "9") return { kind: "char", code: c.charCodeAt(0) };
      return { kind: "char", code: this.#octal(c) };
    }
    if (c === "0") return { kind: "char", code: u ? 0 : this.#octal(c) };
    if (c === "k" && (u || this.#named)) throw new UnsupportedPattern("uses a backreference (\\k<…>)");
    if (c === "c") {
      const letter = s[this.#i] ?? "";
      if (/[A-Za-z]/.test(letter)) {
        this.#i++;
        return { kind: "char", code: letter.charCodeAt(0) % 32 };
      }
      // without the u flag, "\c" not before a letter is a backslash, and the "c" comes next
      this.#i--;
      return { kind: "char", code: 92 };
    }
    if (c === "x" && HEX2.test(s.slice(this.#i, this.#i + 2))) {
      this.#i += 2;
      return { kind: "char", code: Number.parseInt(s.slice(this.#i - 2, this.#i), 16) };
    }
    if (c === "u") {
      const braced = u && s[this.#i] === "{" ? /^\{([\da-fA-F]+)\}/.exec(s.slice(this.#i)) : null;
      if (braced) {
        this.#i += braced[0].length;
        return { kind: "char", code: Number.parseInt(braced[1]!, 16) };
      }
      if (HEX4.test(s.slice(this.#i, this.#i + 4))) {
        let code = Number.parseInt(s.slice(this.#i, this.#i + 4), 16);
        this.#i += 4;
        // with the u flag, an escaped surrogate pair is one code point
        const low = s.slice(this.#i, this.#i + 6);
        if (u && code >= 0xd800 && code <= 0xdbff && /^\\u[dD][c-fC-F][\da-fA-F]{2}$/.test(low)) {
          code = (code - 0xd800) * 0x400 + (Number.parseInt(low.slice(2), 16) - 0xdc00) + 0x10000;
          this.#i += 6;
        }
        return { kind: "char", code };
      }
    }
    if (Object.hasOwn(CONTROL, c)) return { kind: "char", code: CONTROL[c]! };
    // an identity escape: the character itself
    return c === "" ? EMPTY : { kind: "char", code: this.#literal(c) };
  }

  /** A legacy octal escape (no u flag), its first digit `first` read: at most 0o377, three digits. */
  #octal(first: string): number {
    const s = this.#s;
    let value = Number(first);
    const most = first <= "3" ? 2 : 1;
    for (let k = 0; k < most && /[0-7]/.test(s[this.#i] ?? ""); k++) value = value * 8 + Number(s[this.#i++]);
    return value;
  }
}

/** The capturing groups of a pattern, and whether any is named (which makes `\k` a backreference). */
function countGroups(s: string): { groups: number; named: boolean } {
  let groups = 0;
  let named = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\\") i++;
    else if (c === "[") {
      for (i++; i < s.length && s[i] !== "]"; i++) if (s[i] === "\\") i++;
    } else if (c === "(") {
      if (s[i + 1] !== "?") groups++;
      else if (s[i + 2] === "<" && s[i + 3] !== "=" && s[i + 3] !== "!") {
        groups++;
        named = true;
      }
    }
  }
  return { groups, named };
}
