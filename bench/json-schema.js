// picomcp's JSON Schema validator next to ajv (2020 build, the code-generating validator most servers use)
// on a realistic tool input schema: valid and invalid arguments. Run after `npm run build`:
// `node bench/json-schema.js`, or `benchJsonSchema()` from bench/run.js. The machine may be shared, so the
// two validators are timed in turn, round after round, and the medians are compared.
import { pathToFileURL } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { compileJsonSchema } from "../build/lib/schema/json-schema.js";

/** The input of a "create issue" tool, as a client would list it. */
export const SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    user: {
      type: "object",
      properties: {
        login: { type: "string", pattern: "^[a-z\\d](?:[a-z\\d-]{0,38})$" },
        id: { type: "integer", minimum: 1 },
      },
      required: ["login"],
      additionalProperties: false,
    },
  },
  properties: {
    owner: { type: "string", minLength: 1, maxLength: 39 },
    repo: { type: "string", minLength: 1, maxLength: 100 },
    title: { type: "string", minLength: 1, maxLength: 256 },
    body: { type: "string", maxLength: 65536 },
    labels: { type: "array", items: { type: "string", minLength: 1 }, maxItems: 20, uniqueItems: true },
    assignees: { type: "array", items: { $ref: "#/$defs/user" }, maxItems: 10 },
    priority: { enum: ["low", "medium", "high", "urgent"] },
    estimate: { type: "number", minimum: 0, multipleOf: 0.25 },
    due: { type: "string", format: "date" },
    draft: { type: "boolean" },
    milestone: { anyOf: [{ type: "integer", minimum: 1 }, { type: "null" }] },
  },
  required: ["owner", "repo", "title"],
  additionalProperties: false,
};

export const VALID = {
  owner: "picomcp",
  repo: "picomcp",
  title: "Validate plain JSON Schemas fast",
  body: "Compile once, validate with no allocation on the valid path.",
  labels: ["performance", "schema", "good first issue"],
  assignees: [{ login: "ada", id: 1 }, { login: "grace-h" }],
  priority: "high",
  estimate: 2.5,
  due: "2026-12-24",
  draft: false,
  milestone: null,
};

export const INVALID = {
  owner: "",
  repo: "picomcp",
  title: 42,
  labels: ["performance", "performance"],
  assignees: [{ login: "Not A Login" }],
  priority: "whenever",
  estimate: 2.3,
  milestone: 0,
  extra: true,
};

/** Median ns per call of `fn(value)` over `rounds`, interleaving the validators round by round. */
function measure(fns, value, iterations, rounds) {
  const samples = fns.map(() => []);
  for (let round = -2; round < rounds; round++) {
    for (const [i, fn] of fns.entries()) {
      const start = performance.now();
      for (let n = 0; n < iterations; n++) fn(value);
      const ns = ((performance.now() - start) * 1e6) / iterations;
      if (round >= 0) samples[i].push(ns); // two warm-up rounds
    }
  }
  return samples.map((s) => s.sort((a, b) => a - b)[s.length >> 1]);
}

/** Rows of `{ input, picomcpNs, ajvNs, ratio }`; ratio > 1 means picomcp is faster. */
export function benchJsonSchema({ iterations = 50_000, rounds = 9 } = {}) {
  const picomcp = compileJsonSchema(SCHEMA);
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false }).compile(SCHEMA);
  if (picomcp(VALID).length !== 0 || !ajv(VALID)) throw new Error("bench: VALID is not valid");
  if (picomcp(INVALID).length === 0 || ajv(INVALID)) throw new Error("bench: INVALID is valid");
  const sinks = [0, 0];
  const fns = [
    (v) => {
      sinks[0] += picomcp(v).length;
    },
    (v) => {
      sinks[1] += ajv(v) ? 0 : ajv.errors.length;
    },
  ];
  return [
    ["valid", VALID],
    ["invalid", INVALID],
  ].map(([input, value]) => {
    const [picomcpNs, ajvNs] = measure(fns, value, input === "valid" ? iterations : iterations / 5, rounds);
    return {
      input,
      picomcpNs: Math.round(picomcpNs),
      ajvNs: Math.round(ajvNs),
      ratio: +(ajvNs / picomcpNs).toFixed(2),
    };
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) console.table(benchJsonSchema());
