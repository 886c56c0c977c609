// Type-check time of a file with 200 templated resources (read's params inferred from each URI),
// against the same file with 200 static URIs. Run after `npm run build`.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dir = `${root}.bench-out/typecheck/`;
const shapes = [
  (i) => [`res${i}://{owner}/{repo}/readme{?ref}`, "owner + repo + (ref ?? '')"],
  (i) => [`files${i}://{+path}`, "path"],
  (i) => [`tree${i}://root{/segs*}{?tags*}`, "segs.join('/') + (tags?.length ?? 0)"],
  (i) => [
    `api${i}://v1/{org}/{team}/members/{id}{?fields,expand}`,
    "org + team + id + (fields ?? '') + (expand ?? '')",
  ],
];

function file(templated) {
  const lines = [
    'import { McpServer } from "../../dist/index.js";',
    'const server = new McpServer({ name: "tc", version: "1" });',
  ];
  for (let i = 0; i < 200; i++) {
    const [uri, body] = shapes[i % shapes.length](i);
    if (templated) {
      const vars = [...uri.matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((m) =>
        m[1].split(",").map((v) => v.replace("*", "")),
      );
      lines.push(`server.resource("${uri}", { read: ({ ${vars.join(", ")} }) => ${body} });`);
    } else {
      lines.push(`server.resource("static${i}://item", { read: () => "x" });`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** Milliseconds of tsc's check of `.bench-out/typecheck/<name>.ts`; type errors do not stop the measure. */
export function checkTime(name) {
  writeFileSync(
    `${dir}tsconfig.${name}.json`,
    JSON.stringify({
      extends: "../../tsconfig.json",
      compilerOptions: { noEmit: true },
      include: [`${name}.ts`],
    }),
  );
  const out = spawnSync(
    process.execPath,
    [`${root}node_modules/typescript/bin/tsc`, "-p", `${dir}tsconfig.${name}.json`, "--extendedDiagnostics"],
    { encoding: "utf8" },
  ).stdout;
  const m = /Check time:\s+([\d.]+)s/.exec(out);
  return m ? Number(m[1]) * 1000 : Number.NaN;
}

/** Milliseconds of type checking for 200 templated and 200 static resources (median of 3). */
export function benchTypecheck() {
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}templated.ts`, file(true));
  writeFileSync(`${dir}static.ts`, file(false));
  const median = (name) => [checkTime(name), checkTime(name), checkTime(name)].sort((a, b) => a - b)[1];
  return { templatedMs: median("templated"), staticMs: median("static") };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = benchTypecheck();
  console.log(
    `type-check of 200 resources: templated ${r.templatedMs.toFixed(0)} ms, static ${r.staticMs.toFixed(0)} ms`,
  );
}
