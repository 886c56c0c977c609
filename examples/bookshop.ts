import { McpError, McpServer } from "picomcp";

const books = new Map([
  ["1", { id: "1", title: "The Left Hand of Darkness", author: "Ursula K. Le Guin" }],
  ["2", { id: "2", title: "Kindred", author: "Octavia E. Butler" }],
  ["3", { id: "3", title: "Solaris", author: "Stanisław Lem" }],
]);

const server = new McpServer({
  name: "bookshop",
  version: "1.0.0",
  instructions: "A small bookshop catalog.",
});

server.tool("search_books", {
  description: "Search the catalog by title or author",
  input: {
    type: "object",
    properties: { query: { type: "string", description: "Words to look for" } },
    required: ["query"],
  },
  annotations: { readOnlyHint: true },
  run: ({ query }) => {
    const q = String(query).toLowerCase();
    const hits = [...books.values()].filter((b) => `${b.title} ${b.author}`.toLowerCase().includes(q));
    return hits.length ? hits.map((b) => `${b.id}: ${b.title} — ${b.author}`).join("\n") : "No books found";
  },
});

server.tool("add_book", {
  description: "Add a book to the catalog",
  input: {
    type: "object",
    properties: {
      title: { type: "string", minLength: 1 },
      author: { type: "string", minLength: 1 },
    },
    required: ["title", "author"],
  },
  run: ({ title, author }, ctx) => {
    const id = String(books.size + 1);
    ctx.progress(0, 1, "Checking the catalog");
    books.set(id, { id, title: String(title), author: String(author) });
    ctx.progress(1, 1, "Shelved");
    ctx.log("info", { added: id, title });
    server.resourceUpdated(`books://${id}`);
    return `Added book ${id}: ${title}`;
  },
});

server.resource("config://app", {
  description: "The shop configuration",
  read: () => "theme=dark\nlanguage=en",
});

server.resource("books://{id}", {
  description: "One book of the catalog",
  list: () => [...books.values()].map((b) => ({ uri: `books://${b.id}`, name: b.title })),
  complete: { id: (value) => [...books.keys()].filter((id) => id.startsWith(value)) },
  read: ({ id }) => {
    //    ^? { id: string }
    const book = books.get(id);
    if (!book) throw new McpError(-32002, `Resource not found: books://${id}`);
    return book;
  },
});

server.prompt("recommend", {
  description: "Ask for a book recommendation",
  args: [{ name: "genre", description: "A genre you like", required: true }],
  get: ({ genre }) => `Recommend one book from our catalog for someone who likes ${genre}.`,
});

// `node build/examples/bookshop.js --stdio` (or MCP_TRANSPORT=stdio, as `picomcp dev` sets) serves over
// stdio; without it, over HTTP on 127.0.0.1. Each transport is loaded only when used, which keeps the
// stdio cold start short.
if (process.argv.includes("--stdio") || process.env.MCP_TRANSPORT === "stdio") {
  const { serveStdio } = await import("picomcp/stdio");
  serveStdio(server);
  console.error("bookshop: serving MCP over stdio (newline-delimited JSON-RPC)");
} else {
  const { serve } = await import("picomcp/node");
  const { url } = await serve(server, { port: Number(process.env.PORT ?? 3000) });
  const init = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
  });
  console.log(`bookshop: MCP server (Streamable HTTP) listening on ${url}

Connect a client:
  MCP Inspector:  npx @modelcontextprotocol/inspector   (Transport: Streamable HTTP, URL: ${url})
  Claude Code:    claude mcp add --transport http bookshop ${url}
  Raw JSON-RPC:   curl -s ${url} -H 'content-type: application/json' \\
                    -H 'accept: application/json, text/event-stream' -d '${init}'
  Over stdio:     node build/examples/bookshop.js --stdio
  Dev console:    npx picomcp dev build/examples/bookshop.js

Press Ctrl+C to stop.`);
}
