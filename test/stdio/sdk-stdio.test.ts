import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { askFor } from "../sdk-bridge.js";

const example = fileURLToPath(new URL("../../build/examples/bookshop.js", import.meta.url));

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function start(version: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [example, "--stdio"],
    stderr: "pipe",
  });
  const client = new Client({ name: "sdk-interop", version: "1.0.0" });
  clients.push(client);
  await client.connect(askFor(version, transport));
  return client;
}

describe.each(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])(
  "the official SDK client over stdio at %s",
  (version) => {
    it("initializes, lists and calls", async () => {
      const client = await start(version);
      expect(client.getServerVersion()).toEqual({ name: "bookshop", version: "1.0.0" });
      expect(client.getInstructions()).toBe("A small bookshop catalog.");
      // completions entered the capabilities in 2025-03-26
      expect(client.getServerCapabilities()?.completions).toEqual(version === "2024-11-05" ? undefined : {});
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["search_books", "add_book"]);
      expect(tools[0]!.inputSchema).toEqual({
        type: "object",
        properties: { query: { type: "string", description: "Words to look for" } },
        required: ["query"],
      });
      if (version === "2024-11-05") expect(tools[0]).not.toHaveProperty("annotations");
      else expect(tools[0]!.annotations).toEqual({ readOnlyHint: true });
      const found = await client.callTool({ name: "search_books", arguments: { query: "butler" } });
      expect(found).toEqual({ content: [{ type: "text", text: "2: Kindred — Octavia E. Butler" }] });
      const bad = await client.callTool({ name: "search_books", arguments: {} });
      expect(bad.isError).toBe(true);
      expect((bad.content as { text: string }[])[0]!.text).toContain("query");

      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["config://app", "books://1", "books://2", "books://3"]);
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates).toEqual([
        { uriTemplate: "books://{id}", name: "books://{id}", description: "One book of the catalog" },
      ]);
      const read = await client.readResource({ uri: "books://2" });
      expect(read.contents).toEqual([
        {
          uri: "books://2",
          mimeType: "application/json",
          text: '{"id":"2","title":"Kindred","author":"Octavia E. Butler"}',
        },
      ]);
      await expect(client.readResource({ uri: "books://99" })).rejects.toMatchObject({ code: -32002 });

      const { prompts } = await client.listPrompts();
      expect(prompts).toEqual([
        {
          name: "recommend",
          description: "Ask for a book recommendation",
          arguments: [{ name: "genre", description: "A genre you like", required: true }],
        },
      ]);
      const prompt = await client.getPrompt({ name: "recommend", arguments: { genre: "science fiction" } });
      expect(prompt.messages).toEqual([
        {
          role: "user",
          content: {
            type: "text",
            text: "Recommend one book from our catalog for someone who likes science fiction.",
          },
        },
      ]);
      expect(await client.ping()).toEqual({});
    });
  },
);

describe("the README's server", () => {
  it("runs over stdio as printed, with the inferred template variables", async () => {
    const readme = fileURLToPath(new URL("../../build/examples/readme.js", import.meta.url));
    const client = new Client({ name: "sdk-interop", version: "1.0.0" });
    clients.push(client);
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [readme], stderr: "pipe" }),
    );
    expect(await client.callTool({ name: "search_books", arguments: { query: "dragons" } })).toEqual({
      content: [{ type: "text", text: "No books about dragons yet" }],
    });
    expect((await client.readResource({ uri: "books://7/reviews?lang=fr" })).contents).toEqual([
      { uri: "books://7/reviews?lang=fr", mimeType: "text/plain", text: "Reviews of book 7 (fr): ★★★★☆" },
    ]);
  });
});

describe("a server that logs before it serves", () => {
  const chatty = fileURLToPath(new URL("../fixtures/stdio-chatty.js", import.meta.url));

  it("keeps stdout to JSON-RPC: console.log before serveStdio and in a tool goes to stderr", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [chatty], stderr: "pipe" });
    let stderr = "";
    transport.stderr!.on("data", (c) => (stderr += c));
    const client = new Client({ name: "sdk-interop", version: "1.0.0" });
    clients.push(client);
    await client.connect(transport);
    expect(await client.callTool({ name: "say", arguments: {} })).toEqual({
      content: [{ type: "text", text: "said" }],
    });
    // stderr is a pipe of its own: what the tool wrote there may arrive after the answer on stdout
    await expect
      .poll(() => stderr)
      .toBe("starting up\nloading the catalog\nafter serveStdio\ninside a tool\n");
  });
});
