// The linear-time pattern matcher: it answers as RegExp.prototype.test does (a table of the syntax, and
// random patterns against RegExp itself), refuses by name what no automaton runs, and its work grows
// with the text only, however a pattern could backtrack.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePattern, linearMatcher, UnsupportedPattern } from "./json-schema-regex.js";

/** The RegExp a schema pattern is read as: with the u flag when it is valid so, else without. */
function native(source: string): RegExp {
  try {
    return new RegExp(source, "u");
  } catch {
    return new RegExp(source);
  }
}

const agrees = (source: string, texts: readonly string[]) => {
  const re = native(source);
  const mine = compilePattern(re);
  return texts.map((t) => [t, mine.test(t)]).filter(([t, got]) => got !== re.test(t as string));
};

/**
 * Whether RegExp's only match begins inside a surrogate pair. With the u flag the language reads the text
 * as code points, so no match can begin there; V8 still tries there (`/(?<!(?=a)|.)/u` finds one in
 * "a😀" at 2), and the matcher follows the language.
 */
const splitsPair = (re: RegExp, text: string) => {
  const at = re.exec(text)?.index;
  if (!re.unicode || at === undefined || at === 0) return false;
  const low = text.charCodeAt(at);
  const high = text.charCodeAt(at - 1);
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
};

describe("the linear-time matcher answers as RegExp does", () => {
  it.each([
    // literals, classes, the dot, anchors, alternation
    ["abc", ["abc", "xabcx", "ab", ""]],
    ["^a|b$", ["a", "xa", "b", "bx", "ab"]],
    ["^$", ["", "a", "\n"]],
    ["a.c", ["abc", "a\nc", "a\rc", "a\u2028c", "a😀c", "a\u{1F600}\u{1F600}c"]],
    ["[a-c]+", ["b", "d", "ABC"]],
    ["[^a-c]", ["a", "d", "😀"]],
    ["[]", ["", "a"]],
    ["[^]", ["", "\n"]],
    ["[\\w-.]+$", ["a-b.c", "a b"]],
    ["[\\d\\s]", ["1", " ", "\u00a0", "a"]],
    ["^\\w\\W\\d\\D\\s\\S$", ["a-1x b", "a-1x\tb", "aa1x b"]],
    // quantifiers, lazy ones, counted ones, braces that are not quantifiers
    ["^a*b+c?$", ["b", "aabbc", "c", "aacc"]],
    ["^a{2}b{1,3}c{2,}$", ["aabcc", "aabbbbcc", "abcc", "aabccc"]],
    ["^a{0}b{0,0}$", ["", "a"]],
    ["^a+?b*?c??$", ["ab", "a"]],
    ["a{,2}", ["a{,2}", "aa"]],
    ["x{1,2", ["x{1,2", "xx"]],
    ["^(?:ab|a)(?:bc|c)$", ["abc", "abbc", "ac"]],
    ["^(a|ab)(c|bcd)(d*)$", ["abcd", "abcdd", "ac"]],
    ["^(a*)*$", ["", "aaa", "aab"]],
    ["^(a?){3}a{3}$", ["aaa", "aaaaaa", "aa"]],
    // escapes: control, hex, unicode, surrogate pairs, octal and identity escapes without the u flag
    ["^\\t\\n\\v\\f\\r$", ["\t\n\v\f\r"]],
    ["^\\cA\\cz$", ["\x01\x1a"]],
    ["\\c1", ["\\c1", "c1"]],
    ["^\\x41\\u0042\\u{43}$", ["ABC"]],
    ["^\\uD83D\\uDE00$", ["😀", "\uD83D"]],
    ["^\\ud83d$", ["\uD83D", "😀"]],
    ["^[\\uD83D\\uDE00]$", ["😀", "\uD83D"]],
    ["^\\0$", ["\0", "0"]],
    ["^\\12\\18\\400\\8$", ["\n\x018\x2008", "x"]],
    ["^\\k$", ["k"]],
    ["^\\a\\e\\-$", ["ae-"]],
    ["^😀{2}$", ["😀😀", "😀"]],
    ["^\\p{Lu}\\P{L}$", ["A1", "a1", "ÀÀ"]],
    ["^\\p{Extended_Pictographic}+$", ["😀😀", "a"]],
    // word boundaries
    ["\\bfoo\\b", ["foo", "a foo b", "afoo", "foo_"]],
    ["\\Boo\\B", ["foo", "foob", "oo"]],
    // lookahead and lookbehind, nested, negated, at the edges
    ["^(?=.*\\d)(?=.*[a-z]).{8,}$", ["abcdefg1", "abcdefgh", "12345678", "a1"]],
    ["^(?!.*(.)x)", ["ab", "ax"]],
    ["(?<=\\$)\\d+", ["$12", "12", "€12"]],
    ["(?<!\\$)\\b\\d+", ["$12", "12", "a 12"]],
    ["^(?=a(?!b))", ["ac", "ab", "a"]],
    ["(?<=a(?<=ba))c", ["bac", "ac", "xac"]],
    ["^(?=(?:a|ab)c)", ["abc", "ac", "abd"]],
    ["(?=$)", ["", "abc"]],
    ["a(?=b)*c", ["ac", "abc"]],
    // counted repeats of one character past the copies the DFA reads: one counting state each
    ["^a{40}$", ["a".repeat(39), "a".repeat(40), "a".repeat(41), ""]],
    [
      "^[ab]{33,40}c",
      [`${"ab".repeat(16)}c`, `${"ab".repeat(17)}c`, `${"ab".repeat(20)}c`, `${"ab".repeat(20)}ac`],
    ],
    [
      "x(?:a|b|\\d){1,50}y",
      ["xy", "xa1by", `x${"1".repeat(50)}y`, `x${"1".repeat(51)}y`, `xx${"1".repeat(50)}y`],
    ],
    ["^😀{40}$", ["😀".repeat(40), "😀".repeat(39), "😀".repeat(41)]],
    ["\\ud83d{40}", ["😀".repeat(40), "\ud83d".repeat(40)]],
    ["^.{0,40}$", ["", "a".repeat(40), "a".repeat(41), `${"a".repeat(20)}\n`]],
    ["a{35,}b", [`${"a".repeat(34)}b`, `${"a".repeat(35)}b`, `${"a".repeat(90)}b`, `${"a".repeat(90)}`]],
    ["^(?:a{1,40}b){2}$", [`${"a".repeat(40)}b${"a".repeat(40)}b`, `${"a".repeat(41)}bab`, "abab", "ab"]],
    [
      "(?:[a-c]{30,34}-)+$",
      [`${"abc".repeat(11)}-`, `${"abc".repeat(12)}-`, `${"abc".repeat(10)}-${"abc".repeat(11)}-`],
    ],
    ["(?<=a{40})b", [`${"a".repeat(40)}b`, `${"a".repeat(39)}b`, `c${"a".repeat(39)}b`]],
    ["^(?=\\d{36}$)(?!0{36})", ["1".repeat(36), "0".repeat(36), "1".repeat(35)]],
    [
      "[\\w.-]{1,255}\\.pdf$",
      ["report.pdf", `${"a".repeat(255)}.pdf`, `${"a".repeat(300)}.pdf`, ".pdf", "a.pdf!"],
    ],
    ["^(?:){2000000000}a(?:^|$){7}$", ["a", ""]],
    // found by the random test below: the characters a match can begin with, a dot's and a class's
    ["(?<=\\s)(?:(?:a|\\b).)*[^a]", [" \n"]],
    [
      "^P(?:(\\d+W)|(?!.*W)(?=\\d|T\\d)(\\d+Y)?(\\d+M)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+([.,]\\d+)?S)?)?)$",
      ["P1W", "P1Y2M", "PT", "P1YT2H", "P1Y1W", "P"],
    ],
    [
      "^(?=[\\s\\S]*[\\p{Extended_Pictographic}\\p{Regional_Indicator}\\u20E3])[\\p{Extended_Pictographic}\\p{Emoji_Component}]+$",
      ["😀", "1", "1️⃣", ""],
    ],
  ] as const)("%s", (source, texts) => {
    expect(agrees(source, texts)).toEqual([]);
  });

  it("agrees with RegExp on random patterns and texts", () => {
    const atom = fc.constantFrom("a", "b", ".", "[ab]", "[^a]", "\\w", "\\s", "😀", "\\b", "^", "$", "-");
    const pattern: fc.Arbitrary<string> = fc.letrec<{ p: string }>((tie) => ({
      p: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        atom,
        fc.tuple(tie("p"), tie("p")).map(([x, y]) => `${x}${y}`),
        fc.tuple(tie("p"), tie("p")).map(([x, y]) => `(?:${x}|${y})`),
        fc
          .tuple(tie("p"), fc.constantFrom("*", "+", "?", "{2}", "{0,2}", "{1,}", "*?"))
          .map(([x, q]) => `(?:${x})${q}`),
        fc.tuple(fc.constantFrom("(?=", "(?!", "(?<=", "(?<!"), tie("p")).map(([l, x]) => `${l}${x})`),
      ),
    })).p;
    const text = fc.string({ unit: fc.constantFrom("a", "b", " ", "-", "😀", "\n"), maxLength: 8 });
    fc.assert(
      fc.property(pattern, fc.array(text, { maxLength: 8 }), (source, texts) => {
        const re = native(source);
        expect(
          agrees(
            source,
            texts.filter((t) => !splitsPair(re, t)),
          ),
        ).toEqual([]);
      }),
      { numRuns: 1500 },
    );
  });

  it("agrees with RegExp on random counted repeats past the copies, on texts long enough to count", () => {
    const one = fc.constantFrom("a", "b", ".", "[ab]", "[^a]", "\\w", "(?:a|😀)", "😀");
    const count = fc
      .tuple(fc.integer({ min: 0, max: 45 }), fc.integer({ min: 0, max: 45 }), fc.boolean())
      .map(([x, y, open]) => `{${Math.min(x, y)},${open ? "" : Math.max(x, y)}}`);
    const piece = fc.oneof(
      fc.tuple(one, count).map(([x, q]) => `${x}${q}`),
      fc.constantFrom("^", "$", "\\b", "a", "b", "(?=a)", "(?<!b)"),
    );
    const pattern = fc
      .array(
        fc.oneof(
          piece,
          fc.tuple(piece, piece).map(([x, y]) => `(?:${x}|${y})`),
        ),
        {
          minLength: 1,
          maxLength: 4,
        },
      )
      .map((pieces) => pieces.join(""));
    const run = fc
      .tuple(fc.constantFrom("a", "b", " ", "😀", "ab", "\n"), fc.integer({ min: 0, max: 50 }))
      .map(([unit, n]) => unit.repeat(n));
    const text = fc.array(run, { maxLength: 4 }).map((runs) => runs.join(""));
    fc.assert(
      fc.property(pattern, fc.array(text, { maxLength: 6 }), (source, texts) => {
        const re = native(source);
        expect(
          agrees(
            source,
            texts.filter((t) => !splitsPair(re, t)),
          ),
        ).toEqual([]);
      }),
      { numRuns: 1500 },
    );
  });
});

describe("what no automaton runs", () => {
  it.each([
    ["(a)\\1", "uses a backreference (\\1)"],
    ["(?<q>a)\\k<q>", "uses a backreference (\\k<…>)"],
    ["(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10", "uses a backreference (\\10)"],
  ])("refuses %s: it %s", (source, why) => {
    expect(() => compilePattern(native(source))).toThrow(new UnsupportedPattern(why));
  });

  it("refuses a pattern of more than 2000 states, and says how many", () => {
    expect(() => compilePattern(native("^(?:ab){1000}$"))).toThrow(
      new UnsupportedPattern(
        "is too large: it needs 2003 states, and the linear-time matcher takes at most 2000 (lower the counts of repeated groups, or split the pattern)",
      ),
    );
    expect(() => compilePattern(native("(?:a|bc){99999999999999999999}"))).toThrow(
      "needs 500000000000000000000 states",
    );
    // a counted repeat of one character is one state, whatever its count
    expect(linearMatcher(native("^(?:[a-z]{1,100}\\.){1,200}$")).size).toBe(602);
    expect(linearMatcher(native("a{9990}b")).size).toBe(3);
    expect(compilePattern(native("^[a-z\\d](?:[a-z\\d-]{0,38})$")).test("grace-h")).toBe(true);
  });

  it("refuses counted repeats that would keep more than 100000 positions in all", () => {
    expect(() => compilePattern(native("a{2000000000}"))).toThrow(
      new UnsupportedPattern(
        "is too large: it counts up to 2000000001 characters in its {n,m} repeats, and the linear-time matcher keeps at most 100000 (lower the counts)",
      ),
    );
    expect(() => compilePattern(native("(?:a{1000}b){100}"))).toThrow("counts up to 100100 characters");
    expect(compilePattern(native("(?:a{999}b){1,100}")).test(`${"a".repeat(999)}b`)).toBe(true);
    // an unbounded count keeps one position: the oldest run takes the most
    expect(compilePattern(native("a{99999999999999999999,}")).test("a")).toBe(false);
  });

  it("refuses more than 32 lookarounds", () => {
    expect(() => compilePattern(native("(?=a)".repeat(33)))).toThrow(
      new UnsupportedPattern(
        "is too large: it has 33 lookarounds, and the linear-time matcher takes at most 32 (each keeps a bit per character of the text)",
      ),
    );
    expect(compilePattern(native(`${"(?=\\w*a)".repeat(32)}b`)).test("xba")).toBe(true);
  });

  it("compiles a repeat of nothing to nothing, whatever its count (it used to hang registration)", () => {
    const m = linearMatcher(native("(?:){2000000000}(?:^){2000000000}(?:(?=a)|$){0,2000000000}a"));
    expect(m.size).toBe(3);
    expect([m.test("a"), m.test("ba"), m.test("")]).toEqual([true, false, false]);
  });
});

describe("the DFA", () => {
  it("gives way to the NFA when a pattern's sets of states keep growing, and answers the same", () => {
    // the 12th character from the end is an a: every text makes new sets of states
    const re = native("a[ab]{12}$");
    const m = linearMatcher(re);
    const texts = Array.from({ length: 300 }, (_, i) =>
      (i * 2654435761).toString(2).replaceAll("0", "b").replaceAll("1", "a"),
    );
    for (const t of texts) expect([t, m.test(t)]).toEqual([t, re.test(t)]);
  });
});

describe("the work of a match", () => {
  it("is linear on ^(\\w+\\s?)*$, which backtracks exponentially as a RegExp", () => {
    const m = linearMatcher(native("^(\\w+\\s?)*$"));
    // 29 word characters and a character that fails at the end: 2^29 ways to split them for a RegExp
    const text = `${"a".repeat(29)}!`;
    expect(m.test(text)).toBe(false);
    expect(m.lastSteps).toBeLessThanOrEqual((text.length + 1) * m.size * 2);
    expect(m.lastSteps).toBeLessThan(1000);
    expect(m.test("hello world foo")).toBe(true);
  });

  it.each([
    ["^(a+)+$", "a", "!"],
    ["^(a|aa)*$", "a", "b"],
    ["^(a|a?)+$", "a", "b"],
    ["(.*a){12}", "a", ""],
    ["^(\\d+|\\w)*$", "1", "-"],
    ["^\\s*(.*?)\\s*$", " ", "\n"],
    ["^(?=(x+x+)+y)", "x", ""],
    [
      "^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
      "a",
      "!",
    ],
    ["(\\w+\\d+)+c", "1", "!"],
    ["^(([a-z])+.)+[A-Z]([a-z])+$", "a", "!"],
    ["(?=a*b)a", "a", "c"],
    ["(?<=a*)b(?!a*c)", "a", "b"],
  ])("grows with the text only: %s on %s… then %s", (source, unit, tail) => {
    const m = linearMatcher(native(source));
    const steps = (n: number) => {
      m.test(unit.repeat(n) + tail);
      return m.lastSteps;
    };
    const [small, large] = [steps(1000), steps(2000)];
    // a lookaround runs its body at most 5 times (4 positions asked, then every position at once)
    expect(small).toBeLessThanOrEqual(1001 * m.size * 6);
    expect(large / small).toBeLessThan(2.2);
  });

  // counted repeats unanchored on the left: a state per copy made each character cost the count
  // (`[\w.-]{1,255}\.pdf$` took 760 steps a character, 3.4 s on 256 KiB), now a few steps
  it.each([
    ["[\\w.-]{1,255}\\.pdf$", "a", "!"],
    ["[\\w.-]{1,255}\\.pdf$", "a.pdf", "!"],
    ["a{9990}b", "a", ""],
    ["(?:[a-z]{1,63}\\.){1,8}[a-z]{2,63}$", "abc.", "!"],
    ["(?:\\d{1,100}\\s){3}x", "1 ", "x"],
    ["(?<=\\w{1,255})\\.pdf(?=\\s{1,40}$)", "a", ".pdf "],
    [`${"(?=\\w*a)".repeat(32)}b`, "b", ""],
  ])(
    "costs a few steps a state and character: %s on %s… then %s, 256 KiB and 512 KiB",
    (source, unit, tail) => {
      const m = linearMatcher(native(source));
      const steps = (length: number) => {
        m.test(unit.repeat(Math.ceil(length / unit.length)) + tail);
        return m.lastSteps;
      };
      const [small, large] = [steps(256 * 1024), steps(512 * 1024)];
      expect(small).toBeLessThanOrEqual(6 * m.size * (256 * 1024 + 10));
      expect(large / small).toBeGreaterThan(1.8);
      expect(large / small).toBeLessThan(2.2);
    },
  );

  it("keeps a bit per lookaround and character: 32 lookarounds on 256 KiB, 1 MiB (3000 took 330 MiB)", () => {
    const m = linearMatcher(native(`${"(?=\\w*a)".repeat(32)}b\\d`));
    const text = "ab".repeat(128 * 1024);
    expect(m.test(text)).toBe(false);
    // each lookaround holds, and is asked, at every b: past 4 positions, it marks them all in one pass
    expect(m.lastBytes).toBe(32 * ((text.length >>> 5) + 1) * 4);
    expect(m.lastBytes).toBeLessThanOrEqual(32 * (text.length / 8 + 4));
  });

  it("reads [\\w.-]{1,255}\\.pdf$ in a few steps a character, whatever the count", () => {
    const text = "a".repeat(256 * 1024);
    const steps = (count: number) => {
      const m = linearMatcher(native(`[\\w.-]{1,${count}}\\.pdf$`));
      expect(m.test(text)).toBe(false);
      return m.lastSteps;
    };
    expect(steps(255)).toBeLessThanOrEqual(7 * text.length);
    expect(steps(60000)).toBeLessThanOrEqual(7 * text.length);
  });
});
