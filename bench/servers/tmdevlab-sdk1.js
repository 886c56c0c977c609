// The official SDK 1.x serving the TM Dev Lab v1 tools (tmdevlab-tools.js) as their Node server does:
// Express with express.json(), and a new McpServer and a stateless StreamableHTTPServerTransport for
// every request (answers as SSE, the transport's default). Listens on 127.0.0.1; prints `PORT <n>`.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import express from "express";
import { TOOLS } from "./tmdevlab-tools.js";

function make() {
  const server = new McpServer({ name: "BenchmarkNodejsServer", version: "1.0.0" });
  for (const t of TOOLS)
    server.tool(t.name, t.description, t.shape, async (args) => ({
      content: [{ type: "text", text: await t.run(args) }],
    }));
  return server;
}

const app = express();
app.use(express.json());
app.post("/mcp", async (req, res) => {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  const server = make();
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
    res.on("close", () => {
      transport.close();
      server.close();
    });
  } catch (error) {
    if (!res.headersSent) res.status(500).json({ error: String(error) });
  }
});
app.get("/mcp", (_req, res) => res.status(405).end());
app.delete("/mcp", (_req, res) => res.status(405).end());
const listener = app.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${listener.address().port}\n`));
