// mcp-handler (Vercel's adapter) serving the fixture: its `createMcpHandler` is a web-standard route
// handler (Request → Response) for Next.js-style routes, on the official SDK v2; here it sits on a
// plain node:http server behind @hono/node-server's Request adapter, as tmcp's and mcp-lite's fetch
// handlers do. Stateless by design (no sessions); it serves 2026-07-28 and 2025-11-25. No stdio: an
// HTTP adapter, so it runs the HTTP phases only.
import { createAdaptorServer } from "@hono/node-server";
import { ResourceTemplate } from "@modelcontextprotocol/server";
import { createMcpHandler } from "mcp-handler";
import { z } from "zod";
import { itemText, parseArgs, profileText } from "./fixture.js";

const args = parseArgs();
if (args.transport !== "http") {
  process.stderr.write("mcp-handler is an HTTP route handler: no stdio\n");
  process.exit(2);
}
const handler = createMcpHandler(
  (server) => {
    server.registerTool(
      "echo",
      { description: "Echoes its text", inputSchema: { text: z.string() } },
      async ({ text }) => ({ content: [{ type: "text", text }] }),
    );
    for (let i = 0; i < args.templates; i++)
      server.registerResource(
        `res${i}`,
        new ResourceTemplate(`res${i}://items/{id}`, { list: undefined }),
        {},
        (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: itemText(i, id) }] }),
      );
    server.registerResource(
      "profile",
      new ResourceTemplate("users://{id}/profile", { list: undefined }),
      {},
      (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: profileText(id) }] }),
    );
    for (let i = 0; i < args.statics; i++)
      server.registerResource(`static${i}`, `static://item/${i}`, {}, (uri) => ({
        contents: [{ uri: uri.href, text: `static ${i}` }],
      }));
  },
  { serverInfo: { name: "bench", version: "1.0.0" } },
);
const http = createAdaptorServer({ fetch: (request) => handler(request) });
http.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${http.address().port}\n`));
