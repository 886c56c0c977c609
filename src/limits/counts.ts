/**
 * Where the governor keeps its counts: a small interface, and the in-memory default. A count is
 * what one caller (its key, see `callerKey`) holds of one resource now, beside the total of all.
 */

/** Keeps the units each caller holds of each resource. Every method is synchronous: it runs on every request. */
export interface CountStore {
  /** Units of `resource` that `key` holds now. */
  held(resource: string, key: string): number;
  /** Units of `resource` that every caller together holds now. */
  total(resource: string): number;
  /** Adds `units` (negative: gives them back) to what `key` holds of `resource`. */
  add(resource: string, key: string, units: number): void;
}

interface Tally {
  total: number;
  readonly byKey: Map<string, number>;
}

/** The default count store: this process's memory. A caller that holds nothing takes no room in it. */
export class MemoryCountStore implements CountStore {
  readonly #tallies = new Map<string, Tally>();

  held(resource: string, key: string): number {
    return this.#tallies.get(resource)?.byKey.get(key) ?? 0;
  }

  total(resource: string): number {
    return this.#tallies.get(resource)?.total ?? 0;
  }

  add(resource: string, key: string, units: number): void {
    let tally = this.#tallies.get(resource);
    if (tally === undefined) {
      tally = { total: 0, byKey: new Map() };
      this.#tallies.set(resource, tally);
    }
    const before = tally.byKey.get(key) ?? 0;
    // a count never goes below nothing, whatever a caller gives back twice
    const kept = Math.max(before + units, 0);
    tally.total += kept - before;
    if (kept > 0) tally.byKey.set(key, kept);
    else tally.byKey.delete(key);
  }
}

/**
 * Units that give themselves back at a time of their own (a stored task, at the end of its ttl):
 * each caller's expiries in order. Swept lazily: a caller's own when it asks for more, everyone's
 * when the total is in the way.
 */
export class Leases {
  readonly #byKey = new Map<string, number[]>();

  /** Records one unit of `key` that ends at `until`. */
  add(key: string, until: number): void {
    let list = this.#byKey.get(key);
    if (list === undefined) {
      list = [];
      this.#byKey.set(key, list);
    }
    // nearly always the latest: tasks share one ttl unless a client asked for less
    let i = list.length;
    while (i > 0 && list[i - 1]! > until) i--;
    list.splice(i, 0, until);
  }

  /** Drops one unit of `key` that ends at `until`; false when there is none. */
  remove(key: string, until: number): boolean {
    const list = this.#byKey.get(key);
    const i = list ? list.indexOf(until) : -1;
    if (i < 0) return false;
    list!.splice(i, 1);
    if (list!.length === 0) this.#byKey.delete(key);
    return true;
  }

  /** Drops the units of `key` that ended by `now`; returns how many. */
  expire(key: string, now: number): number {
    const list = this.#byKey.get(key);
    if (list === undefined) return 0;
    let n = 0;
    while (n < list.length && list[n]! <= now) n++;
    if (n > 0) list.splice(0, n);
    if (list.length === 0) this.#byKey.delete(key);
    return n;
  }

  /** Drops every unit that ended by `now`, calling `gone(key, n)` for each caller that had some. */
  expireAll(now: number, gone: (key: string, n: number) => void): void {
    for (const key of [...this.#byKey.keys()]) {
      const n = this.expire(key, now);
      if (n > 0) gone(key, n);
    }
  }

  /** When the first unit of `key` (or of anyone, without a key) ends; undefined when none is held. */
  next(key?: string): number | undefined {
    if (key !== undefined) return this.#byKey.get(key)?.[0];
    let first: number | undefined;
    for (const list of this.#byKey.values()) if (first === undefined || list[0]! < first) first = list[0];
    return first;
  }
}
