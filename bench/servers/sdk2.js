// The official SDK v2 (`@modelcontextprotocol/server`, `@modelcontextprotocol/node`) serving the fixture.
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import { run } from "./sdk-common.js";

await run({
  McpServer,
  ResourceTemplate,
  StdioServerTransport: async () => (await import("@modelcontextprotocol/server/stdio")).StdioServerTransport,
  HttpTransport: async () => (await import("@modelcontextprotocol/node")).NodeStreamableHTTPServerTransport,
  Modern: async (make) => {
    const { createMcpHandler } = await import("@modelcontextprotocol/server");
    const { toNodeHandler } = await import("@modelcontextprotocol/node");
    return toNodeHandler(createMcpHandler(make));
  },
});
