// mcp-lite serving the fixture. It ships no stdio transport: stdio is readline around its own dispatch,
// the way its docs leave it to the user; HTTP is its fetch handler behind @hono/node-server.
import { McpServer } from "mcp-lite";
import { z } from "zod";
import { itemText, parseArgs, profileText } from "./fixture.js";

const args = parseArgs();
const server = new McpServer({
  name: "bench",
  version: "1.0.0",
  schemaAdapter: (schema) => z.toJSONSchema(schema),
});
server.tool("echo", {
  description: "Echoes its text",
  inputSchema: z.object({ text: z.string() }),
  handler: ({ text }) => ({ content: [{ type: "text", text }] }),
});
for (let i = 0; i < args.templates; i++)
  server.resource(`res${i}://items/{id}`, { name: `res${i}` }, async (uri, { id }) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: itemText(i, id) }],
  }));
server.resource("users://{id}/profile", { name: "profile" }, async (uri, { id }) => ({
  contents: [{ uri: uri.href, mimeType: "text/plain", text: profileText(id) }],
}));
for (let i = 0; i < args.statics; i++)
  server.resource(`static://item/${i}`, { name: `static${i}` }, async (uri) => ({
    contents: [{ uri: uri.href, text: `static ${i}` }],
  }));

if (args.transport === "stdio") {
  const { createInterface } = await import("node:readline");
  const lines = createInterface({ input: process.stdin });
  lines.on("line", async (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      process.stdout.write('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n');
      return;
    }
    const answer = await server._dispatch(message);
    if (answer) process.stdout.write(`${JSON.stringify(answer)}\n`);
  });
  lines.on("close", () => process.exit(0));
} else {
  const { StreamableHttpTransport, InMemorySessionAdapter } = await import("mcp-lite");
  const { createAdaptorServer } = await import("@hono/node-server");
  const transport = new StreamableHttpTransport(
    args.sessions ? { sessionAdapter: new InMemorySessionAdapter({ maxEventBufferSize: 1024 }) } : {},
  );
  const handler = transport.bind(server);
  const http = createAdaptorServer({ fetch: (request) => handler(request) });
  http.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${http.address().port}\n`));
}
