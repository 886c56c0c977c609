import { McpServer } from "picomcp";
import { z } from "zod";

export const server = new McpServer({ name: "bookshop", version: "1.0.0" });

// SDK v1: server.registerTool("search_books", { title, description, inputSchema: { query: z.string() } }, cb)
server.tool("search_books", {
  title: "Search books",
  description: "Search the catalog",
  input: z.object({ query: z.string(), limit: z.number().int().default(10) }),
  // the arguments come parsed, defaults applied; a string is a text result
  run: ({ query, limit }) => `Up to ${limit} books about ${query}`,
});

// SDK v1: outputSchema: { total: z.number() }, returning { content, structuredContent }
server.tool("count_books", {
  description: "Counts the books of a shelf",
  input: z.object({ shelf: z.string() }),
  output: z.object({ shelf: z.string(), total: z.number() }),
  // the value is checked against output and sent as structuredContent, and as its JSON text
  run: ({ shelf }) => ({ shelf, total: 42 }),
});

// SDK v1: annotations as the fourth argument of tool(), or in registerTool's config
server.tool("delete_book", {
  description: "Deletes a book",
  input: z.object({ id: z.string() }),
  annotations: { destructiveHint: true },
  // a full CallToolResult still works, as does throwing for a failure the model should read
  run: ({ id }) => {
    if (id === "0") throw new Error("No book 0");
    return { content: [{ type: "text", text: `Deleted ${id}` }] };
  },
});
