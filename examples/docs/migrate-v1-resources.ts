import { McpServer } from "picomcp";
import { z } from "zod";

export const server = new McpServer({ name: "bookshop", version: "1.0.0" });

// SDK v1: registerResource("config", "config://app", { mimeType }, async (uri) => ({ contents: [{ uri: uri.href, text }] }))
server.resource("config://app", {
  name: "config",
  mimeType: "application/json",
  read: () => ({ theme: "dark" }), // an object is sent as JSON text
});

const books = [
  { id: "1", title: "The Dispossessed" },
  { id: "2", title: "Kindred" },
];

// SDK v1: new ResourceTemplate("books://{id}", { list, complete: { id } }), then a callback of (uri, { id })
server.resource("books://{id}", {
  description: "A book of the catalog",
  list: () => books.map((b) => ({ uri: `books://${b.id}`, name: b.title })),
  complete: { id: (value) => books.map((b) => b.id).filter((id) => id.startsWith(value)) },
  read: ({ id }) => books.find((b) => b.id === id)?.title ?? `No book ${id}`,
  //      ^? { id: string }: typed from the template, no cast
});

// SDK v1: registerPrompt("review", { argsSchema: { title: z.string() } }, ({ title }) => ({ messages: [...] }))
server.prompt("review", {
  description: "Asks for a review",
  args: z.object({ title: z.string() }),
  get: ({ title }) => `Write a short review of ${title}.`, // a string is one user message
});
