// The telemetry set-ups the bench compares (`--otel <mode>` on picomcp's server):
//   noop         the API's own providers (no SDK registered): picomcp/otel's own work alone
//   sdk          the real SDK as an operator runs it: a batch span processor and the OTLP/HTTP (JSON)
//                exporter posting to a collector, every span sampled
//   sdk-sampled  the same with ParentBased(TraceIdRatioBased(0.1)): a tenth of the traces recorded
//   sdk-drop     every span made and batched, then dropped by the exporter (the span cost without
//                the export's serialization and HTTP)
// The collector is a sink in a process of its own (as a collector is), so that what the server pays
// is what a server pays: serializing and posting. The meter provider aggregates every point.
import { spawn } from "node:child_process";

export const MODES = ["noop", "sdk", "sdk-sampled", "sdk-drop"];

export async function instrumentFor(server, mode, dist) {
  if (!MODES.includes(mode)) throw new Error(`--otel ${mode}: one of ${MODES.join(", ")}`);
  const { instrument } = await import(`${dist}otel/index.js`);
  if (mode === "noop") return { registration: instrument(server) };
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
    await import("@opentelemetry/sdk-trace-base");
  const { MeterProvider, MetricReader } = await import("@opentelemetry/sdk-metrics");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
  let exporter;
  if (mode === "sdk-drop") {
    exporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
  } else {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    exporter = new OTLPTraceExporter({ url: await sink() });
  }
  const processor = new BatchSpanProcessor(exporter);
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [processor],
    ...(mode === "sdk-sampled"
      ? { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) }) }
      : {}),
  });
  class Reader extends MetricReader {
    async onForceFlush() {}
    async onShutdown() {}
  }
  const meterProvider = new MeterProvider({ readers: [new Reader()] });
  const registration = instrument(server, {
    tracerProvider,
    meterProvider,
    propagator: new W3CTraceContextPropagator(),
  });
  // spans the batch processor's full queue refused (the SDK's own count): a bench that drops them measures less
  return { registration, dropped: () => processor._droppedSpansCount ?? 0 };
}

const SINK = `
import { createServer } from "node:http";
const s = createServer((req, res) => { req.resume(); req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}")); });
s.listen(0, "127.0.0.1", () => process.stdout.write("PORT " + s.address().port + "\\n"));
process.stdin.on("end", () => process.exit(0)).resume();
`;

/** A collector that reads and drops what it gets, in a child that ends with this process's end. */
async function sink() {
  const child = spawn(process.execPath, ["--input-type=module", "-e", SINK], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const port = await new Promise((resolve, reject) => {
    let text = "";
    child.stdout.on("data", (d) => {
      text += d;
      const m = /PORT (\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    child.on("exit", () => reject(new Error("the OTLP sink exited")));
  });
  child.stdout.destroy();
  // the pipe to its stdin closes when this process ends, and that ends the sink; it keeps nothing alive here
  child.unref();
  child.stdin.unref?.();
  return `http://127.0.0.1:${port}/v1/traces`;
}
