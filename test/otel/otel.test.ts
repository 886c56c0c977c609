// picomcp/otel against the real OpenTelemetry SDK: the spans of real SDK v2 client sessions, in both
// eras, over stdio (serveStdio on pipes) and HTTP (a real socket behind an "instrumented" HTTP
// server), asserted by name, kind, parent, links, attributes and status.
import { afterEach, describe, expect, it } from "vitest";
import { McpServer } from "../../src/server.js";
import {
  ambientHttp,
  PipeTransport,
  sdkClient,
  shape,
  telemetry,
  traceparent,
  tree,
  until,
} from "../otel-helpers.js";

function fixture() {
  const server = new McpServer({ name: "otel", version: "1.0.0" });
  server.tool("echo", {
    input: { type: "object", properties: { text: { type: "string" } } },
    run: ({ text }: any) => String(text),
  });
  server.tool("broken", { run: () => ({ content: [{ type: "text", text: "no" }], isError: true }) });
  server.tool("greet", {
    run: async (_args, ctx) => {
      const answer = await ctx.elicit({
        message: "Your name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } },
      });
      return `Hello, ${(answer.content as { name: string }).name}!`;
    },
  });
  server.resource("test://items/{id}", { read: ({ id }) => `item ${id}` });
  return server;
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const id = (s: { spanContext(): { spanId: string } }) => s.spanContext().spanId;
const ANY = expect.any(String);

describe("spans over stdio", () => {
  it("2025-11-25: a SERVER span per message, parented by _meta's traceparent; an elicitation is a CLIENT span whose context its _meta carries", async () => {
    const server = fixture();
    const t = telemetry(server);
    const seen: any[] = [];
    const client = sdkClient("2025-11-25", seen);
    await client.connect(new PipeTransport(server) as never);
    closers.push(() => client.close());
    const caller = t.clientSpan("client call");
    const meta = { traceparent: traceparent(caller), baggage: "tenant=acme" };
    await client.callTool({ name: "echo", arguments: { text: "hi" }, _meta: meta });
    const greet = await client.callTool({ name: "greet", arguments: {}, _meta: meta });
    caller.end();
    expect(greet.content).toEqual([{ type: "text", text: "Hello, Ann!" }]);
    await client.callTool({ name: "broken", arguments: {} });
    await until(() => t.spans().some((s) => s.name === "tools/call broken"), "the last span");
    const all = t.spans();
    const session = all.find((s) => s.name === "initialize")!.attributes["mcp.session.id"];
    expect(session).toEqual(ANY);
    const pipe = {
      "mcp.protocol.version": "2025-11-25",
      "mcp.session.id": session,
      "network.transport": "pipe",
    };
    const tool = (name: string, rid: string) => ({
      ...pipe,
      "mcp.method.name": "tools/call",
      "jsonrpc.request.id": rid,
      "gen_ai.tool.name": name,
      "gen_ai.operation.name": "execute_tool",
    });
    expect(all.map((s) => shape(s, all))).toEqual([
      {
        name: "initialize",
        kind: "SERVER",
        parent: null,
        links: [],
        attributes: { ...pipe, "mcp.method.name": "initialize", "jsonrpc.request.id": "0" },
        status: undefined,
      },
      {
        name: "notifications/initialized",
        kind: "SERVER",
        parent: null,
        links: [],
        attributes: { ...pipe, "mcp.method.name": "notifications/initialized" },
        status: undefined,
      },
      {
        name: "tools/call echo",
        kind: "SERVER",
        parent: "client call",
        links: [],
        attributes: tool("echo", "1"),
        status: undefined,
      },
      {
        name: "elicitation/create",
        kind: "CLIENT",
        parent: "tools/call greet",
        links: [],
        attributes: { ...pipe, "mcp.method.name": "elicitation/create", "jsonrpc.request.id": ANY },
        status: undefined,
      },
      {
        name: "tools/call greet",
        kind: "SERVER",
        parent: "client call",
        links: [],
        attributes: tool("greet", "2"),
        status: undefined,
      },
      { name: "client call", kind: "CLIENT", parent: null, links: [], attributes: {}, status: undefined },
      {
        name: "tools/call broken",
        kind: "SERVER",
        parent: null,
        links: [],
        attributes: { ...tool("broken", "3"), "error.type": "tool_error" },
        status: { code: "ERROR", message: undefined },
      },
    ]);
    // one trace, and the elicitation the client received names its CLIENT span as the parent
    const elicit = all.find((s) => s.name === "elicitation/create")!;
    expect(new Set(all.filter((s) => s.parentSpanContext).map((s) => s.spanContext().traceId))).toEqual(
      new Set([caller.spanContext().traceId]),
    );
    expect(seen).toEqual([
      {
        _meta: { traceparent: `00-${caller.spanContext().traceId}-${id(elicit)}-01`, baggage: "tenant=acme" },
        mode: "form",
        message: "Your name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } },
      },
    ]);
  });

  it("2026-07-28: the revision comes from the request's _meta; a read names its URI", async () => {
    const server = fixture();
    const t = telemetry(server);
    const client = sdkClient("2026-07-28");
    await client.connect(new PipeTransport(server) as never);
    closers.push(() => client.close());
    const caller = t.clientSpan("client call");
    await client.readResource({ uri: "test://items/7", _meta: { traceparent: traceparent(caller) } });
    caller.end();
    await until(() => t.spans().some((s) => s.name === "resources/read"), "the read");
    const read = t.spans().find((s) => s.name === "resources/read")!;
    expect(shape(read, t.spans())).toEqual({
      name: "resources/read",
      kind: "SERVER",
      parent: "client call",
      links: [],
      attributes: {
        "mcp.method.name": "resources/read",
        "jsonrpc.request.id": ANY,
        "mcp.protocol.version": "2026-07-28",
        "network.transport": "pipe",
        "mcp.resource.uri": "test://items/7",
      },
      status: undefined,
    });
  });
});

describe("spans over HTTP", () => {
  it("2026-07-28: a tools/call that elicits over two rounds, each round linked to its ambient HTTP span", async () => {
    const server = fixture();
    const t = telemetry(server);
    const http = await ambientHttp(server, t.tracer);
    closers.push(() => http.close());
    const seen: any[] = [];
    const client = sdkClient("2026-07-28", seen);
    await client.connect(http.transport() as never);
    closers.push(() => client.close());
    const caller = t.clientSpan("tools/call greet");
    const greet = await client.callTool({
      name: "greet",
      arguments: {},
      _meta: { traceparent: traceparent(caller) },
    });
    caller.end();
    expect(greet.content).toEqual([{ type: "text", text: "Hello, Ann!" }]);
    await until(() => t.spans().filter((s) => s.name === "POST").length >= 3, "every POST");
    const all = t.spans();
    const mine = all.filter((s) => s.spanContext().traceId === caller.spanContext().traceId);
    // the tree docs/telemetry.md shows
    expect(tree(mine, all)).toBe(
      [
        "tools/call greet (CLIENT)",
        "├─ tools/call greet (SERVER) links: POST",
        "│  └─ elicitation/create (CLIENT)",
        "└─ tools/call greet (SERVER) links: POST",
      ].join("\n"),
    );
    const [round1, round2] = mine.filter((s) => s.kind === 1);
    const http11 = {
      "mcp.protocol.version": "2026-07-28",
      "network.transport": "tcp",
      "network.protocol.name": "http",
      "network.protocol.version": "1.1",
      "client.address": "127.0.0.1",
      "client.port": expect.any(Number),
    };
    for (const [round, rid] of [
      [round1!, "0"],
      [round2!, "1"],
    ] as const)
      expect(round.attributes).toEqual({
        ...http11,
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": rid,
        "gen_ai.tool.name": "greet",
        "gen_ai.operation.name": "execute_tool",
      });
    // each round's link is the POST that carried it, a span of another trace
    for (const round of [round1!, round2!]) {
      const post = http.ambient.find((p) => id(p) === round.links[0]!.context.spanId)!;
      expect(post.spanContext().traceId).not.toBe(caller.spanContext().traceId);
    }
    const elicit = mine.find((s) => s.name === "elicitation/create")!;
    expect(elicit.attributes).toEqual({
      "mcp.method.name": "elicitation/create",
      "mcp.protocol.version": "2026-07-28",
      "network.transport": "tcp",
      "network.protocol.name": "http",
    });
    expect(seen).toEqual([
      {
        _meta: { traceparent: `00-${caller.spanContext().traceId}-${id(elicit)}-01` },
        message: "Your name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } },
      },
    ]);
  });

  it("2025-11-25: a session over HTTP: mcp.session.id is the Mcp-Session-Id", async () => {
    const server = fixture();
    const t = telemetry(server);
    const http = await ambientHttp(server, t.tracer);
    closers.push(() => http.close());
    const client = sdkClient("2025-11-25");
    const transport = http.transport();
    await client.connect(transport as never);
    await client.callTool({ name: "echo", arguments: { text: "x" } });
    const sessionId = transport.sessionId;
    expect(sessionId).toEqual(ANY);
    await client.close();
    await until(() => t.spans().some((s) => s.name === "tools/call echo"), "the call");
    const call = t.spans().find((s) => s.name === "tools/call echo")!;
    expect(call.attributes).toMatchObject({
      "mcp.session.id": sessionId,
      "mcp.protocol.version": "2025-11-25",
      "network.transport": "tcp",
    });
    expect(call.links).toHaveLength(1);
  });
});
