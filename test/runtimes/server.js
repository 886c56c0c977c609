// The server every runtime check serves. Uses no Node API.

import { McpServer } from "../../dist/index.js";

export const server = new McpServer({ name: "portable", version: "1.0.0" });
server.tool("slow_count", {
  input: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
  run: async ({ n }, ctx) => {
    for (let i = 1; i <= n; i++) ctx.progress(i, n);
    return `counted to ${n}`;
  },
});
server.tool("where", {
  input: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } },
  run: ({ region }) => `region=${region}`,
});
server.resource("files://{+path}", { read: ({ path }) => new TextEncoder().encode(path) });
server.tool("greet", {
  run: async (_args, ctx) => {
    const r = await ctx.elicit(
      { message: "Name?", requestedSchema: { type: "object", properties: {} } },
      { key: "n" },
    );
    return `Hello, ${r.content?.name}!`;
  },
});
