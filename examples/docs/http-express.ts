import express from "express";
import { McpServer } from "picomcp";
import { createHttpHandler } from "picomcp/http";
import { toNodeListener } from "picomcp/node";

const server = new McpServer({ name: "greeter", version: "1.0.0" });

server.tool("greet", {
  description: "Greets someone by name",
  input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  run: ({ name }) => `Hello, ${name}!`,
});

const app = express();
app.get("/", (_req, res) => {
  res.send("A greeter, with MCP at /mcp");
});
// no express.json() in front of it: the handler reads (and limits) the body itself
app.all("/mcp", toNodeListener(createHttpHandler(server)));

// PORT=0 picks a free port
const listener = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  const address = listener.address();
  const port = typeof address === "object" && address ? address.port : 3000;
  console.error(`MCP server at http://127.0.0.1:${port}/mcp`);
});
