// picomcp/proxy in front of a picomcp server over Streamable HTTP, which the proxy's client speaks
// 2026-07-28 with: the remote's questions come as input rounds of the call itself, so each is asked of
// exactly the downstream request that made the call, whoever else is calling. Downstream: the SDK v1
// client (a 2025-11-25 session) and the SDK v2 client over picomcp's HTTP (2026-07-28, input rounds on
// both sides).
import { StreamableHTTPClientTransport, Client as V2Client } from "@modelcontextprotocol/client";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type NodeServer, serve } from "../src/http/node.js";
import { McpError, McpServer } from "../src/index.js";
import { createProxy, type ProxyServer } from "../src/proxy/index.js";
import { sdkClient } from "./sdk-bridge.js";

let remote: McpServer;
let remoteHttp: NodeServer;
let proxy: ProxyServer;
const state = { cancelled: 0 };
const closers: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  state.cancelled = 0;
  remote = new McpServer({ name: "pico-upstream", version: "3.0.0", onError: () => {} });
  remote.tool("echo", {
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: ({ text }: { text: string }) => text,
  });
  remote.tool("ask", {
    run: async (_a, ctx) => {
      const r = await ctx.elicit({
        message: "Your name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      });
      return `Hello, ${r.content?.name}!`;
    },
  });
  remote.tool("think", {
    run: async (_a, ctx) => {
      const r = await ctx.sample({
        messages: [{ role: "user", content: { type: "text", text: "2+2?" } }],
        maxTokens: 5,
      });
      return `model said ${(r.content as { text: string }).text}`;
    },
  });
  remote.tool("where", { run: async (_a, ctx) => (await ctx.roots()).map((r) => r.uri).join(",") });
  remote.tool("slow", {
    run: async (_a, ctx) => {
      ctx.progress(1, 2, "half");
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      state.cancelled++;
      return "cancelled";
    },
  });
  remote.tool("shout", {
    run: (_a, ctx) => {
      ctx.log("warning", "shouting", "upstream");
      return "shouted";
    },
  });
  remote.tool("fail", { run: () => ({ content: [{ type: "text", text: "nope" }], isError: true }) });
  remote.tool("broken", {
    run: () => {
      throw new McpError(-32602, "bad thing", { why: "test" });
    },
  });
  remote.resource("test://items/{id}", {
    mimeType: "text/plain",
    read: ({ id }) => `item ${id}`,
    complete: { id: (v) => ["1", "10", "2"].filter((x) => x.startsWith(v)) },
  });
  remote.resource("test://watched", { mimeType: "text/plain", read: () => "watched" });
  remote.prompt("review", { args: [{ name: "text", required: true }], get: ({ text }) => `Review: ${text}` });
  remoteHttp = await serve(remote, { port: 0, hostname: "127.0.0.1" });
  proxy = await createProxy({ url: remoteHttp.url }, { onError: () => {} });
});
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await proxy.shutdown();
  await remoteHttp.close();
});

async function v1Client(name = "Ann") {
  const asked: string[] = [];
  const client = await sdkClient(proxy, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked.push("elicit");
    return { action: "accept", content: { name } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    model: "m",
    role: "assistant",
    content: { type: "text", text: "4" },
  }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: `file:///home/${name}` }],
  }));
  closers.push(() => client.close());
  return { client, asked };
}

describe("a proxy of a picomcp server over Streamable HTTP (2026-07-28 upstream)", () => {
  it("speaks 2026-07-28 with the remote and mirrors every primitive", async () => {
    expect(proxy.upstreamProtocolVersion).toBe("2026-07-28");
    const { client } = await v1Client();
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "echo",
      "ask",
      "think",
      "where",
      "slow",
      "shout",
      "fail",
      "broken",
    ]);
    expect(await client.callTool({ name: "echo", arguments: { text: "hi" } })).toEqual({
      content: [{ type: "text", text: "hi" }],
    });
    expect(await client.callTool({ name: "fail" })).toEqual({
      content: [{ type: "text", text: "nope" }],
      isError: true,
    });
    await expect(client.callTool({ name: "broken" })).rejects.toMatchObject({
      code: -32602,
      data: { why: "test" },
    });
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "test://items/{id}",
    ]);
    expect((await client.readResource({ uri: "test://items/7" })).contents).toEqual([
      { uri: "test://items/7", mimeType: "text/plain", text: "item 7" },
    ]);
    const completion = await client.complete({
      ref: { type: "ref/resource", uri: "test://items/{id}" },
      argument: { name: "id", value: "1" },
    });
    expect(completion.completion.values).toEqual(["1", "10"]);
    expect((await client.getPrompt({ name: "review", arguments: { text: "x" } })).messages).toEqual([
      { role: "user", content: { type: "text", text: "Review: x" } },
    ]);
  });

  it("asks elicitation, sampling and roots of the very client that called, while another one's call is in flight", async () => {
    const ann = await v1Client("Ann");
    const bob = await v1Client("Bob");
    const abort = new AbortController();
    let inFlight!: () => void;
    const started = new Promise<void>((r) => {
      inFlight = r;
    });
    const slow = ann.client
      .callTool({ name: "slow" }, undefined, { signal: abort.signal, onprogress: () => inFlight() })
      .catch((e) => e);
    await started;
    expect(await bob.client.callTool({ name: "ask" })).toEqual({
      content: [{ type: "text", text: "Hello, Bob!" }],
    });
    expect(await bob.client.callTool({ name: "think" })).toEqual({
      content: [{ type: "text", text: "model said 4" }],
    });
    expect(await bob.client.callTool({ name: "where" })).toEqual({
      content: [{ type: "text", text: "file:///home/Bob" }],
    });
    expect(ann.asked).toEqual([]);
    expect(bob.asked).toEqual(["elicit"]);
    abort.abort();
    await slow;
    await expect.poll(() => state.cancelled).toBe(1);
  });

  it("passes the remote's log messages to the calling session, at that session's level", async () => {
    const ann = await v1Client("Ann");
    const bob = await v1Client("Bob");
    const logs: unknown[] = [];
    await ann.client.setLoggingLevel("info");
    await bob.client.setLoggingLevel("error");
    ann.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void logs.push(["Ann", n.params]),
    );
    bob.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void logs.push(["Bob", n.params]),
    );
    await bob.client.callTool({ name: "shout" }); // below Bob's level
    expect(await ann.client.callTool({ name: "shout" })).toEqual({
      content: [{ type: "text", text: "shouted" }],
    });
    await expect
      .poll(() => logs)
      .toEqual([["Ann", { level: "warning", logger: "upstream", data: "shouting" }]]);
  });

  it("refuses clearly when the calling client cannot answer", async () => {
    const client = await sdkClient(proxy, { capabilities: {} });
    closers.push(() => client.close());
    await expect(client.callTool({ name: "ask" })).rejects.toMatchObject({
      message: expect.stringContaining("does not support form elicitation"),
    });
  });

  it("subscribes the remote through a listen of its own, and passes its updates to the sessions that subscribed", async () => {
    const { client } = await v1Client();
    const { client: other } = await v1Client("Bob");
    const heard: string[] = [];
    client.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n) => void heard.push(`Ann ${n.params.uri}`),
    );
    other.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n) => void heard.push(`Bob ${n.params.uri}`),
    );
    await client.subscribeResource({ uri: "test://watched" });
    remote.resourceUpdated("test://watched");
    await expect.poll(() => heard).toEqual(["Ann test://watched"]);
  });

  it("re-announces the remote's list changes", async () => {
    const { client } = await v1Client();
    const changed: string[] = [];
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changed.push("prompts"));
    remote.prompt("later", { get: () => "later" });
    await expect.poll(() => changed).toEqual(["prompts"]);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["review", "later"]);
  });

  it("serves a 2026-07-28 client: the remote's input rounds become the proxy's", async () => {
    const http = await serve(proxy, { port: 0, hostname: "127.0.0.1" });
    closers.push(() => http.close());
    const client = new V2Client(
      { name: "v2", version: "1" },
      { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode: "auto" } },
    );
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { name: "Cy" },
    }));
    client.setRequestHandler("sampling/createMessage", async () => ({
      model: "m",
      role: "assistant",
      content: { type: "text", text: "5" },
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    closers.push(() => client.close());
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(await client.callTool({ name: "ask" })).toMatchObject({
      content: [{ type: "text", text: "Hello, Cy!" }],
    });
    expect(await client.callTool({ name: "think" })).toMatchObject({
      content: [{ type: "text", text: "model said 5" }],
    });
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toContain("echo");
    // its listen subscribes the remote, and the remote's update comes down the listen
    const heard: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (n) => void heard.push(n.params.uri));
    const listen = await client.listen({ resourceSubscriptions: ["test://watched"] });
    closers.push(() => listen.close());
    remote.resourceUpdated("test://watched");
    await expect.poll(() => heard).toEqual(["test://watched"]);
    // and the remote's list changes come down a listen too
    const changed: string[] = [];
    client.setNotificationHandler("notifications/tools/list_changed", () => void changed.push("tools"));
    const lists = await client.listen({ toolsListChanged: true });
    closers.push(() => lists.close());
    remote.tool("later", { run: () => "later" });
    await expect.poll(() => changed).toEqual(["tools"]);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("later");
  });
});
