// The JSON-Schema-Test-Suite (draft2020-12, required; vendored in test/suites/json-schema-test-suite/)
// through picomcp's validator and through ajv's 2020 build, side by side. Not part of `npm test` (the
// vitest file test/schema/json-schema-suite.test.ts is): `npm run build && node scripts/json-schema-suite.js`.
// Neither gets the suite's remote documents; a schema a validator refuses counts as failing its cases.
import { readdirSync, readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { compileJsonSchema } from "../build/lib/schema/json-schema.js";

const dir = new URL("../test/suites/json-schema-test-suite/tests/", import.meta.url);
const groups = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .flatMap((file) => JSON.parse(readFileSync(new URL(file, dir), "utf8")).map((g) => ({ file, ...g })));

const validators = {
  picomcp: (schema) => {
    const check = compileJsonSchema(schema);
    return (value) => check(value).length === 0;
  },
  "ajv@8.20.0 (Ajv2020, strict: false)": (schema) => {
    const validate = new Ajv2020({ strict: false, logger: false }).compile(schema);
    return (value) => validate(value);
  },
};

const total = groups.reduce((n, g) => n + g.tests.length, 0);
// the groups that need a document from outside the schema (the same list test/schema/json-schema-suite.test.ts skips)
const skip = JSON.parse(readFileSync(new URL("../remote.json", dir), "utf8"));
const remote = groups.filter((g) => skip[`${g.file} | ${g.description}`]);
const remoteCases = remote.reduce((n, g) => n + g.tests.length, 0);
const rows = Object.entries(validators).map(([name, make]) => {
  let passed = 0;
  let passedRemote = 0;
  for (const g of groups) {
    let validate;
    try {
      validate = make(g.schema);
    } catch {
      continue;
    }
    for (const t of g.tests) {
      let ok;
      try {
        ok = validate(t.data) === t.valid;
      } catch {
        ok = false;
      }
      if (!ok) continue;
      passed++;
      if (remote.includes(g)) passedRemote++;
    }
  }
  const local = passed - passedRemote;
  return {
    validator: name,
    passed: `${passed}/${total}`,
    percent: +((100 * passed) / total).toFixed(1),
    "passed (remote refs excepted)": `${local}/${total - remoteCases}`,
    "percent (remote excepted)": +((100 * local) / (total - remoteCases)).toFixed(1),
  };
});
console.table(rows);
