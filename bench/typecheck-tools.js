// Type-check time of a file with 200 tools whose `input` is a plain JSON Schema literal (run's arguments
// inferred from it), against the same tools with zod schemas. Run after `npm run build`.
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { checkTime } from "./typecheck.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const dir = `${root}.bench-out/typecheck/`;

const jsonInput = `{
    type: "object",
    properties: {
      query: { type: "string" },
      limit: { type: "integer" },
      sort: { enum: ["asc", "desc"] },
      tags: { type: "array", items: { type: "string" } },
      range: { type: "object", properties: { from: { type: "number" }, to: { type: "number" } }, required: ["from"] },
      cursor: { anyOf: [{ type: "string" }, { type: "null" }] },
    },
    required: ["query"],
    additionalProperties: false,
  }`;
const zodInput = `z.object({
    query: z.string(),
    limit: z.number().int().optional(),
    sort: z.enum(["asc", "desc"]).optional(),
    tags: z.array(z.string()).optional(),
    range: z.object({ from: z.number(), to: z.number().optional() }).optional(),
    cursor: z.string().nullable().optional(),
  })`;
const body =
  "query + (limit ?? 0) + (sort ?? '') + (tags?.length ?? 0) + (range?.from ?? 0) + (cursor ?? '')";

function file(kind) {
  const lines = [
    'import { McpServer } from "../../dist/index.js";',
    'import { z } from "zod";',
    'const server = new McpServer({ name: "tc", version: "1" });',
    "void z;",
  ];
  for (let i = 0; i < 200; i++) {
    const input = kind === "json" ? jsonInput : zodInput;
    lines.push(
      `server.tool("t${i}", { input: ${input}, run: ({ query, limit, sort, tags, range, cursor }) => ${body} });`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** Milliseconds of type checking for 200 tools with plain JSON Schema and with zod inputs (median of 3). */
export function benchTypecheckTools() {
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}tools-json.ts`, file("json"));
  writeFileSync(`${dir}tools-zod.ts`, file("zod"));
  const median = (name) => [checkTime(name), checkTime(name), checkTime(name)].sort((a, b) => a - b)[1];
  return { jsonMs: median("tools-json"), zodMs: median("tools-zod") };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = benchTypecheckTools();
  console.log(
    `type-check of 200 tools: plain JSON Schema ${r.jsonMs.toFixed(0)} ms, zod ${r.zodMs.toFixed(0)} ms`,
  );
}
