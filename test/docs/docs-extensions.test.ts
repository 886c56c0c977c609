// docs/extensions.md: each example server of the page, answered on the wire in raw JSON-RPC through its
// public seam (connect + handle) and picomcp/testing: what the page says each one does, exactly.
import type { AuthInfo, JsonRpcMessage, McpServer } from "picomcp";
import { connect } from "picomcp/testing";
import { describe, expect, it } from "vitest";
import { server as bulletins, post, readers } from "../../examples/docs/extensions-bulletins.js";
import { server as shop } from "../../examples/docs/extensions-correlation.js";
import { server as newsroom, publish } from "../../examples/docs/extensions-follow.js";
import { server as glossary } from "../../examples/docs/extensions-glossary.js";
import { server as notes } from "../../examples/docs/extensions-notes.js";
import { audit, server as small } from "../../examples/docs/extensions-preset.js";

const V = "2026-07-28";
const wire = (m: unknown) => JSON.parse(JSON.stringify(m));
const meta = (capabilities: object) => ({
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
});
const serverMeta = (name: string) => ({ "io.modelcontextprotocol/serverInfo": { name, version: "1.0.0" } });

/** One 2026-07-28 request on a connection of its own: the answer, and what its own stream carried. */
function request(
  server: McpServer,
  id: number,
  method: string,
  params: object,
  caps: object,
  auth?: AuthInfo,
) {
  const stream: unknown[] = [];
  const connection = server.connect({ send: () => {}, ...(auth ? { auth } : {}) });
  const message = { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta(caps) } };
  const answer = server
    .handle(message, connection, { send: (m: JsonRpcMessage) => void stream.push(wire(m)) })
    .then((a) => (a === undefined ? undefined : wire(a)));
  return { connection, stream, answer };
}

const GLOSSARY = { extensions: { "com.example/glossary": {} } };

describe("docs/extensions.md: a method family, advertised (extensions-glossary.ts)", () => {
  it("is declared at initialize and answers a session's client, declared or not", async () => {
    const client = await connect(glossary);
    expect(client.initializeResult.capabilities).toMatchObject({
      extensions: { "com.example/glossary": { terms: 2 } },
    });
    const text = JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "glossary/define",
      params: { term: "MCP" },
    });
    expect(await client.send(text)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: { term: "mcp", definition: "Model Context Protocol" },
    });
  });

  it("refuses a 2026-07-28 client that does not declare it (-32021), but for a method that opts out", async () => {
    expect(await request(glossary, 1, "glossary/define", { term: "mcp" }, {}).answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32021,
        message: "Missing required client capability: extensions",
        data: { requiredCapabilities: { extensions: { "com.example/glossary": {} } } },
      },
    });
    expect(await request(glossary, 2, "glossary/size", {}, {}).answer).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { resultType: "complete", terms: 2, _meta: serverMeta("glossary") },
    });
  });

  it("gives a declaring client its caching hint: public, or private for an answer that depends on the caller", async () => {
    expect(await request(glossary, 3, "glossary/define", { term: "sse" }, GLOSSARY).answer).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: {
        resultType: "complete",
        term: "sse",
        definition: "Server-Sent Events",
        ttlMs: 3_600_000,
        cacheScope: "public",
        _meta: serverMeta("glossary"),
      },
    });
    const staff = { subject: "alice", scopes: ["glossary:internal"] };
    const personal = await request(glossary, 4, "glossary/define", { term: "blue-team" }, GLOSSARY, staff)
      .answer;
    expect(personal.result).toMatchObject({ ttlMs: 3_600_000, cacheScope: "private" });
    expect(await request(glossary, 5, "glossary/define", { term: "blue-team" }, GLOSSARY).answer).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32602, message: "Unknown term: blue-team", data: { term: "blue-team" } },
    });
    expect((await request(glossary, 6, "glossary/define", {}, GLOSSARY).answer).error).toEqual({
      code: -32602,
      message: "glossary/define needs a term string",
    });
  });
});

describe("docs/extensions.md: per-session state and a client's notification (extensions-notes.ts)", () => {
  it("keeps each session's notes, clears them on the client's notification, and exists in sessions only", async () => {
    const a = await connect(notes);
    const b = await connect(notes);
    const send = (c: typeof a, id: number, method: string, params: object = {}) =>
      c.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    expect(await send(a, 1, "notes/add", { text: "buy milk" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { count: 1 },
    });
    expect(await send(b, 1, "notes/list")).toEqual({ jsonrpc: "2.0", id: 1, result: { notes: [] } });
    expect(await send(a, 2, "notes/list")).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { notes: ["buy milk"] },
    });
    await a.notify("notifications/notes/cleared");
    expect(await send(a, 3, "notes/list")).toEqual({ jsonrpc: "2.0", id: 3, result: { notes: [] } });
    expect(await send(a, 4, "notes/add", { text: 4 })).toEqual({
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32602, message: "notes/add needs a text string" },
    });
    expect(await request(notes, 5, "notes/list", {}, {}).answer).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32601, message: "Method not found: notes/list" },
    });
  });
});

describe("docs/extensions.md: a wrapper, a request slot and extendContext (extensions-correlation.ts)", () => {
  it("hands the tool its slot value and a context whose logs carry the id, and adds the id to the result", async () => {
    const client = await connect(shop);
    const call = JSON.stringify({
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "checkout" },
    });
    expect(await client.send(call)).toEqual({
      jsonrpc: "2.0",
      id: 9,
      result: {
        content: [{ type: "text", text: "Order placed (order-1)" }],
        _meta: { "com.example/correlation": "order-1" },
      },
    });
    expect(client.notifications).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: { id: "order-1", data: "charging the card" }, logger: "checkout" },
      },
    ]);
    // the next request has a value of its own
    expect(((await client.callTool("checkout")).content[0] as { text: string }).text).toBe(
      "Order placed (order-2)",
    );
  });
});

describe("docs/extensions.md: notifications on the request's stream, the change and sessionEnd hooks (extensions-follow.ts)", () => {
  it("streams each update to an open request, and answers it with its final result when the server ends it", async () => {
    const follow = request(newsroom, 1, "follow/updates", {}, {});
    await expect.poll(() => follow.stream.length).toBe(1);
    publish("picomcp ships a guide to extensions");
    newsroom.endGracefully(follow.connection);
    expect(await follow.answer).toBeUndefined();
    expect(follow.stream).toEqual([
      { jsonrpc: "2.0", method: "notifications/follow/started" },
      { jsonrpc: "2.0", method: "notifications/follow/updated", params: { uri: "news://headline" } },
      {
        jsonrpc: "2.0",
        id: 1,
        result: { resultType: "complete", updates: 1, _meta: serverMeta("newsroom") },
      },
    ]);
    // ended: it hears nothing more
    publish("later");
    expect(follow.stream).toHaveLength(3);
  });

  it("a cancelled one is never answered", async () => {
    const follow = request(newsroom, 2, "follow/updates", {}, {});
    await expect.poll(() => follow.stream.length).toBe(1);
    const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } };
    await newsroom.handle(cancel, follow.connection);
    expect(await follow.answer).toBeUndefined();
    expect(follow.stream).toHaveLength(1);
  });
});

describe("docs/extensions.md: the built-in list as a value, an observer (extensions-preset.ts)", () => {
  it("declares no tasks, answers tasks/* -32601, refuses a task tool by name, and the audit log sees every message", async () => {
    audit.length = 0;
    const client = await connect(small);
    expect(client.initializeResult.capabilities).toEqual({ logging: {}, tools: { listChanged: true } });
    expect(await client.send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tasks/list" }))).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32601, message: "Method not found: tasks/list" },
    });
    expect(() => small.tool("slow", { task: "optional", run: () => "later" })).toThrow(
      'server.tool("slow"): this server has no io.modelcontextprotocol/tasks; add it to new McpServer({ extensions }) (defaultExtensions has it)',
    );
    expect(audit).toEqual(["initialize", "notifications/initialized", "tasks/list"]);
  });
});

describe("docs/extensions.md: reaching sessions outside a request (extensions-bulletins.ts)", () => {
  it("posts to every open session that opted in, and to no other; sessionEnd reads the slot once per session", async () => {
    const reader = await connect(bulletins);
    const other = await connect(bulletins);
    const text = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "bulletins/subscribe" });
    expect(await reader.send(text)).toEqual({ jsonrpc: "2.0", id: 3, result: {} });
    expect(readers).toBe(1);
    const before = [reader.notifications.length, other.notifications.length];
    expect(post("Doors open at nine")).toBe(1);
    expect(reader.notifications.slice(before[0])).toEqual([
      { jsonrpc: "2.0", method: "notifications/bulletins/posted", params: { text: "Doors open at nine" } },
    ]);
    expect(other.notifications.slice(before[1])).toEqual([]);
    // the session ends gracefully, then the server closes: its hook runs once
    bulletins.endGracefully(reader.connection);
    expect(readers).toBe(0);
    bulletins.close();
    expect(readers).toBe(0);
    expect(post("Nobody hears this")).toBe(0);
  });
});
