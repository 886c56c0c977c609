// Bun and Deno serving the HTTP handler with the peer each runtime gives (`withPeer`), as the recipes of
// docs/http.md do: every anonymous address has a rate of its own (1 tools/call a minute here), and
// `whoami` answers the address the handler saw. Prints `PORT <n>` once listening on 127.0.0.1.
import { createHttpHandler, withPeer } from "../../dist/http/index.js";
import { McpServer } from "../../dist/index.js";

const server = new McpServer({
  name: "crowd",
  version: "1.0.0",
  limits: { rates: { methods: { "tools/call": { perMinute: 1 / 60, burst: 1 } } } },
});
server.tool("whoami", { run: (_a, ctx) => ctx.clientAddress ?? "unknown" });
const mcp = createHttpHandler(server);

if (globalThis.Bun) {
  const http = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req, srv) => mcp(withPeer(req, srv.requestIP(req)?.address)),
  });
  console.log(`PORT ${http.port}`);
} else {
  Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log(`PORT ${port}`) },
    (req, info) => mcp(withPeer(req, info.remoteAddr.hostname)),
  );
}
