/**
 * A regular expression as a Thompson NFA: the syntax tree the parser makes (`json-schema-regex.ts`), and
 * the program of states it compiles to, which `linear-regex.ts` and `regex-dfa.ts` run.
 */

/** A set of characters: a bit per ASCII character, and a test for the rest. */
export interface CharSet {
  /** Four 32-bit words: bit `c` for the ASCII character `c`. */
  readonly ascii: Uint32Array;
  /** Whether a character above ASCII (a code point, or a code unit without the `u` flag) is in the set. */
  wide(c: number): boolean;
}

/** The syntax tree. */
export type Node =
  | { readonly kind: "char"; readonly code: number }
  | { readonly kind: "set"; readonly set: CharSet }
  | { readonly kind: "any" }
  | { readonly kind: "assert"; readonly what: "^" | "$" | "\\b" | "\\B" }
  | { readonly kind: "look"; readonly ahead: boolean; readonly negate: boolean; readonly body: Node }
  | { readonly kind: "seq"; readonly items: readonly Node[] }
  | { readonly kind: "alt"; readonly options: readonly Node[] }
  | { readonly kind: "repeat"; readonly body: Node; readonly min: number; readonly max: number };

// three instructions consume a character; the others move between states without one
export const CHAR = 0;
export const SET = 1;
export const ANY = 2;
export const SPLIT = 3;
export const JMP = 4;
export const BOL = 5;
export const EOL = 6;
export const WORD_EDGE = 7;
export const NOT_WORD_EDGE = 8;
export const LOOK = 9;
export const MATCH = 10;

const ASSERTS = { "^": BOL, $: EOL, "\\b": WORD_EDGE, "\\B": NOT_WORD_EDGE } as const;

/** The states `node` compiles to, its lookarounds' bodies included (Infinity past what a number says). */
export function statesOf(node: Node): number {
  switch (node.kind) {
    case "seq":
      return node.items.reduce((n, item) => n + statesOf(item), 0);
    case "alt":
      return node.options.reduce((n, o) => n + statesOf(o), 0) + 2 * (node.options.length - 1);
    case "repeat": {
      const body = statesOf(node.body);
      const optional = node.max === Number.POSITIVE_INFINITY ? body + 2 : (node.max - node.min) * (body + 1);
      return node.min * body + optional;
    }
    case "look":
      return 2 + statesOf(node.body);
    default:
      return 1;
  }
}

/** `node` read from right to left: what a lookahead's body is, for its backward pass. */
function reversed(node: Node): Node {
  if (node.kind === "seq") return { kind: "seq", items: node.items.map(reversed).reverse() };
  if (node.kind === "alt") return { kind: "alt", options: node.options.map(reversed) };
  if (node.kind === "repeat") return { ...node, body: reversed(node.body) };
  return node;
}

/** Whether every match of `node` must begin at the start of the text. */
function anchored(node: Node): boolean {
  if (node.kind === "assert") return node.what === "^";
  if (node.kind === "seq") return node.items.length > 0 && anchored(node.items[0]!);
  if (node.kind === "alt") return node.options.every(anchored);
  return node.kind === "repeat" && node.min > 0 && anchored(node.body);
}

/** Whether `c` is a character of `\w` (without the `i` flag, ASCII only). */
export const isWord = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/** The states of one automaton: instruction `op[s]` with operands `a[s]` and `b[s]`; state 0 starts. */
export class Program {
  readonly op: Int32Array;
  readonly a: Int32Array;
  readonly b: Int32Array;
  readonly sets: CharSet[] = [];
  /** The number of states. */
  readonly size: number;
  /** Whether it is run from the end of the text to its start (a lookahead's body). */
  readonly backward: boolean;
  /** Whether every match begins at the start of the text (forward only). */
  readonly anchored: boolean;
  /** Whether a state depends on more than the start and end of the text: a word edge, a lookaround. */
  readonly positional: boolean;
  /**
   * The ASCII characters a match can begin with (backward: end with), when it cannot be empty: a run
   * may skip the others while nothing else is live. Undefined when it can be empty.
   */
  readonly first: Uint32Array | undefined;

  /** Compiles `node`; each lookaround in it becomes a LOOK of the marks `lookIndex` gives it. */
  constructor(node: Node, backward: boolean, lookIndex: (look: Node) => number) {
    const states = statesOf(node) + 1;
    this.op = new Int32Array(states);
    this.a = new Int32Array(states);
    this.b = new Int32Array(states);
    let n = 0;
    let positional = false;
    const emit = (op: number, a = 0, b = 0) => {
      this.op[n] = op;
      this.a[n] = a;
      this.b[n] = b;
      return n++;
    };
    const build = (node: Node): void => {
      switch (node.kind) {
        case "char":
          emit(CHAR, node.code);
          return;
        case "set":
          this.sets.push(node.set);
          emit(SET, this.sets.length - 1);
          return;
        case "any":
          emit(ANY);
          return;
        case "assert":
          if (node.what === "\\b" || node.what === "\\B") positional = true;
          emit(ASSERTS[node.what]);
          return;
        case "look":
          positional = true;
          emit(LOOK, lookIndex(node), node.negate ? 1 : 0);
          return;
        case "seq":
          for (const item of node.items) build(item);
          return;
        case "alt": {
          // SPLIT to this option and to the rest; each option but the last jumps past the others
          const jumps: number[] = [];
          node.options.forEach((option, i) => {
            const last = i === node.options.length - 1;
            const split = last ? -1 : emit(SPLIT, n + 1);
            build(option);
            if (!last) {
              jumps.push(emit(JMP));
              this.b[split] = n;
            }
          });
          for (const j of jumps) this.a[j] = n;
          return;
        }
        case "repeat": {
          for (let i = 0; i < node.min; i++) build(node.body);
          if (node.max === Number.POSITIVE_INFINITY) {
            const split = emit(SPLIT, n + 1);
            build(node.body);
            emit(JMP, split);
            this.b[split] = n;
            return;
          }
          // each optional copy may be skipped to the end of them all
          const splits: number[] = [];
          for (let i = node.min; i < node.max; i++) {
            splits.push(emit(SPLIT, n + 1));
            build(node.body);
          }
          for (const s of splits) this.b[s] = n;
        }
      }
    };
    build(backward ? reversed(node) : node);
    emit(MATCH);
    this.size = n;
    this.backward = backward;
    this.anchored = !backward && anchored(node);
    this.positional = positional;
    this.first = this.#firstChars();
  }

  /** Whether consuming state `s` takes character `c`. */
  accepts(s: number, c: number): boolean {
    const o = this.op[s];
    if (o === CHAR) return this.a[s] === c;
    if (o === ANY) return c !== 10 && c !== 13 && c !== 0x2028 && c !== 0x2029;
    const set = this.sets[this.a[s]!]!;
    return c < 128 ? ((set.ascii[c >> 5]! >>> (c & 31)) & 1) === 1 : set.wide(c);
  }

  /** See {@link first}: what the states the start reaches without a character take, assertions passed. */
  #firstChars(): Uint32Array | undefined {
    const first = new Uint32Array(4);
    const seen = new Set<number>();
    const todo = [0];
    while (todo.length > 0) {
      const s = todo.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      const o = this.op[s]!;
      if (o === MATCH) return undefined;
      if (o === ANY) {
        // every character but the line terminators (of ASCII: \n and \r), added to what others take
        first[0]! |= ~((1 << 10) | (1 << 13));
        for (let w = 1; w < 4; w++) first[w] = 0xffffffff;
      } else if (o === CHAR) {
        const c = this.a[s]!;
        // a character above ASCII stops the skip anyway
        if (c < 128) first[c >> 5]! |= 1 << (c & 31);
      } else if (o === SET) {
        const set = this.sets[this.a[s]!]!;
        for (let w = 0; w < 4; w++) first[w]! |= set.ascii[w]!;
      } else if (o === JMP) todo.push(this.a[s]!);
      else if (o === SPLIT) todo.push(this.a[s]!, this.b[s]!);
      else todo.push(s + 1);
    }
    return first;
  }
}
