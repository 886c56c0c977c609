// picomcp serving the fixture (see fixture.js). PICOMCP_DIST names another build (`--baseline`).
import { pathToFileURL } from "node:url";
import { itemText, parseArgs, profileText } from "./fixture.js";

const dist = process.env.PICOMCP_DIST
  ? pathToFileURL(`${process.env.PICOMCP_DIST}/`).href
  : new URL("../../dist/", import.meta.url).href;
const { McpServer } = await import(`${dist}index.js`);

const args = parseArgs();
const server = new McpServer({ name: "bench", version: "1.0.0" });
const { z } = args.plain ? {} : await import("zod");
const input = args.plain
  ? { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
  : z.object({ text: z.string() });
server.tool("echo", { description: "Echoes its text", input, run: ({ text }) => text });
for (let i = 0; i < args.templates; i++)
  server.resource(`res${i}://items/{id}`, { read: ({ id }) => itemText(i, id) });
server.resource("users://{id}/profile", { read: ({ id }) => profileText(id) });
for (let i = 0; i < args.statics; i++) server.resource(`static://item/${i}`, { read: () => `static ${i}` });

if (args.otel) await (await import("./otel.js")).instrumentFor(server, args.otel, dist);

if (args.transport === "stdio") {
  const { serveStdio } = await import(`${dist}stdio.js`);
  serveStdio(server);
} else {
  const { serve } = await import(`${dist}http/node.js`);
  const { url } = await serve(server, { port: 0, sessions: args.sessions });
  process.stdout.write(`PORT ${new URL(url).port}\n`);
}
