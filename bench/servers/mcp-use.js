// mcp-use (its `MCPServer`) serving the fixture over Streamable HTTP on 127.0.0.1, as its docs show:
// `listen()` on its own Hono app. It builds a fresh official-SDK-v2 server per request (stateless; it
// serves 2026-07-28, and 2025-11-25 without sessions). It ships no stdio transport, so it runs the HTTP
// phases only. Its anonymous usage telemetry is off, as in mcp-use's own benchmark harness.
import { z } from "zod";
import { itemText, parseArgs, profileText } from "./fixture.js";

process.env.MCP_USE_ANONYMIZED_TELEMETRY = "false";
const args = parseArgs();
if (args.transport !== "http") {
  process.stderr.write("mcp-use has no stdio transport\n");
  process.exit(2);
}
const { MCPServer } = await import("mcp-use");
const server = new MCPServer({ name: "bench", version: "1.0.0", logging: { enabled: false } });
server.tool(
  { name: "echo", description: "Echoes its text", inputSchema: z.object({ text: z.string() }) },
  ({ text }) => ({ content: [{ type: "text", text }] }),
);
for (let i = 0; i < args.templates; i++)
  server.resourceTemplate({ name: `res${i}`, uriTemplate: `res${i}://items/{id}` }, (uri, { id }) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: itemText(i, id) }],
  }));
server.resourceTemplate({ name: "profile", uriTemplate: "users://{id}/profile" }, (uri, { id }) => ({
  contents: [{ uri: uri.href, mimeType: "text/plain", text: profileText(id) }],
}));
for (let i = 0; i < args.statics; i++)
  server.resource({ name: `static${i}`, uri: `static://item/${i}` }, (uri) => ({
    contents: [{ uri: uri.href, text: `static ${i}` }],
  }));
const { port } = await server.listen(0, { host: "127.0.0.1" });
process.stdout.write(`PORT ${port}\n`);
