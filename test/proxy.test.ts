// picomcp/proxy in front of the official SDK v1 server over Streamable HTTP: every primitive, filters and
// renames, progress, cancellation reaching the remote handler's signal, logging, elicitation and sampling
// asked of the downstream client, list changes, subscriptions, errors as they are. Downstream: the SDK v1
// client (2025-11-25 session) and the SDK v2 client over picomcp's HTTP (2026-07-28, auto).
import { StreamableHTTPClientTransport, Client as V2Client } from "@modelcontextprotocol/client";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serve } from "../src/http/node.js";
import { createProxy, type ProxyServer } from "../src/proxy/index.js";
import { serveV1Http } from "./fixtures/proxy-upstream-v1.js";
import { sdkClient } from "./sdk-bridge.js";

let upstream: Awaited<ReturnType<typeof serveV1Http>>;
let proxy: ProxyServer;
const closers: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  upstream = await serveV1Http();
  proxy = await createProxy(
    { url: upstream.url },
    {
      tools: { hide: ["crash"], rename: { echo: "say" } },
      resources: { hide: ["test://secret"] },
      onError: () => {},
    },
  );
});
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await proxy.shutdown();
  await upstream.close();
});

async function v1Client(name = "Ann", asked: string[] = []) {
  const client = await sdkClient(proxy, { capabilities: { elicitation: {}, sampling: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (r) => {
    expect(r.params.message).toBe("Your name?");
    asked.push(name);
    return { action: "accept", content: { name } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    model: "m",
    role: "assistant",
    content: { type: "text", text: "4" },
  }));
  closers.push(() => client.close());
  return client;
}

describe("a proxy of an SDK v1 server over Streamable HTTP", () => {
  it("answers with an error while the remote is gone, and opens a new session when it is back", async () => {
    const fast = await createProxy(
      { url: upstream.url },
      { reconnect: { initialDelayMs: 10, maxDelayMs: 50 }, onError: () => {} },
    );
    closers.push(() => fast.shutdown());
    const client = await sdkClient(fast);
    closers.push(() => client.close());
    expect(await client.callTool({ name: "echo", arguments: { text: "1" } })).toMatchObject({
      content: [{ text: "1" }],
    });
    const port = Number(new URL(upstream.url).port);
    await upstream.close(); // its sessions are forgotten with it
    const gone = await client.callTool({ name: "echo", arguments: { text: "2" } }).catch((e) => e);
    expect(gone).toMatchObject({ code: -32603 });
    expect(gone.message).toMatch(/The upstream server (failed|is unavailable)/);
    upstream = await serveV1Http(undefined, port);
    await expect
      .poll(
        async () =>
          (await client.callTool({ name: "echo", arguments: { text: "3" } }).catch(() => undefined))?.content,
      )
      .toEqual([{ type: "text", text: "3" }]);
  });

  it("mirrors the remote's primitives, hidden and renamed as asked", async () => {
    expect(proxy.info).toMatchObject({ name: "v1-upstream", version: "1.2.3" });
    const client = await v1Client();
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain("say");
    expect(names).not.toContain("echo");
    expect(names).not.toContain("crash");
    expect(tools.find((t) => t.name === "say")).toMatchObject({
      description: "echo",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });
    expect(await client.callTool({ name: "say", arguments: { text: "hi" } })).toEqual({
      content: [{ type: "text", text: "hi" }],
    });
    await expect(client.callTool({ name: "echo", arguments: { text: "hi" } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Unknown tool: echo"),
    });
    await expect(client.callTool({ name: "crash" })).rejects.toMatchObject({ code: -32602 });

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(["test://watched"]);
    expect((await client.readResource({ uri: "test://watched" })).contents).toEqual([
      { uri: "test://watched", mimeType: "text/plain", text: "watched" },
    ]);
    await expect(client.readResource({ uri: "test://secret" })).rejects.toMatchObject({ code: -32002 });
    const prompt = await client.getPrompt({ name: "review", arguments: { text: "x" } });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Review: x" } }]);
  });

  it("passes the remote's error results and protocol errors through as they are", async () => {
    const client = await v1Client();
    expect(await client.callTool({ name: "fail" })).toEqual({
      content: [{ type: "text", text: "nope" }],
      isError: true,
    });
    // the v1 server makes a tool's thrown error a result itself; a prompt's stays a protocol error
    expect(await client.callTool({ name: "broken" })).toEqual({
      content: [{ type: "text", text: "MCP error -32602: bad thing" }],
      isError: true,
    });
    await expect(client.getPrompt({ name: "broken" })).rejects.toMatchObject({
      code: -32602,
      data: { why: "test" },
      // the v1 server sends its McpError's message, prefixed already, and the v1 client prefixes it
      // again: the proxy passes the remote's message exactly as it is
      message: "MCP error -32602: MCP error -32602: bad thing",
    });
  });

  it("passes progress down and cancellation up to the remote handler's signal", async () => {
    const client = await v1Client();
    const seen: unknown[] = [];
    const abort = new AbortController();
    const call = client.callTool({ name: "slow" }, undefined, {
      signal: abort.signal,
      onprogress: (p) => {
        seen.push(p);
        abort.abort();
      },
    });
    await expect(call).rejects.toThrow();
    expect(seen).toEqual([{ progress: 1, total: 2, message: "half" }]);
    await expect.poll(() => upstream.state.cancelled).toBe(1);
  });

  it("asks the downstream client when the remote elicits or samples during a call, and passes its log messages down", async () => {
    const client = await v1Client();
    await client.setLoggingLevel("info");
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    expect(await client.callTool({ name: "ask" })).toEqual({
      content: [{ type: "text", text: "Hello, Ann!" }],
    });
    expect(await client.callTool({ name: "think" })).toEqual({
      content: [{ type: "text", text: "model said 4" }],
    });
    expect(await client.callTool({ name: "shout" })).toEqual({
      content: [{ type: "text", text: "shouted" }],
    });
    await expect.poll(() => logs).toEqual([{ level: "warning", logger: "upstream", data: "shouting" }]);
  });

  it("asks the client whose call the remote's request came on (its response stream), whoever else is calling", async () => {
    const asked: string[] = [];
    const ann = await v1Client("Ann", asked);
    const bob = await v1Client("Bob", asked);
    const logs: string[] = [];
    await ann.setLoggingLevel("debug");
    await bob.setLoggingLevel("debug");
    ann.setNotificationHandler(LoggingMessageNotificationSchema, () => void logs.push("Ann"));
    bob.setNotificationHandler(LoggingMessageNotificationSchema, () => void logs.push("Bob"));
    const abort = new AbortController();
    let inFlight!: () => void;
    const started = new Promise<void>((r) => {
      inFlight = r;
    });
    const slow = ann
      .callTool({ name: "slow" }, undefined, { signal: abort.signal, onprogress: () => inFlight() })
      .catch((e) => e);
    await started;
    const [b1, b2] = await Promise.all([bob.callTool({ name: "ask" }), bob.callTool({ name: "shout" })]);
    expect(b1).toEqual({ content: [{ type: "text", text: "Hello, Bob!" }] });
    expect(b2).toEqual({ content: [{ type: "text", text: "shouted" }] });
    expect(asked).toEqual(["Bob"]);
    await expect.poll(() => logs).toEqual(["Bob"]);
    abort.abort();
    await slow;
  });

  it("refuses clearly when the downstream client cannot answer what the remote asks", async () => {
    const client = await sdkClient(proxy, { capabilities: {} });
    closers.push(() => client.close());
    const result = await client.callTool({ name: "ask" }).catch((e) => e);
    expect(JSON.stringify(result)).toContain("does not support form elicitation");
  });

  it("re-lists on the remote's list_changed and tells its own clients; passes subscriptions up and updates down", async () => {
    const client = await v1Client();
    const changed: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed.push("tools"));
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    const other = await v1Client();
    await client.subscribeResource({ uri: "test://watched" });
    await client.callTool({ name: "add" });
    await expect.poll(() => changed).toEqual(["tools"]);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("added");
    expect(await other.callTool({ name: "added" })).toEqual({ content: [{ type: "text", text: "new" }] });
    await client.callTool({ name: "touch" });
    await expect.poll(() => updated).toEqual(["test://watched"]);
  });

  it("serves the SDK v2 client in the 2025 era over picomcp's HTTP", async () => {
    const http = await serve(proxy, { port: 0, hostname: "127.0.0.1" });
    closers.push(() => http.close());
    const client = new V2Client({ name: "v2", version: "1" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { name: "Di" },
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    closers.push(() => client.close());
    expect(client.getProtocolEra()).toBe("legacy");
    expect(await client.callTool({ name: "say", arguments: { text: "yo" } })).toMatchObject({
      content: [{ type: "text", text: "yo" }],
    });
    expect(await client.callTool({ name: "ask" })).toMatchObject({
      content: [{ type: "text", text: "Hello, Di!" }],
    });
  });

  it("serves a 2026-07-28 client (SDK v2, auto) over picomcp's HTTP, with elicitation through input rounds", async () => {
    const http = await serve(proxy, { port: 0, hostname: "127.0.0.1" });
    closers.push(() => http.close());
    const client = new V2Client(
      { name: "v2", version: "1" },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: "auto" } },
    );
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { name: "Bo" },
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    closers.push(() => client.close());
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("say");
    expect(await client.callTool({ name: "say", arguments: { text: "yo" } })).toMatchObject({
      content: [{ type: "text", text: "yo" }],
    });
    expect(await client.callTool({ name: "ask" })).toMatchObject({
      content: [{ type: "text", text: "Hello, Bo!" }],
    });
  });
});
