// The official SDK v2 (`@modelcontextprotocol/server`, `@modelcontextprotocol/node`) serving the fixture.
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import { run } from "./sdk-common.js";

await run({
  McpServer,
  ResourceTemplate,
  StdioServerTransport: async () => (await import("@modelcontextprotocol/server/stdio")).StdioServerTransport,
  HttpTransport: async () => (await import("@modelcontextprotocol/node")).NodeStreamableHTTPServerTransport,
});
