import { McpServer } from "picomcp";
import { createAuthorizationServer, createProtectedHandler, type Identity } from "picomcp/auth";

/** Your own sessions: the person behind a session cookie, as your login page set it. */
declare function sessionOf(cookie: string | null): Promise<{ id: string; name: string } | undefined>;

export const server = new McpServer({ name: "notes", version: "1.0.0" });
server.tool("whoami", {
  description: "Who signed in",
  run: (_args, ctx) => `${ctx.auth?.extra?.name} (${ctx.auth?.subject})`,
});

const authorizationServer = createAuthorizationServer({
  issuer: "https://mcp.example.com",
  resources: ["https://mcp.example.com/mcp"],
  scopes: ["notes:read", "notes:write"],
  // run before the consent page: who is at the browser, or a Response (your login page)
  authenticate: async (request): Promise<Identity | Response> => {
    const person = await sessionOf(request.headers.get("cookie"));
    if (person) return { subject: person.id, claims: { name: person.name } };
    const back = encodeURIComponent(request.url);
    return Response.redirect(`https://mcp.example.com/login?return_to=${back}`, 303);
  },
});

export const handle = createProtectedHandler(server, {
  resource: "https://mcp.example.com/mcp",
  authorizationServer,
  requiredScopes: ["notes:read"],
  scopesSupported: ["notes:read", "notes:write"],
  allowedHosts: ["mcp.example.com"],
});
