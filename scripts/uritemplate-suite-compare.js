// Runs the RFC 6570 test suite (test/suites/uritemplate-test) against picomcp's parseUriTemplate and
// against url-template, and prints how many cases each passes. Not part of `npm test`; run after
// `npm run build`: `node scripts/uritemplate-suite-compare.js`.
import { readFileSync } from "node:fs";
import { parseTemplate } from "url-template";
import { parseUriTemplate } from "../build/lib/resources/template.js";

const dir = new URL("../test/suites/uritemplate-test/", import.meta.url);
const files = [
  "spec-examples.json",
  "spec-examples-by-section.json",
  "extended-tests.json",
  "negative-tests.json",
];

const engines = {
  picomcp: (template, variables) => parseUriTemplate(template, { expandOnly: true }).expand(variables),
  "url-template@3.1.1": (template, variables) => parseTemplate(template).expand(variables),
};

/** Whether `engine` gives `expected` (a string, a list of accepted strings, or false: refused). */
function passes(engine, template, variables, expected) {
  let got;
  try {
    got = engine(template, variables);
  } catch {
    return expected === false;
  }
  if (expected === false) return false;
  return typeof expected === "string" ? got === expected : expected.includes(got);
}

const rows = [];
for (const [name, engine] of Object.entries(engines)) {
  const row = { engine: name, total: 0 };
  for (const file of files) {
    let pass = 0;
    let total = 0;
    for (const { variables, testcases } of Object.values(
      JSON.parse(readFileSync(new URL(file, dir), "utf8")),
    )) {
      for (const [template, expected] of testcases) {
        total++;
        if (passes(engine, template, variables, expected)) pass++;
      }
    }
    row[file] = `${pass}/${total}`;
    row.total += pass;
    row.of = (row.of ?? 0) + total;
  }
  rows.push(row);
}
console.table(rows);
