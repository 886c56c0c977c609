// The public API as the build declares it: every subpath of package.json's "exports", each exported
// name with its declaration from dist/**/*.d.ts (comments dropped), written to docs/api.md. An API
// change then shows in review as a change of that file. `npm run api:report` writes it (after
// `npm run build`); test/core/api-report.test.ts fails when the build and the file differ.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
// picomcp builds with TypeScript 7, whose JavaScript API is not stable yet; the exact-pinned
// @arethetypeswrong/core carries a TypeScript 5 compiler, whose API reads the same .d.ts files
const ts = createRequire(createRequire(import.meta.url).resolve("@arethetypeswrong/core"))("typescript");

const REPORT = `${root}docs/api.md`;

/** The report for the current dist/: one section per subpath. */
function apiReport() {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
  const entries = Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === "object" && target.types)
    .map(([subpath, target]) => ({
      name: subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
      file: `${root}${target.types.slice(2)}`,
    }));
  const program = ts.createProgram(
    entries.map((e) => e.file),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      // declarations are printed as written: no need to read the standard library
      noLib: true,
    },
  );
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ removeComments: true });
  const sections = entries.map(({ name, file }) => {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`${file} is missing: run npm run build first`);
    const module = checker.getSymbolAtLocation(source);
    const lines = [];
    for (const exported of [...checker.getExportsOfModule(module)].sort(byName)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declarations = symbol.declarations ?? [];
      if (symbol.name !== exported.name) lines.push(`// ${exported.name} is ${symbol.name}`);
      for (const d of declarations) lines.push(print(printer, d));
    }
    return `## ${name}\n\n\`\`\`ts\n${lines.join("\n")}\n\`\`\`\n`;
  });
  return `# The public API

Every name that each subpath exports, with its declaration as the build gives it (dist/**/*.d.ts, comments
dropped). This file is generated: \`npm run build && npm run api:report\` rewrites it, and \`npm test\` fails
while it differs from the build, so a change of the API shows here in review. What a change of this file
means for a version number: [versioning.md](versioning.md).

${sections.join("\n")}`;
}

function byName(a, b) {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** One declaration as source text, without `export`/`declare` and with a variable's keyword. */
function print(printer, declaration) {
  const node = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
  const text = printer.printNode(ts.EmitHint.Unspecified, node, declaration.getSourceFile());
  return text.replace(/^export (default )?/, "").replace(/^declare /, "");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // --print: to stdout, for test/core/api-report.test.ts to compare with the file
  if (process.argv.includes("--print")) process.stdout.write(apiReport());
  else {
    writeFileSync(REPORT, apiReport());
    console.log(`wrote ${REPORT.slice(root.length)}`);
  }
}
