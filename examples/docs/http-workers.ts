import { McpServer } from "picomcp";
import { createHttpHandler, withPeer } from "picomcp/http";

const server = new McpServer({ name: "edge", version: "1.0.0" });

server.tool("greet", {
  description: "Greets someone by name",
  input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  run: ({ name }) => `Hello, ${name}!`,
});

// no sessions: any isolate answers any request; only this host name is served
const mcp = createHttpHandler(server, { sessions: false, allowedHosts: ["mcp.example.com"] });

// Cloudflare sets CF-Connecting-IP to the client's address (a client cannot set it): each address is
// an anonymous caller of its own
export default { fetch: (req: Request) => mcp(withPeer(req, req.headers.get("cf-connecting-ip"))) };
