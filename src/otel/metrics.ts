/**
 * The metrics: the two histograms of the MCP semantic conventions, and counters the convention leaves
 * open, named in its style. Every attribute has few values: no ids, no URIs (unless asked for), no
 * method or tool name a client made up.
 */
import type { Attributes, Counter, Histogram, Meter, UpDownCounter } from "@opentelemetry/api";

/** The bucket boundaries the convention gives both histograms, in seconds. */
export const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** Metric names. */
export const M = {
  operationDuration: "mcp.server.operation.duration",
  sessionDuration: "mcp.server.session.duration",
  sessions: "mcp.server.session.count",
  listens: "mcp.server.listen_stream.count",
  refused: "mcp.server.request.refused",
  tasks: "mcp.server.task.count",
  tasksEnded: "mcp.server.task.ended",
} as const;

/** The instruments of one instrumented server. */
export class Instruments {
  /** `mcp.server.operation.duration`: a request or notification, from its arrival to its answer. */
  readonly operation: Histogram;
  /** `mcp.server.session.duration`: a session, from its `initialize` to its close. */
  readonly session: Histogram;
  /** Sessions open now. */
  readonly sessions: UpDownCounter;
  /** 2026-07-28 `subscriptions/listen` streams open now. */
  readonly listens: UpDownCounter;
  /** Messages a transport refused at one of its limits, by `error.type`. */
  readonly refused: Counter;
  /** Tasks of this process not yet terminal, by `mcp.task.status`. */
  readonly tasks: UpDownCounter;
  /** Tasks that became terminal, by `mcp.task.status`. */
  readonly tasksEnded: Counter;

  constructor(meter: Meter) {
    const advice = { explicitBucketBoundaries: DURATION_BUCKETS };
    this.operation = meter.createHistogram(M.operationDuration, {
      unit: "s",
      description:
        "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.",
      advice,
    });
    this.session = meter.createHistogram(M.sessionDuration, {
      unit: "s",
      description: "The duration of the MCP session as observed on the MCP server.",
      advice,
    });
    this.sessions = meter.createUpDownCounter(M.sessions, {
      unit: "{session}",
      description: "MCP sessions open on the server.",
    });
    this.listens = meter.createUpDownCounter(M.listens, {
      unit: "{stream}",
      description: "2026-07-28 subscriptions/listen streams open on the server.",
    });
    this.refused = meter.createCounter(M.refused, {
      unit: "{request}",
      description: "Messages a transport refused at one of its limits (body size, rate, sessions, streams).",
    });
    this.tasks = meter.createUpDownCounter(M.tasks, {
      unit: "{task}",
      description: "Tasks running in this process, by status (working, input_required).",
    });
    this.tasksEnded = meter.createCounter(M.tasksEnded, {
      unit: "{task}",
      description: "Tasks that reached a terminal status (completed, failed, cancelled).",
    });
  }
}

/** The attributes of a metric point: only the keys that `keep` names, out of `all`. */
export function pick(all: Attributes, keep: readonly string[]): Attributes {
  const out: Attributes = {};
  for (const key of keep) if (all[key] !== undefined) out[key] = all[key];
  return out;
}
