// picomcp/otel: task spans and their links, the metrics (operation and session durations, sessions,
// listen streams, refusals, tasks by status) with bounded attributes, protocol errors, turning it off,
// and malformed trace headers (fuzzed), against the real SDK.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createHttpHandler } from "../../src/http/index.js";
import { METRICS } from "../../src/otel/index.js";
import { McpServer } from "../../src/server.js";
import { rawPeer } from "../helpers.js";
import { meta, modernPeer } from "../modern-helpers.js";
import { PipeTransport, points, shape, telemetry, until } from "../otel-helpers.js";

const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };

function taskServer() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const server = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
  server.tool("job", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      await gate;
      return "done";
    },
  });
  server.tool("echo", { run: () => "echo" });
  return { server, release };
}

describe("tasks", () => {
  it("2026-07-28: a task span linked to its tools/call, tasks/get linked to it; the task metrics follow its status", async () => {
    const { server, release } = taskServer();
    const t = telemetry(server);
    const peer = modernPeer(server);
    const { answer } = await peer.request("tools/call", { name: "job", arguments: {} }, TASKS);
    expect(answer.result.resultType).toBe("task");
    const taskId = answer.result.taskId;
    expect(points(await t.metrics(), METRICS.tasks)).toEqual([
      { attributes: { "gen_ai.tool.name": "job", "mcp.task.status": "working" }, value: 1 },
    ]);
    await peer.request("tasks/get", { taskId }, TASKS);
    release();
    await until(() => t.spans().some((s) => s.name === "task job"), "the task's end");
    const all = t.spans();
    const task = all.find((s) => s.name === "task job")!;
    expect(shape(task, all)).toEqual({
      name: "task job",
      kind: "INTERNAL",
      parent: null,
      links: ["tools/call job"],
      attributes: {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "job",
        "mcp.task.id": taskId,
        "mcp.task.status": "completed",
      },
      status: undefined,
    });
    expect(shape(all.find((s) => s.name === "tasks/get")!, all).links).toEqual(["task job"]);
    const m = await t.metrics();
    expect(points(m, METRICS.tasks)).toEqual([
      { attributes: { "gen_ai.tool.name": "job", "mcp.task.status": "working" }, value: 0 },
    ]);
    expect(points(m, METRICS.tasksEnded)).toEqual([
      { attributes: { "gen_ai.tool.name": "job", "mcp.task.status": "completed" }, value: 1 },
    ]);
  });
});

describe("metrics", () => {
  it("mcp.server.operation.duration: one point set per method and outcome, no made-up names", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.tool("echo", { run: () => "echo" });
    const t = telemetry(server);
    const peer = rawPeer(server);
    await peer.initialize();
    await peer.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo" } });
    await peer.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "nope-1" } });
    await peer.send({ jsonrpc: "2.0", id: 3, method: "made/up" });
    await peer.send({ jsonrpc: "2.0", method: "notifications/made-up" });
    const ops = points(await t.metrics(), METRICS.operationDuration);
    const common = { "mcp.protocol.version": "2025-11-25" };
    expect(ops).toEqual([
      { attributes: { ...common, "mcp.method.name": "initialize" }, value: 1 },
      { attributes: { ...common, "mcp.method.name": "notifications/initialized" }, value: 1 },
      {
        attributes: {
          ...common,
          "mcp.method.name": "tools/call",
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "echo",
        },
        value: 1,
      },
      {
        attributes: {
          ...common,
          "mcp.method.name": "tools/call",
          "gen_ai.operation.name": "execute_tool",
          "error.type": "-32602",
          "rpc.response.status_code": "-32602",
        },
        value: 1,
      },
      {
        attributes: {
          ...common,
          "mcp.method.name": "_OTHER",
          "error.type": "-32601",
          "rpc.response.status_code": "-32601",
        },
        value: 1,
      },
      { attributes: { ...common, "mcp.method.name": "_OTHER" }, value: 1 },
    ]);
    const unknown = t.spans().find((s) => s.name === "made/up")!;
    expect(shape(unknown, t.spans()).status).toEqual({ code: "ERROR", message: "Method not found: made/up" });
  });

  it("sessions: open, then closed with their duration", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    const t = telemetry(server);
    const pipe = new PipeTransport(server);
    await pipe.start();
    const init = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {} },
    };
    await pipe.send(init);
    await until(() => t.spans().some((s) => s.name === "initialize"), "initialize");
    const attributes = { "mcp.protocol.version": "2025-06-18", "network.transport": "pipe" };
    expect(points(await t.metrics(), METRICS.sessions)).toEqual([{ attributes, value: 1 }]);
    pipe.stdin.end();
    await pipe.served.closed;
    const m = await t.metrics();
    expect(points(m, METRICS.sessions)).toEqual([{ attributes, value: 0 }]);
    expect(points(m, METRICS.sessionDuration)).toEqual([{ attributes, value: 1 }]);
  });

  it("refusals at a limit, by reason: HTTP 413, stdio's long line", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    const t = telemetry(server);
    const handler = createHttpHandler(server, { maxBodyBytes: 10 });
    const res = await handler(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      }),
    );
    expect(res.status).toBe(413);
    const pipe = new PipeTransport(server, { maxLineBytes: 16 });
    await pipe.start();
    const lines: string[] = [];
    pipe.onmessage = (m) => void lines.push(m);
    await pipe.send({ jsonrpc: "2.0", id: 1, method: "ping", params: { padding: "x".repeat(32) } });
    await until(() => lines.length === 1, "the refusal");
    expect(points(await t.metrics(), METRICS.refused)).toEqual([
      { attributes: { "error.type": "payload_too_large", "network.transport": "tcp" }, value: 1 },
      { attributes: { "error.type": "line_too_long", "network.transport": "pipe" }, value: 1 },
    ]);
    pipe.stdin.end();
  });

  it("subscriptions/listen streams open now", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.tool("echo", { run: () => "echo" });
    const t = telemetry(server);
    const peer = modernPeer(server);
    const abort = new AbortController();
    const listen = peer.raw(
      {
        jsonrpc: "2.0",
        id: 9,
        method: "subscriptions/listen",
        params: { _meta: meta(), notifications: { toolsListChanged: true } },
      },
      { signal: abort.signal },
    );
    const v = { "mcp.protocol.version": "2026-07-28" };
    await expect
      .poll(async () => points(await t.metrics(), METRICS.listens))
      .toEqual([{ attributes: v, value: 1 }]);
    abort.abort();
    await listen;
    expect(points(await t.metrics(), METRICS.listens)).toEqual([{ attributes: v, value: 0 }]);
  });
});

describe("switched off", () => {
  it("records nothing once removed, and the wire is the same as never instrumented", async () => {
    const make = () => {
      const s = new McpServer({ name: "t", version: "1.0.0" });
      s.tool("echo", { run: () => "echo" });
      return s;
    };
    const plain = rawPeer(make());
    const server = make();
    const t = telemetry(server);
    t.registration.remove();
    const peer = rawPeer(server);
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo" } };
    expect([await peer.initialize(), await peer.send(call)]).toEqual([
      await plain.initialize(),
      await plain.send(call),
    ]);
    expect(t.spans()).toEqual([]);
  });
});

describe("malformed trace context", () => {
  it("is ignored: the answer is unchanged and the span starts a trace of its own (fuzzed)", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.tool("echo", { run: () => "echo" });
    const t = telemetry(server);
    const peer = modernPeer(server);
    const value = fc.oneof(
      fc.string(),
      fc.string({ unit: "binary", maxLength: 80 }),
      fc.constantFrom(
        "00-",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "ff-" + "a".repeat(32) + "-" + "b".repeat(16) + "-01",
      ),
      fc.constantFrom("00-00000000000000000000000000000000-b7ad6b7169203331-01", "x".repeat(20_000)),
      fc.anything(),
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({ traceparent: value, tracestate: value, baggage: value }, { requiredKeys: [] }),
        async (headers) => {
          t.exporter.reset();
          const id = ++n;
          const params = { name: "echo", _meta: meta({}, headers) };
          const { answer } = await peer.raw({ jsonrpc: "2.0", id, method: "tools/call", params });
          expect(answer).toEqual({
            jsonrpc: "2.0",
            id,
            result: {
              content: [{ type: "text", text: "echo" }],
              resultType: "complete",
              _meta: { "io.modelcontextprotocol/serverInfo": { name: "t", version: "1.0.0" } },
            },
          });
          const span = t.spans().find((s) => s.name === "tools/call echo")!;
          const tp = headers.traceparent;
          const valid =
            typeof tp === "string" &&
            /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(tp) &&
            !/^00-0{32}-/.test(tp) &&
            !/-0{16}-/.test(tp);
          if (valid) expect(span.parentSpanContext?.spanId).toBe(tp.slice(36, 52));
          else expect(span.parentSpanContext).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });
});
