// picomcp/otel off: a server never instrumented (or instrumented, then removed) calls nothing of
// OpenTelemetry on its request path, over stdio and HTTP in both eras, even when a client sends trace
// context. Every global the API has (tracer and meter providers, propagator, context manager) is a
// counting one here: a count above zero is work done for telemetry that nobody turned on.
import {
  type Context,
  type ContextManager,
  context,
  createNoopMeter,
  INVALID_SPAN_CONTEXT,
  metrics,
  propagation,
  ROOT_CONTEXT,
  type TextMapPropagator,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpHandler } from "../../src/http/index.js";
import { instrument } from "../../src/otel/index.js";
import { McpServer } from "../../src/server.js";
import { meta, V } from "../modern-helpers.js";
import { PipeTransport, until } from "../otel-helpers.js";

const calls: string[] = [];
const count = <T extends object>(name: string, target: T): T =>
  new Proxy(target, {
    get(t, key, receiver) {
      const value = Reflect.get(t, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(`${name}.${String(key)}`);
        return value.apply(t, args);
      };
    },
  });

const tracer = {
  startSpan: () => trace.wrapSpanContext(INVALID_SPAN_CONTEXT),
  startActiveSpan: () => {
    throw new Error("not used");
  },
} as Tracer;
const contextManager: ContextManager = {
  active: () => ROOT_CONTEXT,
  with: (_c, fn, thisArg, ...args) => fn.call(thisArg, ...args),
  bind: (_c, target) => target,
  enable() {
    return this;
  },
  disable() {
    return this;
  },
};
const propagator: TextMapPropagator = {
  inject() {},
  extract: (c: Context) => c,
  fields: () => ["traceparent", "tracestate", "baggage"],
};

beforeAll(() => {
  // the helpers registered an AsyncLocalStorage context manager: this file's counting one replaces it
  for (const api of [trace, metrics, propagation, context]) api.disable();
  expect([
    trace.setGlobalTracerProvider(count("tracerProvider", { getTracer: () => count("tracer", tracer) })),
    metrics.setGlobalMeterProvider(
      count("meterProvider", { getMeter: () => count("meter", createNoopMeter()) }),
    ),
    propagation.setGlobalPropagator(count("propagator", propagator)),
    context.setGlobalContextManager(count("contextManager", contextManager)),
  ]).toEqual([true, true, true, true]);
  calls.length = 0;
});

afterAll(() => {
  for (const api of [trace, metrics, propagation, context]) api.disable();
});

const TRACE = {
  traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  tracestate: "k=v",
  baggage: "a=b",
};

function make() {
  const server = new McpServer({ name: "t", version: "1.0.0" });
  server.tool("echo", { run: () => "echo" });
  return server;
}

/** What a client does over stdio (2025-11-25 session) and HTTP (2026-07-28), trace context in every `_meta`. */
async function traffic(server: McpServer): Promise<void> {
  const pipe = new PipeTransport(server);
  const seen: any[] = [];
  pipe.onmessage = (m) => void seen.push(m);
  await pipe.start();
  const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } };
  await pipe.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { ...init, _meta: TRACE } });
  await pipe.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await pipe.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", _meta: TRACE } });
  await pipe.send({ jsonrpc: "2.0", id: 2, method: "nope", params: { _meta: TRACE } });
  await until(() => seen.length === 3, "three stdio answers");
  expect(seen.map((m) => m.result?.content?.[0]?.text ?? m.error?.code ?? "initialized")).toEqual([
    "initialized",
    "echo",
    -32601,
  ]);
  await pipe.close();
  const handler = createHttpHandler(server);
  const res = await handler(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": V,
        "mcp-method": "tools/call",
        "mcp-name": "echo",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "echo", _meta: meta({}, TRACE) },
      }),
    }),
  );
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('"text":"echo"');
}

describe("telemetry off", () => {
  it("a server never instrumented calls no OpenTelemetry API on stdio or HTTP, trace context or not", async () => {
    const server = make();
    expect(server.observer).toBeUndefined();
    await traffic(server);
    expect(calls).toEqual([]);
  });

  it("once removed, an instrumented server calls none either (and while on, it did: the count works)", async () => {
    const server = make();
    const registration = instrument(server);
    calls.length = 0;
    await traffic(server);
    // on: a tracer's spans, a meter's records, the propagator reading the client's traceparent
    expect(calls).toContain("tracer.startSpan");
    expect(calls).toContain("propagator.extract");
    expect(calls).toContain("contextManager.active");
    registration.remove();
    expect(server.observer).toBeUndefined();
    calls.length = 0;
    await traffic(server);
    expect(calls).toEqual([]);
  });
});
