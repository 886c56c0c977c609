// Interop: the official SDK client with a bearer token against sessions bound to their principal, on a
// real socket. Its every request (POST, the GET stream, answers to elicitation, DELETE) carries the
// token, so binding costs a well-behaved client nothing; another principal cannot use its session.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeServer, serve } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { call } from "../http-helpers.js";

const seen: { method: string; authorization: string | null }[] = [];
let http: NodeServer;

beforeAll(async () => {
  const server = new McpServer({ name: "sdk-auth", version: "1.0.0" });
  server.tool("whoami", { run: (_a, ctx) => ctx.auth?.subject ?? "nobody" });
  server.tool("ask", {
    run: async (_a, ctx) => {
      const r = await ctx.elicit({
        message: "Name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } },
      });
      return `${ctx.auth?.subject} named ${r.content?.name}`;
    },
  });
  http = await serve(server, {
    port: 0,
    authenticate: (req) => {
      const authorization = req.headers.get("authorization");
      seen.push({ method: req.method, authorization });
      const token = authorization?.replace(/^Bearer /, "");
      return token === "alice" || token === "bob"
        ? { token, subject: token }
        : new Response(null, { status: 401, headers: { "www-authenticate": "Bearer" } });
    },
  });
});
afterAll(() => http.close());

describe("the SDK client with a bearer token", () => {
  it("works through calls, elicitation, the GET stream and DELETE; another principal gets 404", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(http.url), {
      requestInit: { headers: { Authorization: "Bearer alice" } },
    });
    const client = new Client({ name: "sdk", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: "accept",
      content: { name: "Grace" },
    }));
    await client.connect(transport);
    expect(await client.callTool({ name: "whoami", arguments: {} })).toEqual({
      content: [{ type: "text", text: "alice" }],
    });
    expect(await client.callTool({ name: "ask", arguments: {} })).toEqual({
      content: [{ type: "text", text: "alice named Grace" }],
    });
    const sid = transport.sessionId!;
    const bob = await fetch(http.url, {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        authorization: "Bearer bob",
        "mcp-session-id": sid,
      },
      body: JSON.stringify(call(1, "whoami")),
    });
    expect(bob.status).toBe(404);
    expect(await bob.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32001, message: "Session not found" },
    });
    await transport.terminateSession();
    await client.close();
    expect(http.handler.sessionCount).toBe(0);
    const alice = seen.filter((s) => s.authorization !== "Bearer bob");
    expect(new Set(alice.map((s) => s.method))).toEqual(new Set(["POST", "GET", "DELETE"]));
    expect(alice.every((s) => s.authorization === "Bearer alice")).toBe(true);
  });
});
