// Interop: the official SDK's StreamableHTTPClientTransport against picomcp's HTTP handler on a real socket.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { type NodeServer, type ServeOptions, serve } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { askFor } from "../sdk-bridge.js";

const running: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of running.splice(0).reverse()) await stop();
});

function makeServer() {
  const server = new McpServer({ name: "sdk-interop", version: "2.0.0", onError: () => {} });
  let http: NodeServer | undefined;
  server.tool("add", {
    description: "Adds",
    input: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
    run: ({ a, b }) => String(Number(a) + Number(b)),
  });
  server.tool("chatty", {
    description: "Logs and reports progress",
    run: async (_a, ctx) => {
      ctx.log("info", { step: "start" });
      ctx.progress(1, 2);
      await new Promise((r) => setTimeout(r, 10));
      ctx.progress(2, 2);
      ctx.log("info", { step: "end" });
      return "chatted";
    },
  });
  server.tool("ask_and_sample", {
    description: "Elicits, then samples",
    run: async (_a, ctx) => {
      const who = await ctx.elicit({
        message: "Who?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } },
      });
      const said = await ctx.sample({
        messages: [{ role: "user", content: { type: "text", text: "hi" } }],
        maxTokens: 9,
      });
      return `${who.content?.name} / ${(said.content as { text: string }).text}`;
    },
  });
  server.tool("drop_stream", {
    description: "Closes its SSE stream, then answers after a while",
    run: async (_a, ctx) => {
      ctx.log("info", "before the drop");
      http?.handler.closeSseStream(ctx);
      await new Promise((r) => setTimeout(r, 150));
      return "answered after the drop";
    },
  });
  return { server, setHttp: (h: NodeServer) => (http = h) };
}

async function start(options: Partial<ServeOptions> = {}) {
  const { server, setHttp } = makeServer();
  const http = await serve(server, { port: 0, retryMs: 20, ...options });
  setHttp(http);
  running.push(() => http.close());
  return http;
}

async function connect(url: string, version?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client(
    { name: "sdk", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  const notes: { method: string; params?: unknown }[] = [];
  client.fallbackNotificationHandler = async (n) => void notes.push(n);
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: "accept",
    content: { name: "Grace" },
  }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: "assistant",
    content: { type: "text", text: "hello" },
    model: "m",
  }));
  running.push(() => client.close());
  await client.connect(version ? askFor(version, transport) : transport);
  return { client, transport, notes };
}

describe.each(["2025-03-26", "2025-06-18", "2025-11-25"])(
  "the SDK client over Streamable HTTP at %s",
  (version) => {
    it("initializes with a session, lists and calls", async () => {
      const http = await start();
      const { client, transport } = await connect(http.url, version);
      expect(transport.sessionId).toMatch(/^[0-9a-f]{32}$/);
      expect(transport.protocolVersion).toBe(version);
      expect(client.getServerVersion()).toEqual({ name: "sdk-interop", version: "2.0.0" });
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
        "add",
        "chatty",
        "ask_and_sample",
        "drop_stream",
      ]);
      expect(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })).toEqual({
        content: [{ type: "text", text: "5" }],
      });
    });

    it("receives logs and progress on the POST's SSE stream before the result", async () => {
      const http = await start();
      const { client, notes } = await connect(http.url, version);
      const progress: number[] = [];
      const result = await client.callTool({ name: "chatty", arguments: {} }, undefined, {
        onprogress: (p) => void progress.push(p.progress),
      });
      expect(result.content).toEqual([{ type: "text", text: "chatted" }]);
      expect(progress).toEqual([1, 2]);
      expect(notes.filter((n) => n.method === "notifications/message").map((n) => n.params)).toEqual([
        { level: "info", data: { step: "start" } },
        { level: "info", data: { step: "end" } },
      ]);
    });
  },
);

describe("the SDK client, further", () => {
  it("round-trips elicitation and sampling within one call (2025-11-25)", async () => {
    const http = await start();
    const { client } = await connect(http.url);
    const result = await client.callTool({ name: "ask_and_sample", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "Grace / hello" }]);
  });

  it("resumes a stream the server closed (GET + Last-Event-ID) and gets the result", async () => {
    const http = await start();
    const { client, notes } = await connect(http.url);
    const result = await client.callTool({ name: "drop_stream", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "answered after the drop" }]);
    expect(notes.filter((n) => n.method === "notifications/message")).toHaveLength(1);
  });

  it("terminates its session with DELETE; the server forgets it", async () => {
    const http = await start();
    const { transport } = await connect(http.url);
    expect(http.handler.sessionCount).toBe(1);
    await transport.terminateSession();
    expect(http.handler.sessionCount).toBe(0);
  });

  it("works against stateless mode (no session id, GET answered 405)", async () => {
    const http = await start({ sessions: false });
    const { client, transport } = await connect(http.url);
    expect(transport.sessionId).toBeUndefined();
    expect(await client.callTool({ name: "add", arguments: { a: 1, b: 1 } })).toEqual({
      content: [{ type: "text", text: "2" }],
    });
  });

  it("keeps a session alive past sessionIdleMs while the client holds its GET stream", async () => {
    const http = await start({ sessionIdleMs: 30 });
    const { client } = await connect(http.url);
    await new Promise((r) => setTimeout(r, 150));
    expect(http.handler.sessionCount).toBe(1);
    expect((await client.listTools()).tools).toHaveLength(4);
  });
});
