/**
 * The metrics: the two histograms of the MCP semantic conventions, and counters the convention leaves
 * open, named in its style. Every attribute has few values: no ids, no URIs (unless asked for), no
 * method or tool name the server did not register (see `Kinds`).
 */
import type { Attributes, Counter, Histogram, Meter, UpDownCounter } from "@opentelemetry/api";
import { A, type Network, type Series } from "./attributes.js";

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
  redisCalls: "picomcp.redis.calls",
  redisFailures: "picomcp.redis.failures",
  redisOutages: "picomcp.redis.outages",
  redisReady: "picomcp.redis.ready",
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

/** How many values each level of the caches below keeps (beyond: made afresh each time, never kept). */
const KEEP = 64;

function cached<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    if (map.size < KEEP) map.set(key, value);
  }
  return value;
}

/** What makes a point of `mcp.server.operation.duration` differ, beyond its series and network. */
export interface PointOutcome {
  /** The revision served (`mcp.protocol.version`). */
  readonly version: string | undefined;
  /** `error.type`: the JSON-RPC code, or `tool_error`. */
  readonly errorType: string | undefined;
  /** The JSON-RPC code (`rpc.response.status_code`), when the answer is an error. */
  readonly code: string | undefined;
}

/**
 * The attribute sets of the metric points, made once per combination of the few values they hold
 * and shared (frozen): a point costs a few map lookups, not an object.
 */
export class Points {
  /** `mcp.server.operation.duration`'s attributes for a message of `series` carried by `network`. */
  operation(series: Series, network: Network, o: PointOutcome): Attributes {
    const byNetwork = cached(
      series.points,
      o.version ?? "",
      () => new Map<Network, Map<string, Attributes>>(),
    );
    const byOutcome = cached(byNetwork, network, () => new Map<string, Attributes>());
    return cached(byOutcome, o.errorType ?? "", () => {
      const point: Attributes = { [A.method]: series.method };
      if (o.errorType !== undefined) point[A.errorType] = o.errorType;
      if (o.code !== undefined) point[A.statusCode] = o.code;
      if (series.method === "tools/call") point[A.operation] = "execute_tool";
      if (o.version !== undefined) point[A.protocolVersion] = o.version;
      Object.assign(point, network.attributes);
      // a tool or prompt is named once it answered: not one that failed to resolve
      if (series.targetKey !== undefined && o.code === undefined) point[series.targetKey] = series.target;
      return Object.freeze(point);
    });
  }

  /** The session metrics' (and listen streams') attributes: the revision and the network. */
  session(version: string | undefined, network: Network): Attributes {
    const byNetwork = cached(this.#sessions, version ?? "", () => new Map<Network, Attributes>());
    return cached(byNetwork, network, () => {
      const point: Attributes = {};
      if (version !== undefined) point[A.protocolVersion] = version;
      return Object.freeze(Object.assign(point, network.attributes));
    });
  }

  readonly #sessions = new Map<string, Map<Network, Attributes>>();
}
