/**
 * The counters of picomcp/redis stores as metrics: observed when the reader collects, read through a
 * structural type (picomcp/otel imports neither picomcp/redis nor the `redis` package).
 */
import type { Attributes, BatchObservableCallback, Meter, Observable } from "@opentelemetry/api";
import { A } from "./attributes.js";
import { M } from "./metrics.js";

/** What a picomcp/redis store counts of its calls to Redis (`RedisStats`). */
export interface RedisCounters {
  /** False from a failed call until calls answer again. */
  readonly ready: boolean;
  /** Calls sent to Redis. */
  readonly calls: number;
  /** Calls that failed, whatever the reason (the deadline, refused, an error), and lost subscriptions. */
  readonly failures: number;
  /** The failures that were a deadline passing. */
  readonly timeouts: number;
  /** The failures that were calls not sent: the client was not connected. */
  readonly refused: number;
  /** Times the store went from ready to not. */
  readonly outages: number;
}

/** A store that counts its calls to Redis: `RedisBus`, `RedisSessionStore`, `RedisTaskStore`, … */
export interface RedisCounted {
  readonly stats: RedisCounters;
}

const REASONS = ["timeout", "refused", "error"] as const;

/**
 * Observes `stores` (by the name each is given) on `meter`: `picomcp.redis.calls`,
 * `picomcp.redis.failures` (by `error.type`: `timeout`, `refused`, `error`), `picomcp.redis.outages`
 * and the gauge `picomcp.redis.ready` (1 or 0). Returns what stops observing them.
 */
export function observeRedis(meter: Meter, stores: { readonly [name: string]: RedisCounted }): () => void {
  const named = Object.entries(stores).map(([name, store]) => {
    if (typeof store !== "object" || store === null || typeof store.stats !== "object")
      throw new TypeError(`instrument: redis.${name} is not a picomcp/redis store (it has no stats)`);
    const point = Object.freeze({ [A.redisStore]: name });
    const failed = (reason: (typeof REASONS)[number]): Attributes =>
      Object.freeze({ [A.redisStore]: name, [A.errorType]: reason });
    return { store, point, timeout: failed("timeout"), refused: failed("refused"), error: failed("error") };
  });
  const calls = meter.createObservableCounter(M.redisCalls, {
    unit: "{call}",
    description: "Calls a picomcp/redis store sent to Redis.",
  });
  const failures = meter.createObservableCounter(M.redisFailures, {
    unit: "{call}",
    description:
      "Calls of a picomcp/redis store that failed: past their deadline (timeout), not sent while the client was not connected (refused), or any other failure, an error reply included (error).",
  });
  const outages = meter.createObservableCounter(M.redisOutages, {
    unit: "{outage}",
    description: "Times a picomcp/redis store went from ready to not.",
  });
  const ready = meter.createObservableGauge(M.redisReady, {
    unit: "1",
    description: "Whether a picomcp/redis store's calls answer (1) or fail to reach Redis (0).",
  });
  const observables: Observable[] = [calls, failures, outages, ready];
  const observe: BatchObservableCallback = (result) => {
    for (const { store, point, timeout, refused, error } of named) {
      const s = store.stats;
      result.observe(calls, s.calls, point);
      result.observe(failures, s.timeouts, timeout);
      result.observe(failures, s.refused, refused);
      result.observe(failures, Math.max(0, s.failures - s.timeouts - s.refused), error);
      result.observe(outages, s.outages, point);
      result.observe(ready, s.ready ? 1 : 0, point);
    }
  };
  meter.addBatchObservableCallback(observe, observables);
  return () => meter.removeBatchObservableCallback(observe, observables);
}
