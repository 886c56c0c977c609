/**
 * The governor: every resource a caller can hold is counted per caller (its principal, see
 * `callerKey`) against a share of its own, and against a total for the whole server. A caller at its
 * share is refused; nothing it does ever evicts, cancels or hides what another caller holds.
 */
import type { McpError } from "../errors.js";
import type { Awaitable, Params } from "../types.js";
import { type CountStore, Leases, MemoryCountStore } from "./counts.js";
import { RateLimiter, type RateLimits } from "./rate.js";
import { DEFAULT_SHARES, limitError, type Share } from "./shares.js";

/**
 * Limits of one server (`new McpServer({ limits })`): a share per caller and a total for each
 * resource a caller can hold, and the rate limits. The defaults are in docs/security.md.
 */
export interface LimitsOptions {
  /** Requests running at once (past their synchronous part). Default: 64 per principal, 20000 in all. */
  requests?: Share;
  /** 2025 requests to the client (`ctx.elicit`, `sample`, `roots`) awaiting an answer. Default: 32 per principal, 2000 in all. */
  inputRounds?: Share;
  /** Tasks kept, from their creation until their ttl ends. Default: 100 per principal, 10000 in all. */
  tasks?: Share;
  /** Task handlers still running. Default: 32 per principal, 1000 in all. */
  runningTasks?: Share;
  /** Open 2026-07-28 `subscriptions/listen` streams. Default: 16 per principal, 10000 in all. */
  listens?: Share;
  /**
   * Bytes of the URIs and task ids that open listens and 2025 `resources/subscribe`s hold (two
   * bytes a character and 64 an entry). Default: 1048576 (1 MiB) per principal, 67108864 (64 MiB) in all.
   */
  subscriptionBytes?: Share;
  /** Rate limits per caller and method (token buckets). Default: none. */
  rates?: RateLimits;
  /** Where the counts live. Default: a {@link MemoryCountStore} of this process. */
  store?: CountStore;
}

function checked(share: Share | undefined, name: string): Share {
  if (share !== undefined && (typeof share !== "object" || share === null))
    throw new TypeError(`limits.${name} must be an object ({ perPrincipal, total })`);
  for (const key of ["perPrincipal", "total"] as const) {
    const n = share?.[key];
    if (n !== undefined && !(Number.isSafeInteger(n) && n >= 1))
      throw new RangeError(`limits.${name}.${key} must be a positive integer`);
  }
  return share ?? {};
}

/** What one resource may be held: per caller, in all, and the wait a refused caller is told. */
interface Limit {
  readonly perPrincipal: number;
  readonly total: number;
  readonly retryAfterMs: number;
}

/**
 * The governor of one server (or of one HTTP handler, for its sessions and streams): the share and
 * total of every resource, their counts, and the rate limits.
 */
export class Governor {
  readonly #limits = new Map<string, Limit>();
  readonly #store: CountStore;
  readonly #leases = new Map<string, Leases>();
  readonly #rates: RateLimiter | undefined;
  // read on every request: looked up once
  readonly #requests: Limit;

  /** `options`: a {@link LimitsOptions}, or the HTTP handler's `limits`; a share not given keeps its default. */
  constructor(options: object = {}) {
    const o = options as { readonly [resource: string]: unknown };
    this.#store = (o.store as CountStore | undefined) ?? new MemoryCountStore();
    this.#rates = o.rates ? new RateLimiter(o.rates as RateLimits) : undefined;
    for (const [resource, d] of Object.entries(DEFAULT_SHARES)) {
      const own = checked(o[resource] as Share | undefined, resource);
      this.#limits.set(resource, {
        perPrincipal: own.perPrincipal ?? d.perPrincipal,
        total: own.total ?? d.total,
        retryAfterMs: d.retryAfterMs,
      });
    }
    this.#requests = this.#limits.get("requests")!;
  }

  /** The share and total of `resource`. */
  limit(resource: string): { readonly perPrincipal: number; readonly total: number } {
    return this.#limits.get(resource)!;
  }

  /** Units of `resource` that `key` holds now. */
  held(resource: string, key: string): number {
    return this.#store.held(resource, key);
  }

  /** The refusal if `key` may not take `units` more of `resource` now; undefined when it may. */
  check(resource: string, key: string, units = 1): McpError | undefined {
    const s = this.#limits.get(resource)!;
    const leases = this.#leases.get(resource);
    const now = leases ? Date.now() : 0;
    if (leases) {
      const n = leases.expire(key, now);
      if (n > 0) this.#store.add(resource, key, -n);
    }
    if (this.#store.held(resource, key) + units > s.perPrincipal) {
      const next = leases?.next(key);
      const wait = next === undefined ? s.retryAfterMs : next - now;
      return limitError({ limit: resource, scope: "principal", max: s.perPrincipal, retryAfterMs: wait });
    }
    if (this.#store.total(resource) + units <= s.total) return undefined;
    if (leases) {
      leases.expireAll(now, (k, n) => this.#store.add(resource, k, -n));
      if (this.#store.total(resource) + units <= s.total) return undefined;
    }
    const next = leases?.next();
    const wait = next === undefined ? s.retryAfterMs : next - now;
    return limitError({ limit: resource, scope: "server", max: s.total, retryAfterMs: wait });
  }

  /** Takes `units` of `resource` for `key`, or throws its refusal. */
  take(resource: string, key: string, units = 1): void {
    const refused = this.check(resource, key, units);
    if (refused) throw refused;
    this.#store.add(resource, key, units);
  }

  /** Counts `units` of `resource` for `key` without a check: what {@link admit} let in. */
  add(resource: string, key: string, units: number): void {
    this.#store.add(resource, key, units);
  }

  /** Gives back `units` of `resource` that `key` took. */
  give(resource: string, key: string, units = 1): void {
    this.#store.add(resource, key, -units);
  }

  /** Takes `units` and returns what gives them back (once, however often it is called); or the refusal. */
  claim(resource: string, key: string, units = 1): (() => void) | McpError {
    const refused = this.check(resource, key, units);
    if (refused) return refused;
    this.#store.add(resource, key, units);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#store.add(resource, key, -units);
    };
  }

  /** Takes one unit of `resource` for `key` until `until` (ms since the epoch), or throws; it comes back by itself then. */
  lease(resource: string, key: string, until: number): void {
    let leases = this.#leases.get(resource);
    if (leases === undefined) {
      leases = new Leases();
      this.#leases.set(resource, leases);
    }
    this.take(resource, key, 1);
    leases.add(key, until);
  }

  /** Gives back a unit {@link lease} took until `until`, before its time (what it was for never came to be). */
  unlease(resource: string, key: string, until: number): void {
    if (this.#leases.get(resource)?.remove(key, until)) this.#store.add(resource, key, -1);
  }

  /**
   * Admits a request of `method` from `key`: undefined, or the refusal (its share of requests in
   * flight is taken, or a rate of it is spent). A promise only with a shared rate store. Nothing is
   * taken for the request itself: the dispatcher counts it once it runs past its synchronous part.
   */
  admit(key: string, method: string, params: Params): Awaitable<McpError | undefined> {
    const r = this.#requests;
    const full =
      this.#store.held("requests", key) >= r.perPrincipal || this.#store.total("requests") >= r.total;
    if (full) return this.check("requests", key);
    return this.#rates?.admit(key, method, params);
  }
}
