/**
 * A linear-time matcher for regular expressions: the pattern becomes a Thompson NFA (`regex-nfa.ts`),
 * and the input is read once, carrying the set of states the text so far can be in. Each character
 * advances each state at most once, so a match costs at most (length + 1) × states steps whatever the
 * pattern and the input: nothing backtracks, so nothing can backtrack catastrophically. Where the
 * states depend on nothing but the text's start and end, a DFA made of those sets as they come
 * (`regex-dfa.ts`) reads a character in one lookup.
 *
 * A lookaround is answered by running its body: from the position asked, for the few positions a
 * match asks about (`^(?=.*\d)` asks one), else in one pass over the whole text that marks every
 * position where it holds (a lookahead's body backwards from the end, a lookbehind's forwards from the
 * start). This is exact for what `RegExp.prototype.test` answers (whether there is a match anywhere),
 * which is all JSON Schema asks; backreferences, which no automaton runs, are refused by the parser
 * (`json-schema-regex.ts`).
 */
import { Dfa } from "./regex-dfa.js";
import {
  ANY,
  BOL,
  CHAR,
  EOL,
  isWord,
  JMP,
  LOOK,
  MATCH,
  NOT_WORD_EDGE,
  type Node,
  Program,
  SET,
  SPLIT,
  statesOf,
  WORD_EDGE,
} from "./regex-nfa.js";

export type { CharSet, Node } from "./regex-nfa.js";

/** Most states a pattern may compile to, lookarounds included: a bound on the work per input character. */
export const MAX_STATES = 10_000;

/** The pattern needs more states than {@link MAX_STATES} (a large `{n,m}`, nested counts). */
export class TooManyStates extends Error {
  readonly states: number;
  constructor(states: number) {
    super(`needs ${Number.isFinite(states) ? states : "unboundedly many"} states`);
    this.name = "TooManyStates";
    this.states = states;
  }
}

/** A program run as an NFA, forwards (or backwards), with the marks of its lookarounds at hand. */
class Automaton {
  readonly #p: Program;
  readonly #unicode: boolean;
  // reused by every pass: the states of this position and the next, marks that keep a state once per position
  readonly #now: Int32Array;
  readonly #next: Int32Array;
  readonly #mark: Int32Array;
  readonly #stack: Int32Array;
  #gen = 0;
  /** The work the last scan did: states visited, and characters checked against a state. */
  lastSteps = 0;

  constructor(program: Program, unicode: boolean) {
    this.#p = program;
    this.#unicode = unicode;
    const n = program.size;
    this.#now = new Int32Array(n);
    this.#next = new Int32Array(n);
    this.#mark = new Int32Array(n);
    this.#stack = new Int32Array(n);
  }

  /**
   * Reads `text` once from `from`. Without `out`: whether there is a match (stopping at the first). With
   * `out`: marks `out[p]` for every position `p` where a match ends (backward: begins), and goes on.
   * `once`: only a match that begins at `from`. `looks` answers the lookarounds.
   */
  scan(text: string, looks: Looks, from: number, once: boolean, out?: Uint8Array): boolean {
    const p = this.#p;
    const { op, a, b } = p;
    const mark = this.#mark;
    const stack = this.#stack;
    const back = p.backward;
    const anchoredStart = p.anchored || once;
    const first = p.first;
    const len = text.length;
    let now = this.#now;
    let next = this.#next;
    let live = 0;
    let steps = 0;
    let found = false;
    if (this.#gen > 0x3fffffff) {
      mark.fill(0);
      this.#gen = 0;
    }
    let gen = this.#gen;
    let pos = from;
    let sp = 0;
    // the states to go on from at pos: the start, then those that took the character before pos
    stack[sp++] = 0;
    mark[0] = ++gen;
    for (;;) {
      // what the states on the stack reach at pos without a character; each state once per position
      while (sp > 0) {
        const s = stack[--sp]!;
        steps++;
        let to = -1;
        switch (op[s]) {
          case JMP:
            to = a[s]!;
            break;
          case SPLIT: {
            const other = b[s]!;
            if (mark[other] !== gen) {
              mark[other] = gen;
              stack[sp++] = other;
            }
            to = a[s]!;
            break;
          }
          case BOL:
            if (pos === 0) to = s + 1;
            break;
          case EOL:
            if (pos === len) to = s + 1;
            break;
          case LOOK:
            if (looks.at(a[s]!, pos) !== (b[s] === 1)) to = s + 1;
            break;
          case MATCH:
            found = true;
            if (out) out[pos] = 1;
            break;
          case CHAR:
          case SET:
          case ANY:
            next[live++] = s;
            break;
          case WORD_EDGE:
          case NOT_WORD_EDGE: {
            const before = pos > 0 && isWord(text.charCodeAt(pos - 1));
            const after = pos < len && isWord(text.charCodeAt(pos));
            if ((before !== after) === (op[s] === WORD_EDGE)) to = s + 1;
          }
        }
        if (to >= 0 && mark[to] !== gen) {
          mark[to] = gen;
          stack[sp++] = to;
        }
      }
      if ((found && !out) || (back ? pos === 0 : pos === len)) break;
      if (live === 0 && anchoredStart) break;
      const swap = now;
      now = next;
      next = swap;
      const states = live;
      live = 0;
      gen++;
      // the character after pos (forward) or before it (backward): with the u flag, a whole code point
      let c = text.charCodeAt(back ? pos - 1 : pos);
      let width = 1;
      if (this.#unicode && c >= 0xd800 && c <= 0xdfff) {
        const pair = back ? pos - 2 : pos + 1;
        const other = pair >= 0 && pair < len ? text.charCodeAt(pair) : 0;
        const high = back ? other : c;
        const low = back ? c : other;
        if (high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
          c = (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
          width = 2;
        }
      }
      for (let i = 0; i < states; i++) {
        const s = now[i]!;
        steps++;
        if (p.accepts(s, c) && mark[s + 1] !== gen) {
          mark[s + 1] = gen;
          stack[sp++] = s + 1;
        }
      }
      pos = back ? pos - width : pos + width;
      // a match may begin (backward: end) at any position, unless the pattern starts with ^; while
      // nothing else is live, the positions whose character the start cannot take are skipped
      if (!anchoredStart) {
        if (sp === 0 && first) {
          while (back ? pos > 0 : pos < len) {
            const c = text.charCodeAt(back ? pos - 1 : pos);
            if (c >= 128 || ((first[c >> 5]! >>> (c & 31)) & 1) === 1) break;
            pos += back ? -1 : 1;
          }
        }
        if (mark[0] !== gen) {
          mark[0] = gen;
          stack[sp++] = 0;
        }
      }
    }
    this.#gen = gen;
    this.lastSteps = steps;
    return found;
  }
}

/** How many times one test asks a lookaround at a position of its own before marking every position at once. */
const PROBES = 4;

/** A lookaround: its body run from the position asked (`probe`), or over the whole text (`every`). */
interface Look {
  readonly probe: Automaton;
  readonly every: Automaton;
  readonly ahead: boolean;
}

/**
 * The answers of a pattern's lookarounds for one text. A lookaround asked at a few positions runs its
 * body from each (a lookahead forwards, a lookbehind backwards, stopping at the first match); asked at
 * more than {@link PROBES}, it marks every position in one pass instead — linear either way.
 */
class Looks {
  readonly #text: string;
  readonly #looks: readonly Look[];
  readonly #every: (Uint8Array | undefined)[] = [];
  // per lookaround: 0 not asked yet, 1 a match, 2 none
  readonly #asked: (Uint8Array | undefined)[] = [];
  readonly #probes: number[] = [];
  steps = 0;

  constructor(text: string, looks: readonly Look[]) {
    this.#text = text;
    this.#looks = looks;
  }

  /** Whether lookaround `k`'s body matches at `pos` (from it for a lookahead, up to it for a lookbehind). */
  at(k: number, pos: number): boolean {
    const every = this.#every[k];
    if (every !== undefined) return every[pos] === 1;
    const text = this.#text;
    let asked = this.#asked[k];
    if (asked === undefined) {
      asked = new Uint8Array(text.length + 1);
      this.#asked[k] = asked;
    }
    if (asked[pos] !== 0) return asked[pos] === 1;
    const look = this.#looks[k]!;
    const probes = (this.#probes[k] ?? 0) + 1;
    this.#probes[k] = probes;
    if (probes <= PROBES) {
      const hit = look.probe.scan(text, this, pos, true);
      this.steps += look.probe.lastSteps;
      asked[pos] = hit ? 1 : 2;
      return hit;
    }
    const marks = new Uint8Array(text.length + 1);
    // a lookahead's body runs backwards from the end, and marks where a match of it begins
    look.every.scan(text, this, look.ahead ? text.length : 0, false, marks);
    this.steps += look.every.lastSteps;
    this.#every[k] = marks;
    return marks[pos] === 1;
  }
}

const NO_LOOKS = new Looks("", []);

/** A compiled pattern: `test` answers as `RegExp.prototype.test` does, in time linear in the text. */
export class LinearRegex {
  /** The states of the pattern and of its lookarounds' bodies. */
  readonly size: number;
  /** The work the last `test` did: states visited, and characters checked against a state. */
  lastSteps = 0;
  readonly #main: Automaton;
  readonly #dfa: Dfa | undefined;
  readonly #looks: Look[] = [];

  /** Compiles `node`; `unicode`: the text is read by code points (the `u` flag), else by code units. */
  constructor(node: Node, unicode: boolean) {
    const states = statesOf(node) + 1;
    if (!(states <= MAX_STATES)) throw new TooManyStates(states);
    const index = new Map<Node, number>();
    const lookIndex = (look: Node): number => {
      let i = index.get(look);
      if (i === undefined) {
        const { ahead, body } = look as Extract<Node, { kind: "look" }>;
        const probe = new Automaton(new Program(body, !ahead, lookIndex), unicode);
        const every = new Automaton(new Program(body, ahead, lookIndex), unicode);
        i = this.#looks.length;
        this.#looks.push({ probe, every, ahead });
        index.set(look, i);
      }
      return i;
    };
    const main = new Program(node, false, lookIndex);
    this.#main = new Automaton(main, unicode);
    this.#dfa = main.positional ? undefined : new Dfa(main, unicode);
    this.size = states;
  }

  /** Whether `text` holds a match, anywhere (as `RegExp.prototype.test` with no flag but `u`). */
  test(text: string): boolean {
    const dfa = this.#dfa;
    if (dfa !== undefined) {
      const quick = dfa.test(text);
      if (quick !== undefined) {
        this.lastSteps = dfa.lastSteps;
        return quick;
      }
    }
    const looks = this.#looks.length === 0 ? NO_LOOKS : new Looks(text, this.#looks);
    const found = this.#main.scan(text, looks, 0, false);
    this.lastSteps = this.#main.lastSteps + looks.steps;
    return found;
  }
}
