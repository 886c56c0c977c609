import { createServer } from "node:http";
import { createAuthorizationServer, createProtectedHandler, github } from "picomcp/auth";
import { toNodeListener } from "picomcp/node";
import { instrument } from "picomcp/otel";
import { createProxy } from "picomcp/proxy";

const ORIGIN = "https://files.example.com"; // the gateway's origin: the sign-in routes live here
const RESOURCE = `${ORIGIN}/mcp`; // the gateway's canonical URI

// a stdio-only server, started once, as a child of the gateway
const proxy = await createProxy(
  { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/shared"] },
  {
    name: "shared-files",
    version: "1.0.0",
    tools: { hide: ["write_file", "edit_file", "move_file", "create_directory"] }, // read-only for everyone
    limits: {
      requests: { perPrincipal: 8, total: 512 }, // each person's share, then everyone's
      rates: { methods: { "tools/call": { perMinute: 60 } } },
    },
  },
);

instrument(proxy); // spans and metrics of every call, as for any picomcp server (telemetry.md)

// sign-in in front: the team's GitHub accounts, through picomcp's own authorization server
const authorizationServer = createAuthorizationServer({
  issuer: ORIGIN,
  resources: [RESOURCE],
  signIn: github({
    clientId: process.env.GITHUB_CLIENT_ID!,
    clientSecret: process.env.GITHUB_CLIENT_SECRET!,
  }),
});

// a bearer token for this resource, or a 401 that points the client to the sign-in
const handle = createProtectedHandler(proxy, {
  resource: RESOURCE,
  authorizationServer,
  allowedHosts: ["files.example.com"],
});

createServer(toNodeListener(handle)).listen(3000, "127.0.0.1"); // behind the TLS proxy of files.example.com
