// The real OpenTelemetry SDK for the otel tests: an in-memory span exporter, a metric reader read on
// demand, W3C propagators, the AsyncLocalStorage context manager; and the SDK v2 client wired to a
// picomcp server over in-process stdio (serveStdio on two pipes) or a real HTTP socket.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { context, type Span, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { createHttpHandler } from "../src/http/index.js";
import { toNodeListener } from "../src/http/node.js";
import { instrument } from "../src/otel/index.js";
import type { McpServer } from "../src/server.js";
import { serveStdio } from "../src/stdio.js";

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** A reader whose `collect()` the test calls. */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export const propagator = new CompositePropagator({
  propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
});

/** A server instrumented with its own SDK: what it recorded is read back from `spans()` and `metrics()`. */
export function telemetry(server: McpServer, options: Parameters<typeof instrument>[1] = {}) {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const registration = instrument(server, { tracerProvider, meterProvider, propagator, ...options });
  const client = tracerProvider.getTracer("test-client");
  return {
    registration,
    exporter,
    spans: () => exporter.getFinishedSpans(),
    /** A span of the test's "client", as an MCP client's instrumentation would make one. */
    clientSpan: (name: string) => client.startSpan(name, { kind: SpanKind.CLIENT }),
    tracer: client,
    metrics: async () => (await reader.collect()).resourceMetrics,
  };
}

/** The `traceparent` of `span`. */
export function traceparent(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-01`;
}

/** The data points of metric `name`, as `{ attributes, value }` (a histogram's value is its count). */
export function points(metrics: ResourceMetrics, name: string) {
  for (const scope of metrics.scopeMetrics)
    for (const m of scope.metrics)
      if (m.descriptor.name === name)
        return m.dataPoints.map((p) => ({
          attributes: p.attributes,
          value: typeof p.value === "number" ? p.value : (p.value as { count: number }).count,
        }));
  return [];
}

/** A finished span in the shape the tests assert: name, kind, parent, links, attributes, status. */
export function shape(span: ReadableSpan, all: readonly ReadableSpan[]) {
  const parentId = span.parentSpanContext?.spanId;
  const parent = all.find((s) => s.spanContext().spanId === parentId);
  return {
    name: span.name,
    kind: SpanKind[span.kind],
    parent: parent ? parent.name : parentId === undefined ? null : `remote ${parentId}`,
    links: span.links.map(
      (l) => all.find((s) => s.spanContext().spanId === l.context.spanId)?.name ?? l.context.spanId,
    ),
    attributes: span.attributes,
    status: span.status.code === 2 ? { code: "ERROR", message: span.status.message } : undefined,
  };
}

/** Waits until `ok()` holds (the machine may be slow: a condition, never a fixed time). */
export async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The SDK v2 client's transport over picomcp's serveStdio, in this process, through two pipes. */
export class PipeTransport {
  onmessage?: (message: any) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  #buffer = "";
  readonly served;

  constructor(server: McpServer, options: { maxLineBytes?: number } = {}) {
    const pipes = { stdin: this.stdin as never, stdout: this.stdout as never, onEnd: () => {} };
    this.served = serveStdio(server, { ...pipes, ...options });
  }

  async start(): Promise<void> {
    this.stdout.setEncoding("utf8");
    this.stdout.on("data", (chunk: string) => {
      this.#buffer += chunk;
      for (let at = this.#buffer.indexOf("\n"); at >= 0; at = this.#buffer.indexOf("\n")) {
        const line = this.#buffer.slice(0, at);
        this.#buffer = this.#buffer.slice(at + 1);
        if (line.trim()) this.onmessage?.(JSON.parse(line));
      }
    });
  }

  async send(message: unknown): Promise<void> {
    this.stdin.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    this.stdin.end();
    this.onclose?.();
  }
}

/** An SDK v2 client: legacy (`initialize`, 2025-11-25) or pinned to 2026-07-28; it accepts every elicitation. */
export function sdkClient(era: "2025-11-25" | "2026-07-28", seen: any[] = []) {
  const client = new Client({ name: "otel-test", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
    ...(era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
  } as never);
  client.setRequestHandler("elicitation/create", async (request: any) => {
    seen.push(request.params);
    return { action: "accept", content: { name: "Ann" } };
  });
  return client;
}

/**
 * picomcp's node listener behind an HTTP server of the test's own that, like an instrumented Node
 * HTTP server, runs each request inside a SERVER span of its own ("POST"): the ambient span.
 */
export async function ambientHttp(server: McpServer, tracer: ReturnType<typeof trace.getTracer>) {
  const listener = toNodeListener(createHttpHandler(server), { path: "/mcp" });
  const ambient: Span[] = [];
  const http: Server = createServer((req, res) => {
    const span = tracer.startSpan(req.method ?? "HTTP", { kind: SpanKind.SERVER });
    ambient.push(span);
    res.on("close", () => span.end());
    context.with(trace.setSpan(context.active(), span), () => listener(req, res));
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  return {
    url,
    ambient,
    transport: () => new StreamableHTTPClientTransport(url),
    close: () => new Promise<void>((r) => http.close(() => r())),
  };
}

/**
 * The spans as a tree, one line each (`name (KIND) links: …`), children in the order they started:
 * from the spans whose parent is none of `spans` (the test client's, or the roots).
 */
export function tree(spans: readonly ReadableSpan[], all: readonly ReadableSpan[] = spans): string {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const nameOf = (id: string) => all.find((s) => s.spanContext().spanId === id)?.name ?? "?";
  const children = (parent: ReadableSpan | undefined) =>
    spans
      .filter((s) =>
        parent
          ? s.parentSpanContext?.spanId === parent.spanContext().spanId
          : !byId.has(s.parentSpanContext?.spanId ?? ""),
      )
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  const lines: string[] = [];
  const walk = (s: ReadableSpan, prefix: string, last: boolean, top: boolean) => {
    const links = s.links.length ? ` links: ${s.links.map((l) => nameOf(l.context.spanId)).join(", ")}` : "";
    lines.push(`${top ? "" : `${prefix}${last ? "└─ " : "├─ "}`}${s.name} (${SpanKind[s.kind]})${links}`);
    const kids = children(s);
    const indent = top ? "" : `${prefix}${last ? "   " : "│  "}`;
    for (const [i, k] of kids.entries()) walk(k, indent, i === kids.length - 1, false);
  };
  for (const root of children(undefined)) walk(root, "", true, true);
  return lines.join("\n");
}
