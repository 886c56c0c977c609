import { Hono } from "hono";
import { McpServer } from "picomcp";
import { createHttpHandler } from "picomcp/http";

const server = new McpServer({ name: "greeter", version: "1.0.0" });

server.tool("greet", {
  description: "Greets someone by name",
  input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  run: ({ name }) => `Hello, ${name}!`,
});

const mcp = createHttpHandler(server);

const app = new Hono();
app.get("/", (c) => c.text("A greeter, with MCP at /mcp"));
// the raw web Request goes in, the Response (JSON or SSE) comes out as it is
app.all("/mcp", (c) => mcp(c.req.raw));

export default app;
