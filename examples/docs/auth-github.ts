import { createServer } from "node:http";
import { McpServer } from "picomcp";
import { createAuthorizationServer, createProtectedHandler, github, upstreamToken } from "picomcp/auth";
import { toNodeListener } from "picomcp/node";

const ISSUER = "http://localhost:3000"; // the authorization server: this same process
const RESOURCE = `${ISSUER}/mcp`; // the MCP endpoint

const server = new McpServer({ name: "my-github", version: "1.0.0" });

server.tool("whoami", {
  description: "Who signed in",
  run: (_args, ctx) => `${ctx.auth?.extra?.login} (${ctx.auth?.subject}) via ${ctx.auth?.clientId}`,
});

server.tool("my_repos", {
  description: "Your most recently pushed GitHub repositories",
  run: async (_args, ctx) => {
    // the signed-in person's GitHub token: kept on the server, never sent to the MCP client
    const token = await upstreamToken(ctx.auth);
    const res = await fetch("https://api.github.com/user/repos?sort=pushed&per_page=5", {
      headers: { authorization: `Bearer ${token}`, accept: "application/vnd.github+json" },
    });
    const repos = (await res.json()) as { full_name: string }[];
    return repos.map((r) => r.full_name).join("\n");
  },
});

const authorizationServer = createAuthorizationServer({
  issuer: ISSUER,
  resources: [RESOURCE],
  // people sign in with GitHub; its callback is ISSUER + "/oauth/callback"
  signIn: github({
    clientId: process.env.GITHUB_CLIENT_ID!,
    clientSecret: process.env.GITHUB_CLIENT_SECRET!,
    scopes: ["read:user", "repo"],
  }),
});

// both halves from one handler: the authorization server's routes, the metadata, and /mcp
const handle = createProtectedHandler(server, { resource: RESOURCE, authorizationServer });

createServer(toNodeListener(handle)).listen(3000, "127.0.0.1", () => {
  console.log(`MCP server at ${RESOURCE}`);
});
