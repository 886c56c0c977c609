import { McpServer } from "picomcp";
import { createProtectedHandler, jwtVerifier } from "picomcp/auth";

const RESOURCE = "https://mcp.example.com/mcp";
const ISSUER = "https://auth.example.com";

export const server = new McpServer({ name: "notes", version: "1.0.0" });

// SDK v1: the handler's extra.authInfo
server.tool("whoami", {
  description: "Says who is calling",
  run: (_args, ctx) => `You are ${ctx.auth?.subject ?? "nobody"}`,
});

// SDK v1: mcpAuthMetadataRouter(...) for the metadata, requireBearerAuth({ verifier, requiredScopes,
// resourceMetadataUrl }) in front of the transport; here one handler does both
export const handle = createProtectedHandler(server, {
  resource: RESOURCE,
  authorizationServers: [ISSUER],
  requiredScopes: ["notes:read"],
  allowedHosts: ["mcp.example.com"],
  verifyToken: jwtVerifier({ issuer: ISSUER, audience: RESOURCE, jwks: `${ISSUER}/.well-known/jwks.json` }),
});
