/**
 * A program of `regex-nfa.ts` run over a text as an NFA (forwards, or backwards for a lookaround's body):
 * the set of states the text so far can be in, each state advanced at most once per character; a
 * counted repeat of one character (a COUNT state) keeps the characters where its runs began instead of
 * a state per copy, so its cost per character does not grow with its count.
 */
import {
  ANY,
  BOL,
  CHAR,
  COUNT,
  EOL,
  isWord,
  JMP,
  LOOK,
  MATCH,
  NOT_WORD_EDGE,
  type Program,
  SET,
  SPLIT,
  WORD_EDGE,
} from "./regex-nfa.js";

/** What the lookarounds of a program answer for the text being read. */
export interface LookAnswers {
  /** Whether lookaround `k`'s body matches at `pos` (from it for a lookahead, up to it for a lookbehind). */
  at(k: number, pos: number): boolean;
}

/** A program run as an NFA, forwards (or backwards), with the marks of its lookarounds at hand. */
export class Automaton {
  readonly #p: Program;
  readonly #unicode: boolean;
  // reused by every pass: the states of this position and the next, marks that keep a state once per position
  readonly #now: Int32Array;
  readonly #next: Int32Array;
  readonly #mark: Int32Array;
  readonly #stack: Int32Array;
  // marks that keep a COUNT state once in the states of the next position
  readonly #held: Int32Array;
  // per COUNT state: a ring of the characters read when each of its runs began, oldest first
  readonly #runs: Int32Array[];
  readonly #head: Int32Array;
  readonly #size: Int32Array;
  #gen = 0;
  #steps = 0;
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
    this.#held = new Int32Array(n);
    const counts = program.countMax.length;
    this.#runs = program.countMax.map((max) => new Int32Array(Math.min(max + 1, 16)));
    this.#head = new Int32Array(counts);
    this.#size = new Int32Array(counts);
  }

  /** A run of COUNT `k` begins after `t` characters; an unbounded count keeps its oldest run only (it takes the most). */
  #begin(k: number, t: number): void {
    const max = this.#p.countMax[k]!;
    const n = this.#size[k]!;
    if (n > 0 && max === Number.POSITIVE_INFINITY) return;
    let runs = this.#runs[k]!;
    let h = this.#head[k]!;
    // the runs began at distinct characters at most max before this one (older ones ended when this
    // character was read): at most max of them, so a ring of max + 1 never overflows
    if (n === runs.length) {
      const grown = new Int32Array(Math.min(runs.length * 2, max + 1));
      for (let i = 0; i < n; i++) grown[i] = runs[(h + i) % runs.length]!;
      runs = grown;
      this.#runs[k] = runs;
      h = 0;
      this.#head[k] = 0;
    }
    runs[(h + n) % runs.length] = t;
    this.#size[k] = n + 1;
    this.#steps++;
  }

  /**
   * COUNT state `s` reads `c`, the `t`-th character: each run takes it or all end; runs past the count's
   * bound end. Bit 1: a run has taken enough to go on (leave the repeat); bit 2: one can take more.
   */
  #advance(s: number, c: number, t: number): number {
    const p = this.#p;
    const k = p.a[s]!;
    if (!p.accepts(s, c)) {
      this.#size[k] = 0;
      return 0;
    }
    const max = p.countMax[k]!;
    const runs = this.#runs[k]!;
    let h = this.#head[k]!;
    let n = this.#size[k]!;
    while (n > 0 && t - runs[h]! > max) {
      h = h + 1 === runs.length ? 0 : h + 1;
      n--;
      this.#steps++;
    }
    this.#head[k] = h;
    if (n === 0) {
      this.#size[k] = 0;
      return 0;
    }
    const enough = t - runs[h]! >= p.countMin[k]! ? 1 : 0;
    if (t - runs[(h + n - 1) % runs.length]! < max) {
      this.#size[k] = n;
      return enough | 2;
    }
    this.#size[k] = 0;
    return enough;
  }

  /**
   * Reads `text` once from `from`. Without `out`: whether there is a match (stopping at the first). With
   * `out`: sets bit `p` of `out` for every position `p` where a match ends (backward: begins), and goes on.
   * `once`: only a match that begins at `from`. `looks` answers the lookarounds.
   */
  scan(text: string, looks: LookAnswers, from: number, once: boolean, out?: Uint32Array): boolean {
    const p = this.#p;
    const { op, a, b } = p;
    const mark = this.#mark;
    const held = this.#held;
    if (p.counted) this.#size.fill(0);
    this.#steps = 0;
    // the characters read so far: how far each run of a COUNT has gone
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
    let t = 0;
    if (this.#gen > 0x3fffffff) {
      mark.fill(0);
      held.fill(0);
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
            if (out) out[pos >>> 5]! |= 1 << (pos & 31);
            break;
          case COUNT:
            this.#begin(a[s]!, t);
            if (p.countMin[a[s]!] === 0) to = s + 1;
            if (held[s] !== gen) {
              held[s] = gen;
              next[live++] = s;
            }
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
      t++;
      for (let i = 0; i < states; i++) {
        const s = now[i]!;
        steps++;
        if (op[s] === COUNT) {
          const went = this.#advance(s, c, t);
          if ((went & 2) !== 0) {
            held[s] = gen;
            next[live++] = s;
          }
          if ((went & 1) !== 0 && mark[s + 1] !== gen) {
            mark[s + 1] = gen;
            stack[sp++] = s + 1;
          }
        } else if (p.accepts(s, c) && mark[s + 1] !== gen) {
          mark[s + 1] = gen;
          stack[sp++] = s + 1;
        }
      }
      pos = back ? pos - width : pos + width;
      // a match may begin (backward: end) at any position, unless the pattern starts with ^; while
      // nothing else is live, the positions whose character the start cannot take are skipped
      if (!anchoredStart) {
        if (sp === 0 && live === 0 && first) {
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
    this.lastSteps = steps + this.#steps;
    return found;
  }
}
