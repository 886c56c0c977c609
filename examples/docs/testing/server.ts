import { McpServer } from "picomcp";
import { z } from "zod";

export const server = new McpServer({ name: "bookshop", version: "1.0.0" });

server.tool("search_books", {
  description: "Search the catalog",
  input: z.object({ query: z.string() }),
  run: ({ query }) => `No books about ${query} yet`,
});

server.resource("books://{id}/reviews{?lang}", {
  read: ({ id, lang }) => `Reviews of book ${id} (${lang ?? "en"}): ★★★★☆`,
  //      ^? { id: string; lang?: string } — inferred from the URI itself
});
