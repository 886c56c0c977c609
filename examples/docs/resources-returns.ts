import { McpServer } from "picomcp";

export const server = new McpServer({ name: "bookshop", version: "1.0.0" });

// a string is sent as text, with the mimeType or text/plain
server.resource("docs://readme", {
  mimeType: "text/markdown",
  description: "How to use this server",
  read: () => "# Bookshop\n\nSearch the catalog with the `search_books` tool.",
});

// any other value is sent as its JSON, as application/json
server.resource("stats://catalog", {
  description: "Live counts for the catalog",
  read: () => ({ books: 1204, authors: 391 }),
});

// bytes are sent as a base64 blob, with the mimeType or application/octet-stream
const gif = Uint8Array.from(atob("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"), (c) =>
  c.charCodeAt(0),
);
server.resource("covers://placeholder", {
  mimeType: "image/gif",
  description: "A 1x1 transparent GIF, shown when a book has no cover",
  read: () => gif,
});

// an array of { uri, text } or { uri, blob } is sent as it is
server.resource("shelves://{shelf}", {
  description: "Every book on a shelf",
  read: ({ shelf }) => [
    { uri: `shelves://${shelf}/1`, mimeType: "text/plain", text: "Dune" },
    { uri: `shelves://${shelf}/2`, mimeType: "text/plain", text: "Kindred" },
  ],
});
