// JSON Schema patterns: picomcp's linear-time matcher next to RegExp, on the worst case of a pattern that
// backtracks (`^(\w+\s?)*$` on a word that fails at its end) and on patterns tools use every day. Run
// after `npm run build`: `node bench/patterns.js`, or `benchPatterns()` from bench/micro.js.
import { pathToFileURL } from "node:url";
import { compilePattern, linearMatcher } from "../build/lib/schema/json-schema-regex.js";

const WORST = "^(\\w+\\s?)*$";
const worstText = (n) => `${"a".repeat(n - 1)}!`;

/** Median µs of one `fn()` call over `rounds`, each of `iterations` calls. */
function micros(fn, iterations, rounds = 7) {
  const samples = [];
  for (let round = -1; round < rounds; round++) {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) fn();
    if (round >= 0) samples.push(((performance.now() - start) * 1000) / iterations);
  }
  return samples.sort((a, b) => a - b)[samples.length >> 1];
}

/**
 * Rows of the worst case: for each length, the matcher's µs and steps, and RegExp's µs where it ends
 * within the bench (it doubles with each character, so it stops at 22; at 30 it takes seconds).
 */
export function benchWorstPattern() {
  const re = new RegExp(WORST, "u");
  const matcher = linearMatcher(re);
  return [16, 18, 20, 22, 30, 1_000, 100_000].map((n) => {
    const text = worstText(n);
    const iterations = Math.max(1, Math.round(200_000 / n));
    const linearUs = micros(() => matcher.test(text), iterations);
    matcher.test(text);
    const regexpUs = n <= 22 ? micros(() => re.test(text), 1, 3) : undefined;
    return {
      pattern: WORST,
      length: n,
      linearUs: +linearUs.toFixed(2),
      linearSteps: matcher.lastSteps,
      stepsPerChar: +(matcher.lastSteps / n).toFixed(1),
      regexpUs: regexpUs === undefined ? "(seconds to hours)" : +regexpUs.toFixed(0),
    };
  });
}

/** Patterns tools use every day, on a text that matches: ns per test, the matcher and RegExp. */
export function benchEverydayPatterns() {
  const cases = [
    ["^[a-z\\d](?:[a-z\\d-]{0,38})$", "grace-h"],
    ["^\\d{4}-\\d{2}-\\d{2}$", "2026-12-24"],
    [
      "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$",
      "123e4567-e89b-12d3-a456-426614174000",
    ],
    [
      "^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$",
      "ada.lovelace@example.org",
    ],
    ["^(?=.*\\d)(?=.*[a-z])(?=.*[A-Z]).{8,}$", "Passw0rdOk"],
    ["error", "a log line that mentions an error near its end"],
  ];
  return cases.map(([source, text]) => {
    const re = new RegExp(source, "u");
    const mine = compilePattern(re);
    if (mine.test(text) !== re.test(text)) throw new Error(`bench: ${source} disagrees with RegExp`);
    const linearNs = micros(() => mine.test(text), 100_000) * 1000;
    const regexpNs = micros(() => re.test(text), 100_000) * 1000;
    return {
      pattern: source.length > 40 ? `${source.slice(0, 37)}...` : source,
      linearNs: Math.round(linearNs),
      regexpNs: Math.round(regexpNs),
      ratio: +(regexpNs / linearNs).toFixed(2),
    };
  });
}

/** Both tables. */
export function benchPatterns() {
  return { worst: benchWorstPattern(), everyday: benchEverydayPatterns() };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log("\n## The worst case: ^(\\w+\\s?)*$ on n-1 word characters and a '!'");
  console.table(benchWorstPattern());
  console.log("\n## Everyday patterns, a matching text (ns per test; ratio > 1: the matcher is faster)");
  console.table(benchEverydayPatterns());
}
