/**
 * A linear-time matcher for regular expressions: the pattern becomes a Thompson NFA (`regex-nfa.ts`),
 * and the input is read once (`regex-scan.ts`), carrying the set of states the text so far can be in.
 * Each character advances each state at most once, so a match costs at most a few steps per state and
 * character whatever the pattern and the input: nothing backtracks, so nothing can backtrack
 * catastrophically. A counted repeat of one character is one state however large its count. Where the
 * states depend on nothing but the text's start and end, a DFA made of those sets as they come
 * (`regex-dfa.ts`) reads a character in one lookup.
 *
 * A lookaround is answered by running its body: from the position asked, for the few positions a
 * match asks about (`^(?=.*\d)` asks one), else in one pass over the whole text that marks every
 * position where it holds (a lookahead's body backwards from the end, a lookbehind's forwards from the
 * start). This is exact for what `RegExp.prototype.test` answers (whether there is a match anywhere),
 * which is all JSON Schema asks; backreferences, which no automaton runs, are refused by the parser
 * (`json-schema-regex.ts`).
 *
 * The bounds, checked when a pattern compiles: {@link MAX_STATES} states, {@link MAX_COUNTED} positions
 * kept by counted repeats, {@link MAX_LOOKAROUNDS} lookarounds. So a test of a text of n characters
 * takes at most 16 × states × (n + 1) steps (a lookaround's body runs at most 5 times; the fuzz
 * campaign checks this bound, and has measured at most 3.3; a pattern without lookarounds stays within
 * 6 in the tests). The costliest accepted pattern known, `(?:a|aa){399}c`, takes about 3200 steps a
 * character: nearly 3 minutes on a 4 MiB text, which a schema's `maxLength` prevents (a string surely
 * past it never reaches the pattern). Memory: each automaton keeps 5 Int32Arrays of its states (20
 * bytes a state) beside its program's 3 (12 bytes), a lookaround's body is compiled twice (run from a
 * position, and over the whole text), each counted position takes 4 bytes, and each lookaround a bit
 * per character of the text while a test runs.
 */
import { Dfa } from "./regex-dfa.js";
import { countedOf, looksOf, markEnteredOnce, type Node, Program, statesOf } from "./regex-nfa.js";
import { Automaton, type LookAnswers } from "./regex-scan.js";

export type { CharSet, Node } from "./regex-nfa.js";

/**
 * Most states a pattern may compile to, lookarounds' bodies included: a bound on the work per input
 * character (a counted repeat of one character, `[\w.-]{1,255}`, is one state whatever its count).
 */
export const MAX_STATES = 2000;

/** Most positions the counted repeats of one character may keep at once, in all: the sum of their bounds. */
export const MAX_COUNTED = 100_000;

/** Most lookarounds in a pattern: each may keep a bit per position of the text during a test. */
export const MAX_LOOKAROUNDS = 32;

/** The pattern is over one of the bounds above; the message says which, by how much, and what to change. */
export class PatternTooLarge extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PatternTooLarge";
  }
}

const count = (n: number) => (Number.isFinite(n) ? String(n) : "unboundedly many");

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
class Looks implements LookAnswers {
  readonly #text: string;
  readonly #looks: readonly Look[];
  // per lookaround, once asked more than PROBES times: a bit per position, set where it holds
  readonly #every: (Uint32Array | undefined)[] = [];
  // per lookaround, until then: the positions asked, each as 2 × position + 1 where it holds
  readonly #asked: (number[] | undefined)[] = [];
  steps = 0;
  /** The bytes of the marks made for this text. */
  bytes = 0;

  constructor(text: string, looks: readonly Look[]) {
    this.#text = text;
    this.#looks = looks;
  }

  /** Whether lookaround `k`'s body matches at `pos` (from it for a lookahead, up to it for a lookbehind). */
  at(k: number, pos: number): boolean {
    const every = this.#every[k];
    if (every !== undefined) return ((every[pos >>> 5]! >>> (pos & 31)) & 1) === 1;
    const text = this.#text;
    let asked = this.#asked[k];
    if (asked === undefined) {
      asked = [];
      this.#asked[k] = asked;
    }
    for (const known of asked) if (known >>> 1 === pos) return (known & 1) === 1;
    const look = this.#looks[k]!;
    if (asked.length < PROBES) {
      const hit = look.probe.scan(text, this, pos, true);
      this.steps += look.probe.lastSteps;
      asked.push(pos * 2 + (hit ? 1 : 0));
      return hit;
    }
    const marks = new Uint32Array((text.length >>> 5) + 1);
    this.bytes += marks.byteLength;
    // a lookahead's body runs backwards from the end, and marks where a match of it begins
    look.every.scan(text, this, look.ahead ? text.length : 0, false, marks);
    this.steps += look.every.lastSteps;
    this.#every[k] = marks;
    return ((marks[pos >>> 5]! >>> (pos & 31)) & 1) === 1;
  }
}

const NO_LOOKS = new Looks("", []);

/** A compiled pattern: `test` answers as `RegExp.prototype.test` does, in time linear in the text. */
export class LinearRegex {
  /** The states of the pattern and of its lookarounds' bodies. */
  readonly size: number;
  /** The work the last `test` did: states visited, and characters checked against a state. */
  lastSteps = 0;
  /** The memory the last `test` took that grows with the text: the bytes of its lookarounds' marks. */
  lastBytes = 0;
  readonly #main: Automaton;
  readonly #dfa: Dfa | undefined;
  readonly #looks: Look[] = [];

  /** Compiles `node`; `unicode`: the text is read by code points (the `u` flag), else by code units. */
  constructor(node: Node, unicode: boolean) {
    markEnteredOnce(node);
    const looks = looksOf(node);
    if (looks > MAX_LOOKAROUNDS)
      throw new PatternTooLarge(
        `has ${looks} lookarounds, and the linear-time matcher takes at most ${MAX_LOOKAROUNDS} (each keeps a bit per character of the text)`,
      );
    const counted = countedOf(node);
    if (!(counted <= MAX_COUNTED))
      throw new PatternTooLarge(
        `counts up to ${count(counted)} characters in its {n,m} repeats, and the linear-time matcher keeps at most ${MAX_COUNTED} (lower the counts)`,
      );
    const states = statesOf(node) + 1;
    if (!(states <= MAX_STATES))
      throw new PatternTooLarge(
        `needs ${count(states)} states, and the linear-time matcher takes at most ${MAX_STATES} (lower the counts of repeated groups, or split the pattern)`,
      );
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
    this.#dfa = main.positional || main.counted ? undefined : new Dfa(main, unicode);
    this.size = states;
  }

  /** Whether `text` holds a match, anywhere (as `RegExp.prototype.test` with no flag but `u`). */
  test(text: string): boolean {
    const dfa = this.#dfa;
    if (dfa !== undefined) {
      const quick = dfa.test(text);
      if (quick !== undefined) {
        this.lastSteps = dfa.lastSteps;
        this.lastBytes = 0;
        return quick;
      }
    }
    const looks = this.#looks.length === 0 ? NO_LOOKS : new Looks(text, this.#looks);
    const found = this.#main.scan(text, looks, 0, false);
    this.lastSteps = this.#main.lastSteps + looks.steps;
    this.lastBytes = looks.bytes;
    return found;
  }
}
