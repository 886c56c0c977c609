// The server the official conformance suite's authorization-server scenarios run against
// (`conformance authorization`): picomcp's authorization server and a protected MCP endpoint on one
// handler. Listens on HOST:PORT (default 127.0.0.1:3001); prints its issuer and resource once it listens.
// Its `authenticate` hook signs everyone in as one person, so the only step left to a browser is the
// consent page: fit for the suite on a loopback address, never for a real server.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "picomcp";
import { createAuthorizationServer, createProtectedHandler, type ProtectedHandler } from "picomcp/auth";
import { toNodeListener } from "picomcp/node";

const host = process.env.HOST ?? "127.0.0.1";
const port = Number(process.env.PORT ?? 3001);

const server = new McpServer({ name: "picomcp-conformance-auth", version: "1.0.0" });
server.tool("whoami", {
  description: "Who signed in, and with which client and scopes",
  run: (_args, ctx) => `${ctx.auth?.subject} via ${ctx.auth?.clientId} with ${ctx.auth?.scopes?.join(" ")}`,
});

let handler: ProtectedHandler | undefined;
const http = createServer((req, res) =>
  handler ? toNodeListener(handler)(req, res) : res.writeHead(503).end(),
);
http.listen(port, host, () => {
  const { port: bound } = http.address() as AddressInfo;
  const issuer = `http://${host}:${bound}`;
  const resource = `${issuer}/mcp`;
  const authorizationServer = createAuthorizationServer({
    issuer,
    resources: [resource],
    scopes: ["mcp"],
    authenticate: () => ({ subject: "conformance-user", claims: { name: "Conformance" } }),
  });
  handler = createProtectedHandler(server, { resource, authorizationServer });
  console.log(`issuer ${issuer}`);
  console.log(`resource ${resource}`);
});

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    handler?.close();
    http.close(() => process.exit(0));
  });
}
