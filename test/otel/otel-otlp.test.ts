// picomcp/otel through a real exporter: the SDK's batch processor and OTLP/HTTP exporter post the
// spans of a call to a receiver on 127.0.0.1 in this test, which decodes what arrived (JSON).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { expect, it } from "vitest";
import { instrument } from "../../src/otel/index.js";
import { McpServer } from "../../src/server.js";
import { rawPeer } from "../helpers.js";
import { propagator, until } from "../otel-helpers.js";

it("posts OTLP spans whose names, kinds, parents and attributes a collector decodes", async () => {
  const bodies: any[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      bodies.push({
        path: req.url,
        type: req.headers["content-type"],
        body: JSON.parse(Buffer.concat(chunks).toString()),
      });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as AddressInfo).port;
  const processor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces` }),
  );
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [processor] });
  const server = new McpServer({ name: "t", version: "1.0.0" });
  server.tool("echo", { run: () => "echo" });
  instrument(server, { tracerProvider, propagator });
  const peer = rawPeer(server);
  await peer.initialize();
  const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  await peer.send({
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "echo", _meta: { traceparent } },
  });
  await tracerProvider.forceFlush();
  await until(() => bodies.length > 0, "the export");
  receiver.close();
  await tracerProvider.shutdown();
  expect(bodies[0].path).toBe("/v1/traces");
  expect(bodies[0].type).toBe("application/json");
  const spans = bodies.flatMap((b) =>
    b.body.resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans)),
  );
  const scope = bodies[0].body.resourceSpans[0].scopeSpans[0].scope;
  expect(scope.name).toBe("picomcp");
  const call = spans.find((s: any) => s.name === "tools/call echo");
  const attributes = Object.fromEntries(call.attributes.map((a: any) => [a.key, a.value.stringValue]));
  expect({ kind: call.kind, traceId: call.traceId, parentSpanId: call.parentSpanId, attributes }).toEqual({
    kind: 2, // SPAN_KIND_SERVER
    traceId: "0af7651916cd43dd8448eb211c80319c",
    parentSpanId: "b7ad6b7169203331",
    attributes: {
      "mcp.method.name": "tools/call",
      "jsonrpc.request.id": "7",
      "mcp.protocol.version": "2025-11-25",
      "mcp.session.id": peer.connection.id,
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
    },
  });
  expect(spans.map((s: any) => s.name).sort()).toEqual([
    "initialize",
    "notifications/initialized",
    "tools/call echo",
  ]);
});
