import { McpServer } from "picomcp";
import { createAuthorizationServer, createProtectedHandler, type Identity } from "picomcp/auth";

const ORIGIN = "https://mcp.example.com";

// your own sign-in: who is behind this browser request (your session cookie), or undefined
declare function sessionOf(request: Request): Promise<Identity | undefined>;

export const server = new McpServer({ name: "notes", version: "1.0.0" });

export const authorizationServer = createAuthorizationServer({
  issuer: ORIGIN,
  resources: [`${ORIGIN}/mcp`],
  scopes: ["notes:read", "notes:write"],
  authenticate: (request) => sessionOf(request),
});

// both halves on one handler: /authorize, /token, … and the metadata beside /mcp
export const handle = createProtectedHandler(server, {
  resource: `${ORIGIN}/mcp`,
  authorizationServer, // authorizationServers and verifyToken default from it
  scopesSupported: ["notes:read", "notes:write"],
});
