import { McpServer } from "picomcp";
import { createProtectedHandler, jwtVerifier } from "picomcp/auth";

const RESOURCE = "https://mcp.example.com/mcp"; // this server's canonical URI
const ISSUER = "https://auth.example.com"; // the authorization server

export const server = new McpServer({ name: "notes", version: "1.0.0" });

server.tool("read_notes", {
  description: "Lists your notes",
  run: (_args, ctx) => `Notes of ${ctx.auth?.subject}`,
});

server.tool("write_note", {
  description: "Writes a note",
  scopes: ["notes:write"], // hidden from tools/list and refused without it
  input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  run: ({ text }) => `Saved: ${text}`,
});

export const handle = createProtectedHandler(server, {
  resource: RESOURCE,
  authorizationServers: [ISSUER],
  requiredScopes: ["notes:read"],
  scopesSupported: ["notes:read", "notes:write"],
  allowedHosts: ["mcp.example.com"],
  verifyToken: jwtVerifier({
    issuer: ISSUER,
    audience: RESOURCE,
    jwks: `${ISSUER}/.well-known/jwks.json`,
  }),
});

// Workers, Bun and Deno take it as it is; on Node, see below
export default { fetch: handle };
