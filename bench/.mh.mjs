import { z } from "zod";
import { createHttpHandler } from "../dist/http/index.js";
import { McpServer } from "../dist/index.js";

const server = new McpServer({ name: "bench", version: "1.0.0" });
server.tool("echo", { input: z.object({ text: z.string() }), run: ({ text }) => text });
const h = createHttpHandler(server, { sessions: false });
const body = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"}}}`;
const headers = {
  host: "127.0.0.1:3000",
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};
const reqs = [];
const N = 60000;
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const r = await h(new Request("http://127.0.0.1:3000/mcp", { method: "POST", headers, body: body(i) }));
}
console.log((((performance.now() - t0) * 1000) / N).toFixed(2), "µs");
