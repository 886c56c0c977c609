// The official SDK 1.x (`@modelcontextprotocol/sdk`) serving the fixture (see sdk-common.js).
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { run } from "./sdk-common.js";

await run({
  McpServer,
  ResourceTemplate,
  StdioServerTransport: async () =>
    (await import("@modelcontextprotocol/sdk/server/stdio.js")).StdioServerTransport,
  HttpTransport: async () =>
    (await import("@modelcontextprotocol/sdk/server/streamableHttp.js")).StreamableHTTPServerTransport,
});
