import { McpServer } from "picomcp";
import { serve } from "picomcp/node";

const server = new McpServer({ name: "greeter", version: "1.0.0" });

server.tool("greet", {
  description: "Greets someone by name",
  input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  run: ({ name }) => `Hello, ${name}!`,
});

// 127.0.0.1 only, endpoint /mcp; PORT=0 picks a free port
const { url } = await serve(server, { port: Number(process.env.PORT ?? 3000) });
console.error(`MCP server at ${url}`);
