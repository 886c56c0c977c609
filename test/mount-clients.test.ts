// server.mount with the official clients: SDK v1 in a 2025-11-25 session, SDK v2 pinned to 2026-07-28,
// each over an in-process bridge that carries every message as JSON text.
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ElicitRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { McpServer } from "../src/index.js";
import { BridgeTransport } from "./sdk-bridge.js";

const poll = <T>(fn: () => T) => expect.poll(fn, { timeout: 15_000 });
const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c.close();
});

/** A parent with a child mounted under "notes": the child asks the client, reports progress, logs. */
function servers() {
  const errors: string[] = [];
  const child = new McpServer({
    name: "notes",
    version: "1.0.0",
    onError: (e) => void errors.push(String(e)),
  });
  child.tool("save", {
    description: "Saves a note, after asking for its title",
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: async ({ text }, ctx) => {
      ctx.progress(1, 2, "asking");
      const r = await ctx.elicit(
        { message: "Title?", requestedSchema: { type: "object", properties: { title: { type: "string" } } } },
        { key: "title" },
      );
      ctx.progress(2, 2, "saved");
      return `Saved "${r.content?.title}": ${text}`;
    },
  });
  child.tool("fail", {
    run: () => {
      throw new Error("no space left");
    },
  });
  child.prompt("summarize", {
    args: [{ name: "topic", required: true }],
    complete: { topic: (v) => ["cats", "cars"].filter((t) => t.startsWith(v)) },
    get: ({ topic }) => `Summarize the notes on ${topic}`,
  });
  child.resource("notes://latest", { mimeType: "text/plain", read: () => "buy milk" });
  child.resource("notes://by-id/{id}", {
    complete: { id: (v) => ["1", "12"].filter((i) => i.startsWith(v)) },
    read: ({ id }) => `note ${id}`,
  });
  const parent = new McpServer({ name: "main", version: "1.0.0" });
  parent.tool("ping", { run: () => "pong" });
  const mount = parent.mount("notes", child);
  return { parent, child, mount, errors };
}

async function v1(server: McpServer) {
  const client = new ClientV1({ name: "v1", version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: "accept",
    content: { title: "Todo" },
  }));
  await client.connect(new BridgeTransport(server, "2025-11-25"));
  closing.push(client);
  return client;
}

async function v2(server: McpServer) {
  const client = new ClientV2(
    { name: "v2", version: "2" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("elicitation/create", async () => ({
    action: "accept",
    content: { title: "Plan" },
  }));
  await client.connect(new BridgeTransport(server) as never);
  closing.push(client);
  return client;
}

describe("mount with SDK v1 (2025-11-25)", () => {
  it("lists, calls, reads, gets and completes through the parent", async () => {
    const { parent, errors } = servers();
    const c = await v1(parent);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(["ping", "notes_save", "notes_fail"]);
    const progress: unknown[] = [];
    const saved = await c.callTool({ name: "notes_save", arguments: { text: "milk" } }, undefined, {
      onprogress: (p) => void progress.push(p),
    });
    expect(saved.content).toEqual([{ type: "text", text: 'Saved "Todo": milk' }]);
    expect(progress).toEqual([
      { progress: 1, total: 2, message: "asking" },
      { progress: 2, total: 2, message: "saved" },
    ]);
    expect(await c.callTool({ name: "notes_fail", arguments: {} })).toEqual({
      content: [{ type: "text", text: "no space left" }],
      isError: true,
    });
    expect(errors).toEqual(["Error: no space left"]);
    expect((await c.listResources()).resources).toEqual([
      { uri: "notes://latest", name: "notes://latest", mimeType: "text/plain" },
    ]);
    expect((await c.listResourceTemplates()).resourceTemplates).toEqual([
      { uriTemplate: "notes://by-id/{id}", name: "notes://by-id/{id}" },
    ]);
    expect((await c.readResource({ uri: "notes://by-id/7" })).contents).toEqual([
      { uri: "notes://by-id/7", mimeType: "text/plain", text: "note 7" },
    ]);
    expect((await c.listPrompts()).prompts.map((p) => p.name)).toEqual(["notes_summarize"]);
    expect((await c.getPrompt({ name: "notes_summarize", arguments: { topic: "cats" } })).messages).toEqual([
      { role: "user", content: { type: "text", text: "Summarize the notes on cats" } },
    ]);
    const byPrompt = await c.complete({
      ref: { type: "ref/prompt", name: "notes_summarize" },
      argument: { name: "topic", value: "ca" },
    });
    expect(byPrompt.completion.values).toEqual(["cats", "cars"]);
    const byTemplate = await c.complete({
      ref: { type: "ref/resource", uri: "notes://by-id/{id}" },
      argument: { name: "id", value: "1" },
    });
    expect(byTemplate.completion.values).toEqual(["1", "12"]);
  });

  it("hears list changes of registrations and removals in the child, and of the unmount", async () => {
    const { parent, child, mount } = servers();
    const c = await v1(parent);
    const heard: string[] = [];
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.push("tools"));
    c.setNotificationHandler(PromptListChangedNotificationSchema, () => void heard.push("prompts"));
    const later = child.tool("archive", { run: () => "archived" });
    await poll(() => heard).toEqual(["tools"]);
    expect((await c.callTool({ name: "notes_archive", arguments: {} })).content).toEqual([
      { type: "text", text: "archived" },
    ]);
    later.remove();
    await poll(() => heard).toEqual(["tools", "tools"]);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(["ping", "notes_save", "notes_fail"]);
    mount.remove();
    await poll(() => [...heard].sort()).toEqual(["prompts", "tools", "tools", "tools"]);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(["ping"]);
  });

  it("gets updates of a mounted resource it subscribed to", async () => {
    const { parent, child } = servers();
    const c = await v1(parent);
    const updated: string[] = [];
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await c.subscribeResource({ uri: "notes://latest" });
    child.resourceUpdated("notes://latest");
    await poll(() => updated).toEqual(["notes://latest"]);
  });
});

describe("mount with SDK v2 pinned to 2026-07-28", () => {
  it("lists, calls (with an input round and progress), reads, gets and completes through the parent", async () => {
    const { parent } = servers();
    const c = await v2(parent);
    expect(c.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(["ping", "notes_save", "notes_fail"]);
    const progress: unknown[] = [];
    const saved = await c.callTool(
      { name: "notes_save", arguments: { text: "bread" } },
      { onprogress: (p) => void progress.push(p) },
    );
    expect(saved.content).toEqual([{ type: "text", text: 'Saved "Plan": bread' }]);
    // the round that asked and the round that finished each report their own step (the client's own,
    // without a total, say it is fulfilling the input)
    expect(progress.filter((p) => (p as { total?: number }).total !== undefined)).toEqual([
      { progress: 1, total: 2, message: "asking" },
      { progress: 1, total: 2, message: "asking" },
      { progress: 2, total: 2, message: "saved" },
    ]);
    expect(await c.callTool({ name: "notes_fail", arguments: {} })).toMatchObject({
      content: [{ type: "text", text: "no space left" }],
      isError: true,
    });
    expect((await c.readResource({ uri: "notes://latest" })).contents).toEqual([
      { uri: "notes://latest", mimeType: "text/plain", text: "buy milk" },
    ]);
    expect((await c.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "notes://by-id/{id}",
    ]);
    expect((await c.getPrompt({ name: "notes_summarize", arguments: { topic: "cars" } })).messages).toEqual([
      { role: "user", content: { type: "text", text: "Summarize the notes on cars" } },
    ]);
    const done = await c.complete({
      ref: { type: "ref/resource", uri: "notes://by-id/{id}" },
      argument: { name: "id", value: "12" },
    });
    expect(done.completion.values).toEqual(["12"]);
  });

  it("hears list changes and resource updates on its listen", async () => {
    const { parent, child } = servers();
    const c = await v2(parent);
    const heard: string[] = [];
    c.setNotificationHandler("notifications/tools/list_changed", () => void heard.push("tools"));
    c.setNotificationHandler("notifications/resources/list_changed", () => void heard.push("resources"));
    c.setNotificationHandler("notifications/resources/updated", (n) => void heard.push(n.params.uri));
    const sub = await c.listen({
      toolsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ["notes://latest"],
    });
    child.tool("archive", { run: () => "archived" });
    await poll(() => heard).toEqual(["tools"]);
    child.resourceUpdated("notes://latest");
    await poll(() => heard).toEqual(["tools", "notes://latest"]);
    const doc = child.resource("notes://pinned", { read: () => "pinned" });
    await poll(() => heard).toEqual(["tools", "notes://latest", "resources"]);
    expect((await c.readResource({ uri: "notes://pinned" })).contents).toEqual([
      { uri: "notes://pinned", mimeType: "text/plain", text: "pinned" },
    ]);
    doc.remove();
    await poll(() => heard).toEqual(["tools", "notes://latest", "resources", "resources"]);
    await sub.close();
  });
});
