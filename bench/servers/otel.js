// The telemetry set-ups the bench compares (`--otel noop|sdk` on picomcp's server): `noop`, the API's
// own providers (no SDK registered); `sdk`, the real SDK as an operator runs it: a batch span
// processor and the OTLP/HTTP exporter posting to a collector (here a sink on 127.0.0.1 in the same
// process, so the export's CPU counts), and a meter provider aggregating every point.
import { createServer } from "node:http";

export async function instrumentFor(server, mode, dist) {
  const { instrument } = await import(`${dist}otel/index.js`);
  if (mode === "noop") return instrument(server);
  const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  const { MeterProvider, MetricReader } = await import("@opentelemetry/sdk-metrics");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
  const sink = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
  });
  await new Promise((r) => sink.listen(0, "127.0.0.1", r));
  sink.unref();
  const url = `http://127.0.0.1:${sink.address().port}/v1/traces`;
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  class Reader extends MetricReader {
    async onForceFlush() {}
    async onShutdown() {}
  }
  const meterProvider = new MeterProvider({ readers: [new Reader()] });
  return instrument(server, { tracerProvider, meterProvider, propagator: new W3CTraceContextPropagator() });
}
