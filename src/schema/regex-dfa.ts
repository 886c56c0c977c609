/**
 * The same automaton run faster: each set of NFA states a text can lead to becomes one DFA state, made
 * the first time a text leads there, with its transition for each character kept. A character then
 * costs one lookup instead of a step per live state. For programs whose states depend on the start and
 * the end of the text only (no word edge, no lookaround); a pattern whose sets of states keep growing
 * past {@link MAX_DFA_STATES} gives up on it, and the NFA runs it, as fast as ever (still linear).
 */
import { BOL, EOL, JMP, MATCH, type Program, SPLIT } from "./regex-nfa.js";

/** Most DFA states one pattern keeps (each holds up to 128 ASCII transitions). */
export const MAX_DFA_STATES = 200;

/** One DFA state: the NFA states a text leads to, after the character that led here. */
interface DState {
  /** The NFA states that took the character that led here (the start state 0 among them, unanchored). */
  readonly seed: Int32Array;
  /** The consuming states reached from them without a character, in the middle of the text. */
  readonly live: Int32Array;
  /** Whether a match ends here, in the middle of the text. */
  readonly match: boolean;
  /** Whether a match ends here when this is the end of the text (made when first asked). */
  end: boolean | undefined;
  /** The state each ASCII character leads to, once known. */
  ascii: (DState | undefined)[] | undefined;
  /** The same for characters above ASCII, a few of them. */
  wide: Map<number, DState> | undefined;
}

const NONE = new Int32Array(0);

/** A lazily built DFA over `program` (forward, not positional). */
export class Dfa {
  readonly #p: Program;
  readonly #unicode: boolean;
  readonly #states = new Map<string, DState>();
  readonly #start: DState;
  readonly #mark: Int32Array;
  readonly #stack: Int32Array;
  readonly #found: Int32Array;
  #gen = 0;
  #steps = 0;
  #full = false;
  /** The work the last `test` did: characters read, and NFA states visited to make new DFA states. */
  lastSteps = 0;

  constructor(program: Program, unicode: boolean) {
    this.#p = program;
    this.#unicode = unicode;
    this.#mark = new Int32Array(program.size);
    this.#stack = new Int32Array(program.size);
    this.#found = new Int32Array(program.size);
    this.#start = this.#state(Int32Array.of(0), true);
  }

  /** Whether `text` holds a match; undefined when the DFA grew too large (then run the NFA). */
  test(text: string): boolean | undefined {
    if (this.#full) return undefined;
    this.#steps = 0;
    const len = text.length;
    const unicode = this.#unicode;
    const anchored = this.#p.anchored;
    const start = this.#start;
    const first = this.#p.first;
    let d = start;
    let pos = 0;
    let found = d.match;
    while (!found && pos < len) {
      // nothing live but a match that may begin at each position: skip what cannot begin one
      if (d.seed.length === 1 && d.seed[0] === 0 && first && d !== start) {
        const from = pos;
        while (pos < len) {
          const c = text.charCodeAt(pos);
          if (c >= 128 || ((first[c >> 5]! >>> (c & 31)) & 1) === 1) break;
          pos++;
        }
        this.#steps += pos - from;
        if (pos === len) break;
      }
      let c = text.charCodeAt(pos++);
      if (unicode && c >= 0xd800 && c <= 0xdbff && pos < len) {
        const low = text.charCodeAt(pos);
        if (low >= 0xdc00 && low <= 0xdfff) {
          c = (c - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
          pos++;
        }
      }
      this.#steps++;
      const next = c < 128 ? d.ascii?.[c] : d.wide?.get(c);
      if (next !== undefined) d = next;
      else {
        const made = this.#next(d, c);
        if (made === undefined) return undefined;
        d = made;
      }
      found = d.match;
      if (anchored && d.live.length === 0) break;
    }
    // the end of the text: what the last states reach there ($ passes)
    if (!found && pos === len) {
      d.end ??= this.#closure(d.seed, d === start, true).match;
      found = d.end;
    }
    this.lastSteps = this.#steps;
    return found;
  }

  /** The state `d` leads to on `c`, made and kept; undefined (and no DFA from now on) when there are too many. */
  #next(d: DState, c: number): DState | undefined {
    const p = this.#p;
    const mark = this.#mark;
    const gen = ++this.#gen;
    const seed: number[] = [];
    for (const s of d.live) {
      this.#steps++;
      if (p.accepts(s, c) && mark[s + 1] !== gen) {
        mark[s + 1] = gen;
        seed.push(s + 1);
      }
    }
    if (!p.anchored && mark[0] !== gen) seed.push(0);
    const key = seed.sort((x, y) => x - y).join(",");
    let next = this.#states.get(key);
    if (next === undefined) {
      if (this.#states.size >= MAX_DFA_STATES) {
        this.#full = true;
        return undefined;
      }
      next = this.#state(Int32Array.from(seed), false);
      this.#states.set(key, next);
    }
    if (c < 128) {
      d.ascii ??= new Array(128);
      d.ascii[c] = next;
    } else {
      d.wide ??= new Map();
      if (d.wide.size < 64) d.wide.set(c, next);
    }
    return next;
  }

  #state(seed: Int32Array, atStart: boolean): DState {
    const { live, match } = this.#closure(seed, atStart, false);
    return { seed, live, match, end: undefined, ascii: undefined, wide: undefined };
  }

  /** What `seed` reaches without a character, at the start of the text or not, at its end or not. */
  #closure(seed: Int32Array, atStart: boolean, atEnd: boolean): { live: Int32Array; match: boolean } {
    const { op, a, b } = this.#p;
    const mark = this.#mark;
    const stack = this.#stack;
    const found = this.#found;
    const gen = ++this.#gen;
    let sp = 0;
    let live = 0;
    let match = false;
    for (const s of seed) {
      mark[s] = gen;
      stack[sp++] = s;
    }
    while (sp > 0) {
      const s = stack[--sp]!;
      this.#steps++;
      let to = -1;
      const o = op[s];
      if (o === JMP) to = a[s]!;
      else if (o === SPLIT) {
        const other = b[s]!;
        if (mark[other] !== gen) {
          mark[other] = gen;
          stack[sp++] = other;
        }
        to = a[s]!;
      } else if (o === BOL) to = atStart ? s + 1 : -1;
      else if (o === EOL) to = atEnd ? s + 1 : -1;
      else if (o === MATCH) match = true;
      else found[live++] = s;
      if (to >= 0 && mark[to] !== gen) {
        mark[to] = gen;
        stack[sp++] = to;
      }
    }
    return { live: live === 0 ? NONE : found.slice(0, live), match };
  }
}
