/**
 * Rate limits per caller and method: token buckets, one per caller and rule, in a store that may be
 * this process's memory (the default) or shared by every replica (`RedisRateStore` of `picomcp/redis`).
 */
import type { McpError } from "../errors.js";
import { isPromiseLike, type Params } from "../types.js";
import { limitError } from "./shares.js";

/** One token bucket: `perMinute` tokens come back a minute, and it holds at most `burst`. */
export interface Rate {
  /** Tokens that come back per minute (a fraction is fine: 0.5 is one every two minutes). */
  perMinute: number;
  /** Tokens the bucket holds, so a caller that was quiet may spend them at once. Default: `perMinute`. */
  burst?: number;
}

/** The rate limits of a server (`limits.rates`); each caller has buckets of its own. */
export interface RateLimits {
  /** Every request, whatever its method. Default: none. */
  all?: Rate;
  /** Per method (`"tools/call"`, `"resources/read"`, …). Default: none. */
  methods?: { readonly [method: string]: Rate };
  /** `tools/call` per tool name, on top of `methods["tools/call"]` (a call takes from both). Default: none. */
  tools?: { readonly [name: string]: Rate };
  /** Where the buckets live. Default: a {@link MemoryRateStore} of this process. */
  store?: RateStore;
}

/** One bucket of one caller, as a store sees it. */
export interface Bucket {
  /** The caller and the rule: unique per bucket, stable across replicas (`tools/call principal:alice`). */
  readonly key: string;
  /** Tokens it holds when full. */
  readonly capacity: number;
  /** Tokens that come back per millisecond. */
  readonly perMs: number;
  /**
   * The caller, when `key` is `<rule> <group>`: a store may keep a caller's buckets together (the Redis
   * store puts them in one cluster slot). The memory store ignores it.
   */
  readonly group?: string;
}

/** Keeps token buckets. */
export interface RateStore {
  /**
   * Takes one token from each of `buckets`, all or none: resolves with 0 when it took them, else
   * with the milliseconds until every one of them has a token again.
   */
  take(buckets: readonly Bucket[]): number | Promise<number>;
}

/** Options of {@link MemoryRateStore}. */
export interface MemoryRateStoreOptions {
  /** The clock, for tests. Default: `Date.now`. */
  now?: () => number;
}

/** The default rate store: one process's memory. A bucket that has filled up again takes no room. */
export class MemoryRateStore implements RateStore {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #now: () => number;
  #sweepAt = 1024;

  constructor(options: MemoryRateStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  take(buckets: readonly Bucket[]): number {
    const now = this.#now();
    let wait = 0;
    const levels: number[] = [];
    for (const b of buckets) {
      const state = this.#buckets.get(b.key);
      const tokens = state ? Math.min(b.capacity, state.tokens + (now - state.at) * b.perMs) : b.capacity;
      levels.push(tokens);
      if (tokens < 1) wait = Math.max(wait, Math.ceil((1 - tokens) / b.perMs));
    }
    if (wait > 0) return wait;
    for (let i = 0; i < buckets.length; i++)
      this.#buckets.set(buckets[i]!.key, { tokens: levels[i]! - 1, at: now });
    if (this.#buckets.size >= this.#sweepAt) this.#sweep(now, buckets);
    return 0;
  }

  /** Forgets the buckets that are full again: as good as never used. */
  #sweep(now: number, rules: readonly Bucket[]): void {
    const full = new Map(rules.map((b) => [b.key, b]));
    for (const [key, state] of this.#buckets) {
      const rule = full.get(key);
      // a bucket's rule is not kept with it: one idle for an hour is full under any sane rate
      if (rule ? state.tokens + (now - state.at) * rule.perMs >= rule.capacity : now - state.at > 3_600_000)
        this.#buckets.delete(key);
    }
    this.#sweepAt = Math.max(1024, this.#buckets.size * 2);
  }
}

interface Rule {
  readonly name: string;
  readonly capacity: number;
  readonly perMs: number;
}

function rule(name: string, rate: Rate): Rule {
  const burst = rate.burst ?? rate.perMinute;
  if (!(rate.perMinute > 0) || !Number.isFinite(rate.perMinute))
    throw new RangeError(`limits.rates: ${name} needs a positive perMinute`);
  if (!(burst >= 1) || !Number.isFinite(burst))
    throw new RangeError(`limits.rates: the burst of ${name} must be at least 1`);
  return { name, capacity: burst, perMs: rate.perMinute / 60_000 };
}

/** The rate limits of one server: which buckets a request takes from, and the refusal when one is empty. */
export class RateLimiter {
  readonly #all: Rule | undefined;
  readonly #methods = new Map<string, Rule>();
  readonly #tools = new Map<string, Rule>();
  readonly #store: RateStore;

  constructor(limits: RateLimits) {
    this.#all = limits.all ? rule("all", limits.all) : undefined;
    for (const [m, r] of Object.entries(limits.methods ?? {})) this.#methods.set(m, rule(m, r));
    for (const [t, r] of Object.entries(limits.tools ?? {})) this.#tools.set(t, rule(`tools/call:${t}`, r));
    this.#store = limits.store ?? new MemoryRateStore();
  }

  /** Takes a token from each bucket of `key` that `method` uses: undefined, or the refusal naming the first rule that is spent. */
  admit(key: string, method: string, params: Params): McpError | undefined | Promise<McpError | undefined> {
    const rules: Rule[] = [];
    if (this.#all) rules.push(this.#all);
    const m = this.#methods.get(method);
    if (m) rules.push(m);
    if (method === "tools/call" && typeof params.name === "string") {
      const t = this.#tools.get(params.name);
      if (t) rules.push(t);
    }
    if (rules.length === 0) return undefined;
    const buckets = rules.map((r) => ({
      key: `${r.name} ${key}`,
      capacity: r.capacity,
      perMs: r.perMs,
      group: key,
    }));
    const waited = this.#store.take(buckets);
    const verdict = (wait: number) => (wait > 0 ? refusal(rules, wait) : undefined);
    return isPromiseLike(waited) ? Promise.resolve(waited).then(verdict) : verdict(waited);
  }
}

/** A spent rate: the caller's own, so 429, whatever other callers do. */
function refusal(rules: readonly Rule[], wait: number): McpError {
  const names = rules.map((r) => r.name);
  const max = Math.min(...rules.map((r) => r.capacity));
  return limitError(
    { limit: "rate", scope: "principal", max, retryAfterMs: wait, rules: names },
    `Too Many Requests: this caller's rate of ${names.join(" and ")} is spent`,
  );
}
