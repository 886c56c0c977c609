// The fixture on the official SDK's high-level McpServer (1.x and v2 share this API). Over HTTP it uses
// the documented patterns: stateless, a server and transport per request; with sessions, a transport per
// session kept in a map.
import { createServer } from "node:http";
import { z } from "zod";
import { announce, itemText, parseArgs, profileText } from "./fixture.js";

/** The fixture on an SDK server (`server`: its high-level McpServer, which 1.x, v2 and mcp-handler share). */
export function registerFixture(server, ResourceTemplate, args) {
  server.registerTool(
    "echo",
    { description: "Echoes its text", inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  for (let i = 0; i < args.templates; i++)
    server.registerResource(
      `res${i}`,
      new ResourceTemplate(`res${i}://items/{id}`, { list: undefined }),
      {},
      (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: itemText(i, id) }] }),
    );
  server.registerResource(
    "profile",
    new ResourceTemplate("users://{id}/profile", { list: undefined }),
    {},
    (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: profileText(id) }] }),
  );
  for (let i = 0; i < args.statics; i++)
    server.registerResource(`static${i}`, `static://item/${i}`, {}, (uri) => ({
      contents: [{ uri: uri.href, text: `static ${i}` }],
    }));
}

export async function run({ McpServer, ResourceTemplate, StdioServerTransport, HttpTransport, Modern }) {
  const args = parseArgs();
  const make = () => {
    const server = new McpServer({ name: "bench", version: "1.0.0" });
    registerFixture(server, ResourceTemplate, args);
    return server;
  };

  if (args.transport === "stdio") {
    await make().connect(new (await StdioServerTransport())());
    return;
  }
  const Transport = await HttpTransport();
  // 2026-07-28 requests (where the SDK serves them) go to its own per-request handler
  const modern = Modern ? await Modern(make) : undefined;
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    if (modern && (req.headers["mcp-protocol-version"] ?? "") >= "2026") {
      await modern(req, res);
      return;
    }
    if (!args.sessions) {
      const server = make();
      const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => {
        transport.close();
        server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
      return;
    }
    const id = req.headers["mcp-session-id"];
    let transport = id && sessions.get(id);
    if (!transport) {
      transport = new Transport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      await make().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  announce(http);
}
