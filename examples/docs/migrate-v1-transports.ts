import { McpServer } from "picomcp";

const server = new McpServer({ name: "bookshop", version: "1.0.0" });
server.tool("ping_shop", { description: "Answers pong", run: () => "pong" });

if (process.argv.includes("--http")) {
  // SDK v1: express, a StreamableHTTPServerTransport per session kept in a map, app.post/get/delete("/mcp")
  const { serve } = await import("picomcp/node");
  const { url } = await serve(server, { port: Number(process.env.PORT ?? 3000) });
  console.error(`MCP server at ${url}`);
} else {
  // SDK v1: await server.connect(new StdioServerTransport())
  const { serveStdio } = await import("picomcp/stdio");
  serveStdio(server);
}
