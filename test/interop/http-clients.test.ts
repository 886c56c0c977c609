// Real clients of both eras against ONE picomcp server over HTTP, at the same time: the SDK v2
// client pinned to 2026-07-28 and in auto mode, the 1.32 SDK client (2025-11-25 sessions), and the
// AI SDK's MCP client with its default settings (it probes server/discover first).
import { createMCPClient, ElicitationRequestSchema } from "@ai-sdk/mcp";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeServer, serve } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";

let http: NodeServer;
let url: URL;
const server = new McpServer({ name: "clients", version: "1.0.0" });

server.tool("where", {
  description: "region is mirrored into Mcp-Param-Region",
  input: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } },
  run: (a: { region?: string }) => `region=${a.region ?? "<none>"}`,
});
server.tool("greet", {
  description: "asks the client for a name",
  run: async (_a, ctx) => {
    const r = await ctx.elicit({
      message: "What is your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    return r.action === "accept" ? `Hello, ${String(r.content?.name)}!` : "no name";
  },
});
let added = 0;
server.tool("change", {
  description: "adds a tool (tools/list_changed)",
  run: () => {
    server.tool(`extra_${++added}`, { description: "extra", run: () => "x" });
    return "changed";
  },
});
server.resource("test://watched", { description: "watched", mimeType: "text/plain", read: () => "watched" });
server.resource("test://items/{id}", {
  description: "items",
  mimeType: "text/plain",
  read: ({ id }) => `item ${id}`,
  complete: { id: (v) => ["1", "10", "2"].filter((x) => x.startsWith(v)) },
});
server.prompt("review", {
  description: "review",
  args: [{ name: "text", required: true }],
  get: ({ text }) => `Review: ${text}`,
});

beforeAll(async () => {
  http = await serve(server, { port: 0, hostname: "127.0.0.1" });
  url = new URL(http.url);
});
afterAll(async () => {
  await http.close();
});

async function v2(mode: "auto" | { pin: string }) {
  const client = new V2Client(
    { name: "sdk-v2", version: "1.0.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode } },
  );
  client.setRequestHandler("elicitation/create", async () => ({
    action: "accept",
    content: { name: "Ann" },
  }));
  await client.connect(new V2Transport(url));
  return client;
}

async function v1() {
  const client = new V1Client({ name: "sdk-v1", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Bob" } }));
  await client.connect(new V1Transport(url));
  return client;
}

const waitFor = async (ok: () => boolean) => {
  for (let i = 0; !ok() && i < 300; i++) await new Promise((r) => setTimeout(r, 10));
  return ok();
};

describe("real clients of both eras on one endpoint, at once", () => {
  it("SDK v2 (pinned and auto), SDK 1.32 and the AI SDK", async () => {
    const [pinned, auto, legacy, ai, aiElicit] = await Promise.all([
      v2({ pin: "2026-07-28" }),
      v2("auto"),
      v1(),
      createMCPClient({ transport: { type: "http", url: url.href } }),
      createMCPClient({ transport: { type: "http", url: url.href }, capabilities: { elicitation: {} } }),
    ]);
    try {
      expect(pinned.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(auto.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(legacy.getServerVersion()).toMatchObject({ name: "clients", version: "1.0.0" });
      expect(ai.serverInfo).toMatchObject({ name: "clients", version: "1.0.0" });
      // the AI SDK's server/discover probe got a modern answer, so it speaks 2026-07-28 (and, like
      // the v2 client, must send Mcp-Param-Region below, or the call is refused with -32020)
      expect(ai.initializeResult.protocolVersion).toBe("2026-07-28");

      // SDK v2, both modes: every primitive, the x-mcp-header argument, an input round, listen
      for (const client of [pinned, auto]) {
        const tools = await client.listTools();
        expect(tools.tools.map((t) => t.name).slice(0, 3)).toEqual(["where", "greet", "change"]);
        expect((await client.callTool({ name: "where", arguments: { region: "Zürich" } })).content).toEqual([
          { type: "text", text: "region=Zürich" },
        ]);
        expect((await client.callTool({ name: "greet", arguments: {} })).content).toEqual([
          { type: "text", text: "Hello, Ann!" },
        ]);
        expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(["test://watched"]);
        expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
          "test://items/{id}",
        ]);
        expect((await client.readResource({ uri: "test://items/7" })).contents).toEqual([
          { uri: "test://items/7", mimeType: "text/plain", text: "item 7" },
        ]);
        expect((await client.getPrompt({ name: "review", arguments: { text: "x" } })).messages).toEqual([
          { role: "user", content: { type: "text", text: "Review: x" } },
        ]);
        const done = await client.complete({
          ref: { type: "ref/resource", uri: "test://items/{id}" },
          argument: { name: "id", value: "1" },
        });
        expect(done.completion.values).toEqual(["1", "10"]);
      }

      // the legacy client in its session, at the same time
      expect((await legacy.callTool({ name: "where", arguments: { region: "eu" } })).content).toEqual([
        { type: "text", text: "region=eu" },
      ]);
      expect((await legacy.callTool({ name: "greet", arguments: {} })).content).toEqual([
        { type: "text", text: "Hello, Bob!" },
      ]);
      expect((await legacy.readResource({ uri: "test://watched" })).contents).toEqual([
        { uri: "test://watched", mimeType: "text/plain", text: "watched" },
      ]);
      expect((await legacy.getPrompt({ name: "review", arguments: { text: "y" } })).messages).toEqual([
        { role: "user", content: { type: "text", text: "Review: y" } },
      ]);
      const legacyDone = await legacy.complete({
        ref: { type: "ref/resource", uri: "test://items/{id}" },
        argument: { name: "id", value: "" },
      });
      expect(legacyDone.completion.values).toEqual(["1", "10", "2"]);
      await legacy.subscribeResource({ uri: "test://watched" });

      // the AI SDK client with default settings
      const aiTools = await ai.listTools();
      expect(aiTools.tools.map((t) => t.name).slice(0, 3)).toEqual(["where", "greet", "change"]);
      expect((await ai.callTool({ name: "where", arguments: { region: "ap" } })).content).toEqual([
        { type: "text", text: "region=ap" },
      ]);
      expect((await ai.listResources()).resources.map((r) => r.uri)).toEqual(["test://watched"]);
      expect((await ai.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
        "test://items/{id}",
      ]);
      expect((await ai.readResource({ uri: "test://items/3" })).contents).toEqual([
        { uri: "test://items/3", mimeType: "text/plain", text: "item 3" },
      ]);
      expect((await ai.listPrompts()).prompts.map((p) => p.name)).toEqual(["review"]);
      expect((await ai.getPrompt({ name: "review", arguments: { text: "z" } })).messages).toEqual([
        { role: "user", content: { type: "text", text: "Review: z" } },
      ]);
      const aiDone = await ai.complete({
        ref: { type: "ref/resource", uri: "test://items/{id}" },
        argument: { name: "id", value: "2" },
      });
      expect(aiDone.completion.values).toEqual(["2"]);
      aiElicit.onElicitationRequest(ElicitationRequestSchema, async () => ({
        action: "accept",
        content: { name: "Cy" },
      }));
      expect((await aiElicit.callTool({ name: "greet", arguments: {} })).content).toEqual([
        { type: "text", text: "Hello, Cy!" },
      ]);

      // all of them at once, interleaved on the one endpoint (a client mirrors x-mcp-header arguments
      // only for tools it has listed; the AI SDK does not list and retry after -32020 on its own)
      await aiElicit.listTools();
      const burst = await Promise.all(
        [pinned, auto, legacy, ai, aiElicit].flatMap((c, i) =>
          [0, 1, 2].map((j) => c.callTool({ name: "where", arguments: { region: `r${i}${j}` } })),
        ),
      );
      expect(burst.map((r) => (r.content as { text: string }[])[0]!.text)).toEqual(
        [0, 1, 2, 3, 4].flatMap((i) => [0, 1, 2].map((j) => `region=r${i}${j}`)),
      );

      // one change reaches the 2026-07-28 listen stream and the legacy session's stream
      const heard: string[] = [];
      pinned.setNotificationHandler("notifications/tools/list_changed", () => void heard.push("v2"));
      pinned.setNotificationHandler(
        "notifications/resources/updated",
        (n) => void heard.push(`v2 ${n.params.uri}`),
      );
      const { ToolListChangedNotificationSchema, ResourceUpdatedNotificationSchema } = await import(
        "@modelcontextprotocol/sdk/types.js"
      );
      legacy.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.push("v1"));
      legacy.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void heard.push("v1 updated"));
      const sub = await pinned.listen({ toolsListChanged: true, resourceSubscriptions: ["test://watched"] });
      expect(sub.honoredFilter).toEqual({
        toolsListChanged: true,
        resourceSubscriptions: ["test://watched"],
      });
      // the legacy GET stream opens asynchronously after initialize
      await new Promise((r) => setTimeout(r, 100));
      await auto.callTool({ name: "change", arguments: {} });
      server.resourceUpdated("test://watched");
      expect(await waitFor(() => heard.length >= 4)).toBe(true);
      expect(heard.sort()).toEqual(["v1", "v1 updated", "v2", "v2 test://watched"]);
      await sub.close();
      expect(await sub.closed).toBe("local");
    } finally {
      await Promise.all([pinned.close(), auto.close(), legacy.close(), ai.close(), aiElicit.close()]);
    }
  });
});
