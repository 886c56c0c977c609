import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { connect } from "picomcp/testing";
import { describe, expect, it } from "vitest";
import { server as context } from "../examples/docs/context-utilities.js";
import { server as prompts } from "../examples/docs/prompts-review.js";
import { server as output } from "../examples/docs/tools-output.js";
import { server as search } from "../examples/docs/tools-search.js";

const root = fileURLToPath(new URL("..", import.meta.url));

describe("docs", () => {
  const pages = readdirSync(`${root}docs`).filter((f) => f.endsWith(".md"));
  for (const page of pages) {
    const text = readFileSync(`${root}docs/${page}`, "utf8");
    const blocks = [...text.matchAll(/```ts file=(\S+)\n([\s\S]*?)```/g)];
    for (const [, file, code] of blocks) {
      it(`${page}: the example ${file} is the file the tests run`, () => {
        expect(code).toBe(readFileSync(`${root}${file}`, "utf8"));
      });
    }
  }
});

describe("docs/tools.md examples", () => {
  it("search_books validates, defaults and answers", async () => {
    const client = await connect(search);
    expect(await client.callTool("search_books", { query: "dis" })).toEqual({
      content: [{ type: "text", text: "The Dispossessed" }],
    });
    const bad = await client.callTool("search_books", { query: "" });
    expect(bad.isError).toBe(true);
    expect((bad.content[0] as { text: string }).text).toMatch(
      /^Invalid arguments for tool search_books: query: /,
    );
  });

  it("structured output, links, several blocks and thrown errors", async () => {
    const client = await connect(output);
    expect(await client.callTool("sales_total", { quarter: "q3" })).toEqual({
      content: [{ type: "text", text: '{"quarter":"q3","total":1204}' }],
      structuredContent: { quarter: "q3", total: 1204 },
    });
    expect(await client.callTool("q3_report")).toEqual({
      content: [
        { type: "resource_link", uri: "reports://2026-q3", name: "Q3 report", mimeType: "application/pdf" },
      ],
    });
    expect((await client.callTool("cover")).content.map((b) => b.type)).toEqual(["image", "text"]);
    expect(await client.callTool("divide", { a: 1, b: 0 })).toEqual({
      content: [{ type: "text", text: "Cannot divide by zero" }],
      isError: true,
    });
  });
});

describe("docs/prompts.md examples", () => {
  it("review and translate, with completion that reads the chosen arguments", async () => {
    const client = await connect(prompts);
    expect((await client.getPrompt("review", { diff: "+x" })).messages[0]).toEqual({
      role: "user",
      content: { type: "text", text: "Review this diff:\n+x" },
    });
    expect((await client.getPrompt("translate", { text: "Hola", to: "French" })).messages).toHaveLength(2);
    expect(
      await client.complete(
        { type: "ref/prompt", name: "translate" },
        { name: "to", value: "" },
        { arguments: { text: "Bonjour" } },
      ),
    ).toEqual({
      completion: { values: ["English"] },
    });
    expect(
      await client.complete({ type: "ref/prompt", name: "review" }, { name: "tone", value: "s" }),
    ).toEqual({
      completion: { values: ["strict"] },
    });
  });
});

describe("docs/context.md examples", () => {
  it("progress, logging, elicitation, sampling and roots", async () => {
    const client = await connect(context, {
      onElicit: () => ({ action: "accept", content: { confirm: true } }),
      onSample: () => ({ role: "assistant", content: { type: "text", text: "small" }, model: "m" }),
      roots: [{ uri: "file:///books" }],
    });
    expect(
      await client.request("tools/call", { name: "import_catalog", _meta: { progressToken: "p" } }),
    ).toEqual({
      content: [{ type: "text", text: "Imported 4 batches" }],
    });
    expect(
      client.notifications.filter((n) => n.method === "notifications/progress").map((n) => n.params),
    ).toEqual([
      { progressToken: "p", progress: 1, total: 4, message: "batch 1 of 4" },
      { progressToken: "p", progress: 2, total: 4, message: "batch 2 of 4" },
      { progressToken: "p", progress: 3, total: 4, message: "batch 3 of 4" },
      { progressToken: "p", progress: 4, total: 4, message: "batch 4 of 4" },
    ]);
    expect(client.notifications.filter((n) => n.method === "notifications/message")).toHaveLength(4);
    expect((await client.callTool("confirm_delete")).content).toEqual([{ type: "text", text: "Deleted" }]);
    expect((await client.callTool("summarize")).content).toEqual([{ type: "text", text: "Summary: small" }]);
    expect((await client.callTool("workspace")).content).toEqual([{ type: "text", text: "file:///books" }]);
  });
});
