/**
 * `picomcp/otel`: OpenTelemetry traces and metrics for a server, per the MCP semantic conventions,
 * on `@opentelemetry/api` (an optional peer dependency of this subpath alone). One call turns it on;
 * a server never instrumented pays nothing for it.
 */
import {
  type MeterProvider,
  metrics,
  type TextMapPropagator,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import type { McpServer, Registration } from "../server.js";
import { Kinds } from "./attributes.js";
import { Instruments } from "./metrics.js";
import { MetaPropagation } from "./propagation.js";
import { observeRedis, type RedisCounted } from "./redis.js";
import { TaskSpans } from "./tasks.js";
import { Telemetry } from "./telemetry.js";

export { A as ATTRIBUTES } from "./attributes.js";
export { DURATION_BUCKETS, M as METRICS } from "./metrics.js";
export type { RedisCounted, RedisCounters } from "./redis.js";

/** Options of {@link instrument}. */
export interface InstrumentOptions {
  /** Where spans go. Default: the global tracer provider (`trace.setGlobalTracerProvider`, or the Node SDK's). */
  tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global meter provider. */
  meterProvider?: MeterProvider;
  /** Reads and writes `traceparent`, `tracestate` and `baggage` in `params._meta`. Default: the global propagator. */
  propagator?: TextMapPropagator;
  /** Records a tool's arguments as `gen_ai.tool.call.arguments` (JSON) — they may hold anything a user typed. Default: false. */
  recordToolArguments?: boolean;
  /** Records a tool's result as `gen_ai.tool.call.result` (JSON) — it may hold anything the tool read. Default: false. */
  recordToolResults?: boolean;
  /** Records `mcp.resource.uri` on spans (resources/read, subscribe, unsubscribe, updated). Default: true. */
  recordResourceUri?: boolean;
  /** Records `mcp.resource.uri` on `mcp.server.operation.duration` too (one series per URI). Default: false. */
  resourceUriInMetrics?: boolean;
  /**
   * Records `mcp.resource.uri` (and the request's URI in an error's span status) with its user info and
   * the values of its path parameters, query and fragment replaced by `REDACTED`
   * (`s3://REDACTED:REDACTED@host/k?token=REDACTED`); false records it as sent. Default: true.
   */
  redactResourceUri?: boolean;
  /** Records `mcp.session.id` (over HTTP, the `Mcp-Session-Id` a client presents). Default: true. */
  recordSessionId?: boolean;
  /** A CLIENT span for each progress and log notification the server sends. Default: true. */
  notificationSpans?: boolean;
  /**
   * picomcp/redis stores whose counters become metrics, by a name of yours (`picomcp.redis.store`):
   * `{ bus, sessions: sessionStore, rates: rateStore }`. Default: none.
   */
  redis?: { readonly [name: string]: RedisCounted };
}

/** The instrumentation scope's name (the tracer's and the meter's). */
export const SCOPE = "picomcp";

/**
 * Turns on OpenTelemetry for `server`: a SERVER span per request and notification (both eras, any
 * transport), a CLIENT span per request the server sends, trace context through `params._meta`, and
 * the metrics (and those of the picomcp/redis stores named in `redis`). `remove()` turns it off again.
 * @example
 * instrument(server); // spans and metrics go to the providers the Node SDK registered
 * instrument(server, { tracerProvider, meterProvider }); // or to these
 */
export function instrument(server: McpServer, options: InstrumentOptions = {}): Registration {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
  const instruments = new Instruments(meter);
  const telemetry = new Telemetry({
    tracer,
    instruments,
    propagation: new MetaPropagation(options.propagator),
    tasks: new TaskSpans(tracer, instruments),
    recording: {
      toolArguments: options.recordToolArguments === true,
      toolResults: options.recordToolResults === true,
      resourceUri: options.recordResourceUri !== false,
      resourceUriInMetrics: options.resourceUriInMetrics === true && options.recordResourceUri !== false,
      redactUri: options.redactResourceUri !== false,
      sessionId: options.recordSessionId !== false,
      notifications: options.notificationSpans !== false,
    },
    kinds: new Kinds((what, name) => server.knows(what, name)),
  });
  const stopRedis = options.redis ? observeRedis(meter, options.redis) : undefined;
  const registration = server.use({ id: "picomcp/otel", observer: telemetry });
  if (!stopRedis) return registration;
  return {
    remove() {
      registration.remove();
      stopRedis();
    },
  };
}
