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
});

describe("what no automaton runs", () => {
  it.each([
    ["(a)\\1", "uses a backreference (\\1)"],
    ["(?<q>a)\\k<q>", "uses a backreference (\\k<…>)"],
    ["(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10", "uses a backreference (\\10)"],
  ])("refuses %s: it %s", (source, why) => {
    expect(() => compilePattern(native(source))).toThrow(new UnsupportedPattern(why));
  });

  it("refuses a pattern that would need more than 10000 states, and says how many", () => {
    expect(() => compilePattern(native("^(?:[a-z]{1,100}\\.){1,200}$"))).toThrow(
      "repeats too much: it needs 40202 states, and the linear-time matcher takes at most 10000 (lower the {n,m} counts)",
    );
    expect(() => compilePattern(native("a{99999999999999999999}"))).toThrow(
      "needs 100000000000000000000 states",
    );
    expect(compilePattern(native("^[a-z\\d](?:[a-z\\d-]{0,38})$")).test("grace-h")).toBe(true);
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
});
