// mcp-handler (Vercel's adapter) serving the fixture: its `createMcpHandler` is a web-standard route
// handler (Request → Response) for Next.js-style routes, on the official SDK v2; here it sits on a
// plain node:http server behind @hono/node-server's Request adapter, as tmcp's and mcp-lite's fetch
// handlers do. Stateless by design (no sessions); it serves 2026-07-28 and 2025-11-25. No stdio: an
// HTTP adapter, so it runs the HTTP phases only.
import { createAdaptorServer } from "@hono/node-server";
import { ResourceTemplate } from "@modelcontextprotocol/server";
import { createMcpHandler } from "mcp-handler";
import { parseArgs } from "./fixture.js";
import { registerFixture } from "./sdk-common.js";

const args = parseArgs();
if (args.transport !== "http") {
  process.stderr.write("mcp-handler is an HTTP route handler: no stdio\n");
  process.exit(2);
}
const handler = createMcpHandler((server) => registerFixture(server, ResourceTemplate, args), {
  serverInfo: { name: "bench", version: "1.0.0" },
});
const http = createAdaptorServer({ fetch: (request) => handler(request) });
http.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${http.address().port}\n`));
