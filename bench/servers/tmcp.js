// tmcp serving the fixture, with its zod adapter, its stdio transport, and its HTTP transport behind
// @hono/node-server.
import { ZodJsonSchemaAdapter } from "@tmcp/adapter-zod";
import { McpServer } from "tmcp";
import { z } from "zod";
import { itemText, parseArgs, profileText } from "./fixture.js";

const args = parseArgs();
const server = new McpServer(
  { name: "bench", version: "1.0.0", description: "bench" },
  { adapter: new ZodJsonSchemaAdapter(), capabilities: { tools: {}, resources: {} } },
);
server.tool(
  { name: "echo", description: "Echoes its text", schema: z.object({ text: z.string() }) },
  ({ text }) => ({ content: [{ type: "text", text }] }),
);
for (let i = 0; i < args.templates; i++)
  server.template(
    { name: `res${i}`, description: `res${i}`, uri: `res${i}://items/{id}` },
    (uri, { id }) => ({
      contents: [{ uri, mimeType: "text/plain", text: itemText(i, id) }],
    }),
  );
server.template({ name: "profile", description: "profile", uri: "users://{id}/profile" }, (uri, { id }) => ({
  contents: [{ uri, mimeType: "text/plain", text: profileText(id) }],
}));
for (let i = 0; i < args.statics; i++)
  server.resource({ name: `static${i}`, description: `static${i}`, uri: `static://item/${i}` }, (uri) => ({
    contents: [{ uri, text: `static ${i}` }],
  }));

if (args.transport === "stdio") {
  const { StdioTransport } = await import("@tmcp/transport-stdio");
  new StdioTransport(server).listen();
} else {
  const { HttpTransport } = await import("@tmcp/transport-http");
  const { createAdaptorServer } = await import("@hono/node-server");
  const transport = new HttpTransport(server, { path: "/mcp" });
  const http = createAdaptorServer({
    fetch: async (request) => (await transport.respond(request)) ?? new Response(null, { status: 404 }),
  });
  http.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${http.address().port}\n`));
}
