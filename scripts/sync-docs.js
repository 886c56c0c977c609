// Copies each example file into the docs blocks that name it (```ts file=examples/...), so that the
// docs always show the code the tests run. `npm run docs:sync`; test/docs/docs.test.ts checks it.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { sync } from "./jsdoc-examples.js";

const root = new URL("..", import.meta.url);
const pages = [
  "README.md",
  ...readdirSync(new URL("docs/", root))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
for (const page of pages) {
  const url = new URL(page, root);
  const text = readFileSync(url, "utf8");
  const synced = text.replace(/```ts file=(\S+)\n[\s\S]*?```/g, (_m, file) => {
    return `\`\`\`ts file=${file}\n${readFileSync(new URL(file, root), "utf8")}\`\`\``;
  });
  if (synced !== text) {
    writeFileSync(url, synced);
    console.log(`synced ${page}`);
  }
}
// and the @example blocks of src/ from their type-checked regions in test/jsdoc-examples.ts
sync();
