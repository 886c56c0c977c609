import { McpServer } from "picomcp";
import { createHttpHandler } from "picomcp/http";

const server = new McpServer({ name: "notes", version: "1.0.0" });

server.tool("my_notes", {
  description: "Lists the caller's notes",
  run: (_args, ctx) => `Notes of ${ctx.auth?.subject ?? "nobody"}`,
});

// stands in for your token check: a JWT verifier, an introspection call, a lookup
const tokens = new Map([["t-alice", { sub: "alice", client_id: "notes-app", scope: "notes:read" }]]);
const verify = async (token: string) => tokens.get(token);

export const mcp = createHttpHandler(server, {
  authenticate: async (request) => {
    const header = request.headers.get("authorization") ?? "";
    const claims = header.startsWith("Bearer ") ? await verify(header.slice(7)) : undefined;
    if (!claims) return new Response(null, { status: 401, headers: { "www-authenticate": "Bearer" } });
    // `subject` is the user: it binds every session this token opens
    return {
      token: header.slice(7),
      subject: claims.sub,
      clientId: claims.client_id,
      scopes: claims.scope.split(" "),
    };
  },
});
