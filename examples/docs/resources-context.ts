import { McpServer } from "picomcp";

export const server = new McpServer({ name: "docs", version: "1.0.0" });

// docs://guide/intro.md → https://docs.example.com/guide/intro.md
const toHttp = (uri: string) => uri.replace(/^docs:\/\//, "https://docs.example.com/");

server.resource("docs://{+path}", {
  mimeType: "text/markdown",
  read: (params, { uri, signal }) => fetch(toHttp(uri), { signal }).then((r) => r.text()),
});
