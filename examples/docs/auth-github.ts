import { createServer } from "node:http";
import { McpServer } from "picomcp";
import { createAuthorizationServer, createProtectedHandler, github, upstreamToken } from "picomcp/auth";
import { toNodeListener } from "picomcp/node";

const ORIGIN = "http://localhost:3000"; // the issuer: where the sign-in routes live
const RESOURCE = `${ORIGIN}/mcp`; // the MCP endpoint

export const server = new McpServer({ name: "repos", version: "1.0.0" });

server.tool("my_repos", {
  description: "Lists the signed-in person's GitHub repositories",
  run: async (_args, ctx) => {
    const token = await upstreamToken(ctx.auth); // their GitHub token, refreshed if it has expired
    const res = await fetch("https://api.github.com/user/repos?per_page=10", {
      headers: { authorization: `Bearer ${token}`, accept: "application/vnd.github+json" },
    });
    const repos = (await res.json()) as { full_name: string }[];
    return `${ctx.auth?.extra?.login}: ${repos.map((r) => r.full_name).join(", ")}`;
  },
});

export const authorizationServer = createAuthorizationServer({
  issuer: ORIGIN,
  resources: [RESOURCE],
  // the GitHub OAuth App's callback URL is ORIGIN + "/oauth/callback"
  signIn: github({
    clientId: process.env.GITHUB_CLIENT_ID!,
    clientSecret: process.env.GITHUB_CLIENT_SECRET!,
    scopes: ["read:user", "repo"],
  }),
});

const handle = createProtectedHandler(server, { resource: RESOURCE, authorizationServer });
createServer(toNodeListener(handle)).listen(3000, "127.0.0.1");
