// Integer `Mcp-Param-*` headers are read in one pass: the value a header denotes exactly, as the body's
// number is compared with it, and no regex that could go quadratic in a client's long value.
import { afterEach, describe, expect, it } from "vitest";
import { checkHeaders, exactInteger } from "../../src/http/headers.js";
import type { HeaderParam } from "../../src/tools/headers.js";

const COUNT: HeaderParam = { path: ["count"], name: "Count", header: "mcp-param-count", type: "integer" };

/** The check of a tools/call whose `count` is `value` against `header` as its Mcp-Param-Count. */
function check(header: string, value: number) {
  const headers: { [k: string]: string } = {
    "mcp-method": "tools/call",
    "mcp-name": "t",
    "mcp-param-count": header,
  };
  return checkHeaders((n) => headers[n] ?? null, "tools/call", { name: "t", arguments: { count: value } }, [
    COUNT,
  ]);
}

/** The exact value of a JSON number's text, from its parts: what exactInteger must agree with. */
function reference(text: string): bigint | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  const digits = m[2]! + (m[3] ?? "");
  const exp = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
  const n = BigInt(digits);
  if (n === 0n) return 0n;
  if (exp >= 0) return exp > 500 ? undefined : (m[1] ? -n : n) * 10n ** BigInt(exp);
  const d = 10n ** BigInt(-exp);
  return n % d === 0n ? (m[1] ? -n : n) / d : undefined;
}

describe("exactInteger", () => {
  it("gives the integer a JSON number denotes, or undefined when a fraction is left", () => {
    const cases: [string, bigint | undefined][] = [
      ["0", 0n],
      ["-0", 0n],
      ["42", 42n],
      ["-42", -42n],
      ["42.0", 42n],
      ["4.2e1", 42n],
      ["4200e-2", 42n],
      ["0.00e5", 0n],
      ["41.99999999999999999", undefined],
      ["1e400", undefined],
      ["1e399", 10n ** 399n],
      ["10e-1", 1n],
      ["1e-1", undefined],
      ["1E+3", 1000n],
      ["9007199254740993", 9007199254740993n],
      [`1${"0".repeat(15_000)}1`, undefined],
      [`42.${"0".repeat(15_000)}`, 42n],
      [`0.${"0".repeat(15_000)}`, 0n],
      [`1${"0".repeat(15_000)}e-15000`, 1n],
    ];
    for (const [text, expected] of cases)
      expect([text.slice(0, 30), exactInteger(text)]).toEqual([text.slice(0, 30), expected]);
  });

  it("agrees with the value computed from the number's parts on 20,000 random numbers", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const digits = (n: number, lead = false) => {
      let s = lead ? String(1 + random(9)) : "";
      while (s.length < n) s += random(3) === 0 ? "0" : String(random(10));
      return s;
    };
    for (let i = 0; i < 20_000; i++) {
      let text = (random(2) ? "-" : "") + (random(4) === 0 ? "0" : digits(1 + random(30), true));
      if (random(2)) text += `.${digits(1 + random(30))}`;
      if (random(2)) text += `${random(2) ? "e" : "E"}${["", "+", "-"][random(3)]}${digits(1 + random(3))}`;
      const expected = reference(text);
      // past about 309 digits no double is that integer: the parser gives up there (see its bound)
      if (expected !== undefined && expected.toString().replace("-", "").length > 400) continue;
      expect([text, exactInteger(text)]).toEqual([text, expected]);
    }
  });
});

describe("a long integer header", () => {
  const exec = RegExp.prototype.exec;
  afterEach(() => {
    RegExp.prototype.exec = exec;
  });

  it("is matched only by regexes anchored at the start, over a 15 KB value: one start position, linear", () => {
    const seen: string[] = [];
    // every regex match (test, exec, replace, match, split) goes through exec once it is replaced
    RegExp.prototype.exec = function (this: RegExp, input: string) {
      if (String(input).length >= 1000) seen.push(this.source);
      return exec.call(this, input);
    };
    expect(check(`1${"0".repeat(15_000)}1`, 42)).toBe(
      "the Mcp-Param-Count header does not match arguments.count",
    );
    expect(check(`42.${"0".repeat(15_000)}`, 42)).toBeUndefined();
    expect(check(`4200${"0".repeat(15_000)}e-15002`, 42)).toBeUndefined();
    RegExp.prototype.exec = exec;
    expect(seen.length).toBeGreaterThan(0);
    for (const source of seen)
      expect(source.startsWith("^") && source.endsWith("$") ? "anchored" : source).toBe("anchored");
  });
});
