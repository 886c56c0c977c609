// The patterns campaign: random schema patterns from a grammar (counted repeats, classes, alternation,
// lookarounds, anchors) × random texts, run on picomcp's linear-time matcher, in this process. A problem:
// an answer other than RegExp's on a short text (RegExp runs in a worker, and a text it backtracks on
// for more than a second is left out: nested quantifiers take it exponential time even there), a throw, a
// refusal that is not one of the documented bounds, work past the documented bound on a long text, or
// a heap that does not come back to its baseline. Every 100th pattern also goes through a tool's input
// schema, registration and a call, on a real server of dist/ over the in-memory client. FUZZ_TRACE=1
// prints each pattern to stderr before it runs.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Worker } from "node:worker_threads";
import { linearMatcher, UnsupportedPattern } from "../../build/lib/schema/json-schema-regex.js";
import { McpServer } from "../../dist/index.js";
import { connect } from "../../dist/testing.js";
import { random } from "./generate.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

/** The refusals docs/tools.md documents for a valid pattern without backreferences or modifier groups. */
const DOCUMENTED =
  /^is too large: it (has \d+ lookarounds, and the linear-time matcher takes at most 32 |counts up to \d+ characters in its \{n,m\} repeats, and the linear-time matcher keeps at most 100000 |needs \d+ states, and the linear-time matcher takes at most 2000 )\(/;

/** A text of `n` characters: steps ≤ this × states × (n + 1), plus the DFA's states made once. */
const STEPS_PER_STATE = 16;

/** The RegExp a schema pattern is read as: with the u flag when it is valid so, else without. */
function native(source) {
  try {
    return new RegExp(source, "u");
  } catch {
    return new RegExp(source);
  }
}

/** With the u flag, V8 may still begin a match inside a surrogate pair; the language (and picomcp) does not. */
function splitsPair(re, text, at) {
  if (!re.unicode || at <= 0) return false;
  const low = text.charCodeAt(at);
  const high = text.charCodeAt(at - 1);
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
}

/** RegExp, in a worker of its own that is ended when one pattern's texts take it more than `ms`. */
class Oracle {
  #worker;
  #ask() {
    this.#worker ??= new Worker(
      `const { parentPort } = require("node:worker_threads");
       parentPort.on("message", ({ source, flags, texts }) =>
         parentPort.postMessage(texts.map((t) => { const re = new RegExp(source, flags); const at = re.exec(t);
           return at === null ? -1 : at.index; })));`,
      { eval: true },
    );
    return this.#worker;
  }

  /** For each text, the index of RegExp's first match (-1: none); undefined when RegExp took too long. */
  async matches(re, texts, ms = 1000) {
    const worker = this.#ask();
    worker.postMessage({ source: re.source, flags: re.flags, texts });
    let timer;
    const answer = await Promise.race([
      new Promise((resolve) => worker.once("message", resolve)),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
      }),
    ]);
    clearTimeout(timer);
    if (answer === undefined) {
      worker.removeAllListeners("message");
      await worker.terminate();
      this.#worker = undefined;
    }
    return answer;
  }

  async close() {
    await this.#worker?.terminate();
  }
}

const ONE = [
  "a",
  "b",
  "-",
  ".",
  "\\.",
  "[ab]",
  "[^a]",
  "[\\w.-]",
  "\\w",
  "\\W",
  "\\d",
  "\\s",
  "😀",
  "[a😀]",
  "\\u{1F600}",
];
const ASSERT = ["^", "$", "\\b", "\\B"];
const LOOK = ["(?=", "(?!", "(?<=", "(?<!"];
const UNITS = ["a", "b", "ab", "1", " ", "-", ".", "a.pdf", "😀", "\n", "aa-", "\ud83d"];

/** The grammar: a pattern of a few pieces, nested to `depth`. */
function pattern(r, depth) {
  const pieces = 1 + r.int(3);
  let out = "";
  for (let i = 0; i < pieces; i++) out += piece(r, depth);
  return out;
}

function piece(r, depth) {
  const roll = r.int(10);
  let atom;
  if (roll < 4 || depth === 0) atom = r.pick(ONE);
  else if (roll < 5) return r.pick(ASSERT);
  else if (roll < 7) atom = `(?:${pattern(r, depth - 1)}|${pattern(r, depth - 1)})`;
  else if (roll < 8) atom = `(${pattern(r, depth - 1)})`;
  else if (roll < 9) return `${r.pick(LOOK)}${pattern(r, depth - 1)})`;
  else atom = `(?:${pattern(r, depth - 1)})`;
  return atom + quantifier(r);
}

function quantifier(r) {
  const roll = r.int(12);
  if (roll < 4) return "";
  if (roll < 7) return r.pick(["*", "+", "?", "*?", "+?"]);
  // counted: small, past the unrolled copies (32), or large
  const big = r.chance(0.3) ? 40 : r.chance(0.1) ? 400 : 6;
  const min = r.int(big);
  const max = min + r.int(big);
  const lazy = r.chance(0.2) ? "?" : "";
  if (roll < 9) return `{${min}}${lazy}`;
  if (roll < 10) return `{${min},}${lazy}`;
  return `{${min},${max}}${lazy}`;
}

/** Patterns past a bound on purpose: each must be refused with its documented message, or compile small. */
function oversized(r) {
  return r.pick([
    () => "(?=a)".repeat(33 + r.int(3000)),
    () => `a{${100001 + r.int(2e9)}}`,
    () => `(?:ab|c){${700 + r.int(2000)}}`,
    () => `(?:){${r.int(2e9)}}a`,
    () => `(?:^|$|\\b){${r.int(2e9)}}[\\w.-]{1,${r.int(99999)}}\\.pdf$`,
    () => `(?:[a-z]{1,${r.int(3000)}}\\.){1,${r.int(100)}}`,
  ])();
}

function text(r, long) {
  const runs = long ? 1 + r.int(3) : 1 + r.int(4);
  let out = "";
  for (let i = 0; i < runs; i++) out += r.pick(UNITS).repeat(long ? 1 + r.int(4096) : r.int(6));
  return long ? out : out.slice(0, 16);
}

/** Runs `messages` checks of a pattern and a text (a new pattern every 10); resolves with the report. */
export async function patternsCampaign({ messages, seed }) {
  const started = Date.now();
  const r = random(seed);
  const problems = [];
  const problem = (text) => {
    if (problems.length < 50) problems.push(text);
  };
  const counts = {
    patterns: 0,
    refused: 0,
    short: 0,
    regExpTooSlow: 0,
    long: 0,
    served: 0,
    maxStepsPerStateChar: 0,
  };
  const oracle = new Oracle();
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let server;
  let client;
  for (let done = 0; done < messages; ) {
    const source = r.chance(0.01) ? oversized(r) : pattern(r, 3);
    let re;
    try {
      re = native(source);
    } catch {
      continue; // not a pattern at all: the validator refuses it as an invalid regular expression
    }
    counts.patterns++;
    if (process.env.FUZZ_TRACE) process.stderr.write(`${JSON.stringify(source)}\n`);
    let m;
    try {
      m = linearMatcher(re);
    } catch (error) {
      done++;
      counts.refused++;
      if (!(error instanceof UnsupportedPattern) || !DOCUMENTED.test(error.message))
        problem(`${JSON.stringify(source).slice(0, 200)}: ${error?.stack ?? error}`);
      continue;
    }
    const short = [];
    const answers = [];
    for (let k = 0; k < 10 && done < messages; k++, done++) {
      const long = r.chance(0.02);
      const t = text(r, long);
      let got;
      try {
        got = m.test(t);
      } catch (error) {
        problem(`${JSON.stringify(source)} on ${JSON.stringify(t).slice(0, 80)}: ${error?.stack ?? error}`);
        continue;
      }
      counts.maxStepsPerStateChar = Math.max(
        counts.maxStepsPerStateChar,
        m.lastSteps / (m.size * (t.length + 1)),
      );
      if (m.lastSteps > STEPS_PER_STATE * m.size * (t.length + 1) + 400 * m.size)
        problem(
          `${JSON.stringify(source)}: ${m.lastSteps} steps on ${t.length} characters, ${m.size} states`,
        );
      if (long) counts.long++;
      else {
        short.push(t);
        answers.push(got);
      }
    }
    const expected = short.length > 0 ? await oracle.matches(re, short) : [];
    if (expected === undefined) counts.regExpTooSlow += short.length;
    else
      short.forEach((t, i) => {
        counts.short++;
        if (splitsPair(re, t, expected[i])) return;
        if (answers[i] !== expected[i] >= 0)
          problem(
            `${JSON.stringify(source)} on ${JSON.stringify(t)}: ${answers[i]}, RegExp says ${!answers[i]}`,
          );
      });
    // every 100th pattern the whole way: a tool's input schema, and a call the validator answers
    if (counts.patterns % 100 === 0) {
      if (counts.served % 50 === 0) {
        await client?.close?.();
        server = new McpServer({ name: "fuzz-patterns", version: "1" });
        client = undefined;
      }
      const name = `t${counts.served++}`;
      const t = text(r, false);
      const [at] = (await oracle.matches(re, [t])) ?? [];
      server.tool(name, {
        input: { type: "object", properties: { s: { type: "string", pattern: source } }, required: ["s"] },
        run: () => "ok",
      });
      client ??= await connect(server);
      const result = await client.callTool(name, { s: t });
      if (at !== undefined && !splitsPair(re, t, at) && (result.isError !== true) !== at >= 0)
        problem(
          `${JSON.stringify(source)} served on ${JSON.stringify(t)}: ${JSON.stringify(result).slice(0, 200)}`,
        );
    }
  }
  await client?.close?.();
  await oracle.close();
  server = undefined;
  client = undefined;
  gc();
  const final = process.memoryUsage().heapUsed;
  const mib = (n) => Math.round((n / 1048576) * 10) / 10;
  if (final - baseline > 16 * 1048576) problems.push(`heap grew by ${mib(final - baseline)} MiB after GC`);
  counts.maxStepsPerStateChar = Math.round(counts.maxStepsPerStateChar * 100) / 100;
  return {
    name: "patterns",
    seed,
    messages,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    ...counts,
    heapMiB: { baseline: mib(baseline), final: mib(final) },
    problems,
  };
}
