import { McpServer } from "picomcp";
import { z } from "zod";

export const server = new McpServer({ name: "bookshop", version: "1.0.0" });

const catalog = ["Dune", "Kindred", "Solaris", "The Dispossessed"];

server.tool("search_books", {
  title: "Search books",
  description: "Search the catalog by title",
  input: z.object({ query: z.string().min(1), limit: z.number().int().min(1).max(50).default(10) }),
  annotations: { readOnlyHint: true },
  run: ({ query, limit }) => {
    const hits = catalog.filter((t) => t.toLowerCase().includes(query.toLowerCase())).slice(0, limit);
    return hits.length ? hits.join("\n") : "No books found";
  },
});
