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
/**
 * A counted repeat of one character (`[\w.-]{1,255}`, `a{9990}`) as one state that keeps, instead of a
 * state per copy, the positions where a run of it began: a character moves them all at once.
 */
export const COUNT = 11;

/**
 * A counted repeat of one character is unrolled into copies up to this many states (where the DFA reads
 * it in a lookup a character); past it, it is one {@link COUNT} state, whatever the count.
 */
const UNROLL = 32;

const ASSERTS = { "^": BOL, $: EOL, "\\b": WORD_EDGE, "\\B": NOT_WORD_EDGE } as const;

/** The states of `body{min,max}` with `body` copied out: `body` states each copy, and a split each optional one. */
const unrolled = (body: number, min: number, max: number): number =>
  min * body + (max === Number.POSITIVE_INFINITY ? body + 2 : (max - min) * (body + 1));

/** Whether `node` never takes a character (assertions, lookarounds, empty groups): repeating it changes nothing. */
function zeroWidth(node: Node): boolean {
  if (node.kind === "seq") return node.items.every(zeroWidth);
  if (node.kind === "alt") return node.options.every(zeroWidth);
  if (node.kind === "repeat") return node.max === 0 || zeroWidth(node.body);
  return node.kind === "assert" || node.kind === "look";
}

/** The one character `node` takes, as a set, when it is one: a character, a class, the dot, or a choice of them. */
function oneChar(node: Node): CharSet | undefined {
  if (node.kind === "set") return node.set;
  if (node.kind === "char") {
    const ascii = new Uint32Array(4);
    const code = node.code;
    if (code < 128) ascii[code >> 5] = 1 << (code & 31);
    return { ascii, wide: (c) => c === code };
  }
  if (node.kind === "any") return DOT;
  if (node.kind === "seq") return node.items.length === 1 ? oneChar(node.items[0]!) : undefined;
  if (node.kind !== "alt") return undefined;
  const sets = node.options.map(oneChar);
  if (!sets.every((set) => set !== undefined)) return undefined;
  const ascii = new Uint32Array(4);
  for (const set of sets) for (let w = 0; w < 4; w++) ascii[w]! |= set.ascii[w]!;
  return { ascii, wide: (c) => sets.some((set) => set.wide(c)) };
}

const notLineEnd = (c: number) => c !== 10 && c !== 13 && c !== 0x2028 && c !== 0x2029;
/** The dot as a set: every character but the line terminators. */
const DOT: CharSet = { ascii: Uint32Array.of(~((1 << 10) | (1 << 13)), -1, -1, -1), wide: notLineEnd };

/** The characters every match of `node` takes, when that is one number. */
function fixedWidth(node: Node): number | undefined {
  if (node.kind === "char" || node.kind === "set" || node.kind === "any") return 1;
  if (node.kind === "assert" || node.kind === "look") return 0;
  if (node.kind === "repeat") {
    const body = fixedWidth(node.body);
    return body !== undefined && node.min === node.max ? body * node.min : undefined;
  }
  const widths = (node.kind === "seq" ? node.items : node.options).map(fixedWidth);
  if (widths.some((w) => w === undefined)) return undefined;
  if (node.kind === "seq") return widths.reduce((n: number, w) => n + w!, 0);
  return widths.every((w) => w === widths[0]) ? (widths[0] ?? 0) : undefined;
}

/**
 * The repeats of a pattern that a match can enter at one position of the text only: those after a
 * leading `^` and nothing of varying width (`^[a-z\d](?:[a-z\d-]{0,38})$`). One run of their copies is
 * live at a time, whatever the count, so they stay copied out (and the DFA reads them).
 */
const enteredOnce = new WeakSet<Node>();

/** Marks the repeats of `root` (a pattern, read forwards) that are entered at one position only. */
export function markEnteredOnce(root: Node): void {
  const items = root.kind === "seq" ? root.items : [root];
  if (items[0]?.kind !== "assert" || items[0].what !== "^") return;
  for (const item of items) {
    if (item.kind === "repeat") enteredOnce.add(item);
    if (fixedWidth(item) === undefined) return;
  }
}

/** A repeat entered at one position only is copied out up to this many states. */
const UNROLL_ONCE = 256;

/** How a repeat compiles: to nothing more than its body (zero-width), to one {@link COUNT} state, or copied out. */
function repeatShape(node: Extract<Node, { kind: "repeat" }>): "once" | "count" | "copies" {
  if (zeroWidth(node.body)) return "once";
  if (oneChar(node.body) === undefined) return "copies";
  const copies = unrolled(1, node.min, node.max);
  return copies > (enteredOnce.has(node) ? UNROLL_ONCE : UNROLL) ? "count" : "copies";
}

/** The states `node` compiles to, its lookarounds' bodies included (Infinity past what a number says). */
export function statesOf(node: Node): number {
  switch (node.kind) {
    case "seq":
      return node.items.reduce((n, item) => n + statesOf(item), 0);
    case "alt":
      return node.options.reduce((n, o) => n + statesOf(o), 0) + 2 * (node.options.length - 1);
    case "repeat": {
      const shape = repeatShape(node);
      // a zero-width body holds at a position or not: once is as good as many, and none if it may be skipped
      if (shape === "once") return node.min > 0 ? statesOf(node.body) : 0;
      if (shape === "count") return 1;
      return unrolled(statesOf(node.body), node.min, node.max);
    }
    case "look":
      return 2 + statesOf(node.body);
    default:
      return 1;
  }
}

/**
 * The positions the {@link COUNT} states of `node` may keep at once, lookarounds' bodies included: a
 * count's bound plus one each (one for an unbounded count, whose first run is all that matters).
 */
export function countedOf(node: Node): number {
  switch (node.kind) {
    case "seq":
      return node.items.reduce((n, item) => n + countedOf(item), 0);
    case "alt":
      return node.options.reduce((n, o) => n + countedOf(o), 0);
    case "repeat": {
      const shape = repeatShape(node);
      if (shape === "once") return node.min > 0 ? countedOf(node.body) : 0;
      if (shape === "count") return node.max === Number.POSITIVE_INFINITY ? 1 : node.max + 1;
      const body = countedOf(node.body);
      return body === 0 ? 0 : body * (node.max === Number.POSITIVE_INFINITY ? node.min + 1 : node.max);
    }
    case "look":
      return countedOf(node.body);
    default:
      return 0;
  }
}

/** The distinct lookarounds in `node`, nested ones included. */
export function looksOf(node: Node, seen = new Set<Node>()): number {
  if (node.kind === "look") {
    seen.add(node);
    looksOf(node.body, seen);
  } else if (node.kind === "seq") for (const item of node.items) looksOf(item, seen);
  else if (node.kind === "alt") for (const option of node.options) looksOf(option, seen);
  else if (node.kind === "repeat") looksOf(node.body, seen);
  return seen.size;
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
  /** For each {@link COUNT} state (its `a` operand): the fewest and most characters it takes (Infinity: no most). */
  readonly countMin: number[] = [];
  readonly countMax: number[] = [];
  /** Whether it has a {@link COUNT} state, whose positions no set of states can stand for (no DFA then). */
  readonly counted: boolean;
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
          const shape = repeatShape(node);
          if (shape === "once") {
            if (node.min > 0) build(node.body);
            return;
          }
          if (shape === "count") {
            this.sets.push(oneChar(node.body)!);
            this.countMin.push(node.min);
            this.countMax.push(node.max);
            emit(COUNT, this.countMin.length - 1, this.sets.length - 1);
            return;
          }
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
    this.counted = this.countMin.length > 0;
    this.first = this.#firstChars();
  }

  /** Whether consuming state `s` takes character `c`. */
  accepts(s: number, c: number): boolean {
    const o = this.op[s];
    if (o === CHAR) return this.a[s] === c;
    if (o === ANY) return notLineEnd(c);
    const set = this.sets[o === COUNT ? this.b[s]! : this.a[s]!]!;
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
      } else if (o === SET || o === COUNT) {
        const set = this.sets[o === COUNT ? this.b[s]! : this.a[s]!]!;
        for (let w = 0; w < 4; w++) first[w]! |= set.ascii[w]!;
        // a count that may take nothing leads on at once
        if (o === COUNT && this.countMin[this.a[s]!] === 0) todo.push(s + 1);
      } else if (o === JMP) todo.push(this.a[s]!);
      else if (o === SPLIT) todo.push(this.a[s]!, this.b[s]!);
      else todo.push(s + 1);
    }
    return first;
  }
}
