/**
 * Options travel as one record: no function, method, arrow or signature in src/ takes more than five
 * positional parameters (a sixth is an options record waiting to be written). Parsed, not grepped.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAst } from "rolldown/parseAst";
import { describe, expect, it } from "vitest";

const src = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src");

const MAX = 5;

/** Every kind of node that declares parameters: bodies, declarations without one, and types. */
const TAKES_PARAMS = new Set([
  "FunctionDeclaration",
  "FunctionExpression",
  "ArrowFunctionExpression",
  "TSDeclareFunction",
  "TSEmptyBodyFunctionExpression",
  "TSMethodSignature",
  "TSCallSignatureDeclaration",
  "TSConstructSignatureDeclaration",
  "TSFunctionType",
  "TSConstructorType",
]);

type Node = { type?: unknown; start?: number; params?: unknown[]; [key: string]: unknown };

/** `file:line (n parameters)` for every declaration of `text` with more than {@link MAX} parameters. */
function overLong(file: string, text: string): string[] {
  const lines: number[] = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lines.push(i + 1);
  const lineOf = (offset: number) => {
    let lo = 0;
    let hi = lines.length;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (lines[mid]! <= offset) lo = mid;
      else hi = mid;
    }
    return lo + 1;
  };
  const found: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (typeof node !== "object" || node === null) return;
    const n = node as Node;
    if (typeof n.type === "string" && TAKES_PARAMS.has(n.type) && Array.isArray(n.params)) {
      // TypeScript's `this` parameter types the receiver: no argument is passed for it
      const count = n.params.filter((p) => (p as { name?: unknown }).name !== "this").length;
      if (count > MAX) found.push(`${file}:${lineOf(n.start ?? 0)} (${count} parameters)`);
    }
    for (const key in n) if (key !== "parent") visit(n[key]);
  };
  visit(parseAst(text, { lang: "ts" }, file));
  return found;
}

function sources(): string[] {
  return (readdirSync(src, { recursive: true }) as string[])
    .map((f) => f.split("\\").join("/"))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .sort();
}

describe("the parameter counter", () => {
  it("counts every kind of function and signature, and names file:line", () => {
    const six = "a: number, b: number, c: number, d: number, e: number, f: number";
    const text = [
      `function one(${six}) {}`,
      `const two = (${six}) => 0;`,
      `const three = function (${six}) {};`,
      `class Four { constructor(${six}) {} method(${six}) {} }`,
      `declare function five(${six}): void;`,
      `interface Six { method(${six}): void; (${six}): void; new (${six}): Six }`,
      `type Seven = (${six}) => void;`,
      `type Eight = new (${six}) => object;`,
      `abstract class Nine { abstract method(${six}): void }`,
      `function ten(this: Window, a: 1, b: 2, c: 3, d: 4, e: 5) {}`,
      `function eleven(a: 1, ...rest: number[]) {}`,
    ].join("\n");
    expect(overLong("x.ts", text)).toEqual([
      "x.ts:1 (6 parameters)",
      "x.ts:2 (6 parameters)",
      "x.ts:3 (6 parameters)",
      "x.ts:4 (6 parameters)",
      "x.ts:4 (6 parameters)",
      "x.ts:5 (6 parameters)",
      "x.ts:6 (6 parameters)",
      "x.ts:6 (6 parameters)",
      "x.ts:6 (6 parameters)",
      "x.ts:7 (6 parameters)",
      "x.ts:8 (6 parameters)",
      "x.ts:9 (6 parameters)",
    ]);
  });
});

describe("src/", () => {
  it(`has no function with more than ${MAX} positional parameters (pass an options record instead)`, () => {
    const found = sources().flatMap((f) => overLong(`src/${f}`, readFileSync(join(src, f), "utf8")));
    expect(found).toEqual([]);
  });
});
