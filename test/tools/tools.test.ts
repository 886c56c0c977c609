import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { link, McpError, McpServer } from "../../src/index.js";
import { connect } from "../../src/testing.js";
import { rawPeer } from "../helpers.js";
import { sdkClient } from "../sdk-bridge.js";

const S2020 = "https://json-schema.org/draft/2020-12/schema";

describe("tools/list", () => {
  it("lists the JSON Schema of zod, valibot and arktype inputs, and {type:object,properties:{}} without input", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("zod", { input: z.object({ query: z.string() }), run: ({ query }) => query });
    s.tool("valibot", {
      input: toStandardJsonSchema(v.object({ query: v.string() })),
      run: ({ query }) => query,
    });
    s.tool("arktype", { input: type({ query: "string" }), run: ({ query }) => query });
    s.tool("none", { run: () => "" });
    const client = await sdkClient(s);
    const { tools } = await client.listTools();
    const schema = {
      $schema: S2020,
      type: "object",
      properties: { query: { type: "string" } },
      required: ["query"],
    };
    expect(tools.map((t) => [t.name, t.inputSchema])).toEqual([
      ["zod", schema],
      ["valibot", schema],
      ["arktype", schema],
      ["none", { type: "object", properties: {} }],
    ]);
  });

  it("lists a plain 2020-12 JSON Schema exactly as given", async () => {
    const raw = {
      $schema: S2020,
      type: "object",
      $defs: {
        address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } },
      },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    };
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("json_schema_2020_12_tool", { description: "raw", input: raw, run: () => "ok" });
    const p = rawPeer(s);
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "tools/list" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { tools: [{ name: "json_schema_2020_12_tool", description: "raw", inputSchema: raw }] },
    });
    const bad = await p.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "json_schema_2020_12_tool", arguments: { address: { city: 5 } } },
    });
    expect(bad.result.isError).toBe(true);
    expect(bad.result.content[0].text).toContain("address.city");
  });

  it("paginates in registration order with opaque cursors; a bad cursor is -32602", async () => {
    const s = new McpServer({ name: "t", version: "1", pageSize: 2 });
    for (const n of ["c", "a", "b", "d", "e"]) s.tool(n, { run: () => n });
    const client = await connect(s);
    const p1 = await client.listTools();
    expect(p1.tools.map((t) => t.name)).toEqual(["c", "a"]);
    const p2 = await client.listTools({ cursor: p1.nextCursor });
    expect(p2.tools.map((t) => t.name)).toEqual(["b", "d"]);
    const p3 = await client.listTools({ cursor: p2.nextCursor });
    expect(p3).toEqual({ tools: [{ name: "e", inputSchema: { type: "object", properties: {} } }] });
    await expect(client.listTools({ cursor: "garbage" })).rejects.toEqual(
      new McpError(-32602, "Invalid cursor", { cursor: "garbage" }),
    );
  });

  it("checks names at registration", () => {
    const s = new McpServer({ name: "t", version: "1" });
    for (const bad of ["", "has space", "a,b", "x".repeat(129), "ümlaut"]) {
      expect(() => s.tool(bad, { run: () => "" })).toThrow(/Invalid tool name/);
    }
    s.tool("ok_name-1.2", { run: () => "" });
    expect(() => s.tool("ok_name-1.2", { run: () => "" })).toThrow(
      'A tool named "ok_name-1.2" is already registered',
    );
    expect(() => s.tool("norun", {} as never)).toThrow('Tool "norun" needs a run function');
  });

  it("shows title, annotations, icons, outputSchema and _meta only to revisions that have them", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("full", {
      title: "Full",
      description: "d",
      output: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      annotations: { readOnlyHint: true },
      icons: [{ src: "https://x/i.png" }],
      _meta: { "example.com/k": 1 },
      run: () => ({ n: 1 }),
    });
    const list = async (version: string) =>
      (await (await connect(s, { protocolVersion: version })).listTools()).tools[0];
    const base = { name: "full", description: "d", inputSchema: { type: "object", properties: {} } };
    const output = {
      outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    };
    expect(await list("2024-11-05")).toEqual(base);
    expect(await list("2025-03-26")).toEqual({ ...base, annotations: { readOnlyHint: true } });
    expect(await list("2025-06-18")).toEqual({
      ...base,
      ...output,
      title: "Full",
      annotations: { readOnlyHint: true },
      _meta: { "example.com/k": 1 },
    });
    expect(await list("2025-11-25")).toEqual({
      ...base,
      ...output,
      title: "Full",
      annotations: { readOnlyHint: true },
      icons: [{ src: "https://x/i.png" }],
      _meta: { "example.com/k": 1 },
    });
  });
});

describe("tools/call", () => {
  function server() {
    const s = new McpServer({ name: "t", version: "1", onError: () => {} });
    s.tool("search", {
      input: z.object({ query: z.string(), limit: z.number().int().min(1).optional() }),
      run: ({ query, limit }) => `${query}:${limit ?? "all"}`,
    });
    s.tool("args", { run: (args) => JSON.stringify(args) });
    s.tool("block", { run: () => ({ type: "image", data: "AAAA", mimeType: "image/png" }) });
    s.tool("blocks", { run: () => [{ type: "text", text: "a" }, link("res://x", "X")] });
    s.tool("whole", {
      run: () => ({ content: [{ type: "text", text: "w" }], isError: false, _meta: { k: 1 } }),
    });
    s.tool("nothing", { run: () => undefined });
    s.tool("object", { run: () => ({ a: 1 }) });
    s.tool("throws", {
      run: () => {
        throw new Error("disk full");
      },
    });
    s.tool("protocol", {
      run: () => {
        throw new McpError(-32000, "Nope", { x: 1 });
      },
    });
    s.tool("structured", {
      output: z.object({ total: z.number() }),
      run: () => ({ total: 3 }),
    });
    s.tool("bad_output", { output: z.object({ total: z.number() }), run: () => ({ total: "3" }) as never });
    return s;
  }

  it("validates arguments before run, and names the failing field in an isError result", async () => {
    const client = await connect(server());
    expect(await client.callTool("search", { query: "x", limit: 2 })).toEqual({
      content: [{ type: "text", text: "x:2" }],
    });
    const bad = await client.callTool("search", { query: 5, limit: 0 });
    expect(bad.isError).toBe(true);
    expect(bad.content).toHaveLength(1);
    const text = (bad.content[0] as { text: string }).text;
    expect(text).toMatch(/^Invalid arguments for tool search: /);
    expect(text).toContain("query");
    expect(text).toContain("limit");
  });

  it("treats missing arguments as {}", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "args" } })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "{}" }] },
    });
  });

  it("answers an unknown tool, a missing name and non-object arguments with -32602", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "nope" } })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "Unknown tool: nope", data: { name: "nope" } },
    });
    expect(await p.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: {} })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32602, message: "tools/call needs a string name" },
    });
    expect(
      await p.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "args", arguments: [1] } }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32602, message: "tools/call arguments must be an object" },
    });
  });

  it("turns each kind of return value into a result", async () => {
    const client = await connect(server());
    expect(await client.callTool("block")).toEqual({
      content: [{ type: "image", data: "AAAA", mimeType: "image/png" }],
    });
    expect(await client.callTool("blocks")).toEqual({
      content: [
        { type: "text", text: "a" },
        { type: "resource_link", uri: "res://x", name: "X" },
      ],
    });
    expect(await client.callTool("whole")).toEqual({
      content: [{ type: "text", text: "w" }],
      isError: false,
      _meta: { k: 1 },
    });
    expect(await client.callTool("nothing")).toEqual({ content: [] });
    expect(await client.callTool("object")).toEqual({ content: [{ type: "text", text: '{"a":1}' }] });
  });

  it("reports a thrown Error as isError with its message, and a thrown McpError as a protocol error", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "throws" } })).toEqual(
      {
        jsonrpc: "2.0",
        id: 1,
        result: { content: [{ type: "text", text: "disk full" }], isError: true },
      },
    );
    expect(
      await p.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "protocol" } }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32000, message: "Nope", data: { x: 1 } },
    });
  });

  it("sends a validated output as structuredContent plus its JSON text", async () => {
    const client = await sdkClient(server());
    expect(await client.callTool({ name: "structured", arguments: {} })).toEqual({
      content: [{ type: "text", text: '{"total":3}' }],
      structuredContent: { total: 3 },
    });
    const bad = await connect(server());
    const r = await bad.callTool("bad_output");
    expect(r.isError).toBe(true);
    expect((r.content[0] as { text: string }).text).toContain("total");
  });

  it("gives each revision only the content it knows", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("mixed", {
      run: () => [
        { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
        link("reports://q3", "Q3 report", { title: "Q3", _meta: { a: 1 } }),
        {
          type: "text",
          text: "t",
          annotations: { priority: 1, lastModified: "2025-01-01T00:00:00Z" },
          _meta: { b: 2 },
        },
      ],
    });
    s.tool("structured", { output: { type: "object", properties: {} }, run: () => ({}) });
    const call = async (version: string, name = "mixed") =>
      (await connect(s, { protocolVersion: version })).callTool(name);
    expect(await call("2024-11-05")).toEqual({
      content: [
        { type: "text", text: "[audio content (audio/wav) not shown: this protocol revision has no audio]" },
        { type: "text", text: 'Resource "Q3": reports://q3' },
        { type: "text", text: "t", annotations: { priority: 1 } },
      ],
    });
    expect(await call("2025-03-26")).toEqual({
      content: [
        { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
        { type: "text", text: 'Resource "Q3": reports://q3' },
        { type: "text", text: "t", annotations: { priority: 1 } },
      ],
    });
    expect(await call("2025-06-18")).toEqual({
      content: [
        { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
        { type: "resource_link", uri: "reports://q3", name: "Q3 report", title: "Q3", _meta: { a: 1 } },
        {
          type: "text",
          text: "t",
          annotations: { priority: 1, lastModified: "2025-01-01T00:00:00Z" },
          _meta: { b: 2 },
        },
      ],
    });
    expect(await call("2025-03-26", "structured")).toEqual({ content: [{ type: "text", text: "{}" }] });
    expect(await call("2025-06-18", "structured")).toEqual({
      content: [{ type: "text", text: "{}" }],
      structuredContent: {},
    });
  });

  it("never crashes on junk results and always answers once", async () => {
    const s = new McpServer({ name: "t", version: "1", onError: () => {} });
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    const junk: [string, () => unknown][] = [
      ["undef", () => undefined],
      ["fn", () => () => 1],
      ["sym", () => Symbol("x")],
      ["cyclic", () => cyclic],
      ["bigint", () => 10n],
      ["badblock", () => ({ content: [{ type: "text" }] })],
      ["rejects", () => Promise.reject("a string")],
      [
        "nullthrow",
        () => {
          throw null;
        },
      ],
    ];
    for (const [name, run] of junk) s.tool(name, { run });
    const client = await connect(s);
    for (const [name] of junk) {
      const r = await client.callTool(name);
      expect(Array.isArray(r.content), name).toBe(true);
      if (name !== "undef") expect(r.isError, name).toBe(true);
    }
  });
});
