// The rate store contract: what the governor's rate limits rely on from any `RateStore`
// (src/limits/rate.ts). Each store runs it in a few lines (test/contracts/memory.test.ts,
// test/contracts/redis.test.ts), giving a fresh store and a way to let its time pass.
import { afterEach, describe, expect, it } from "vitest";
import type { Bucket, RateStore } from "../../src/limits/rate.js";
import { need, until } from "./support.js";

/** A fresh, empty store under test. */
export interface RateStoreTarget {
  readonly store: RateStore;
  /** `shared`: another instance's store on the same backend, which takes from the same buckets. */
  readonly peer?: RateStore;
  /** Moves the store's clock on by `ms`: an injected `now`, or for a backend with a clock of its own, every bucket's last count moved back by `ms`. */
  advance(ms: number): void | Promise<void>;
  close?(): void | Promise<void>;
}

/** What the store offers beyond the interface, so that the suite checks it too. */
export interface RateStoreFeatures {
  /** Its backend is shared by instances: the target gives `peer`. */
  readonly shared?: boolean;
}

let made = 0;
/** The caller of this run's buckets: a request's buckets are one caller's, as the limiter makes them. */
const CALLER = `contract-${Math.random().toString(36).slice(2)}`;
/** A bucket no other test uses: `capacity` tokens, one back every `everyMs`. */
const bucket = (capacity: number, everyMs: number): Bucket => ({
  key: `bucket-${++made} ${CALLER}`,
  capacity,
  perMs: 1 / everyMs,
  group: CALLER,
});

export function rateStoreContract(
  name: string,
  make: () => Promise<RateStoreTarget>,
  features: RateStoreFeatures = {},
): void {
  describe(`RateStore contract: ${name}`, () => {
    const open: RateStoreTarget[] = [];
    const target = async () => {
      const t = await make();
      open.push(t);
      return t;
    };
    afterEach(async () => {
      for (const t of open.splice(0)) await t.close?.();
    });
    const take = async (store: RateStore, buckets: Bucket[]) => await store.take(buckets);

    it("a new bucket is full: its burst is taken, then the wait until one token is back", async () => {
      const t = await target();
      const b = bucket(3, 60_000);
      for (let i = 0; i < 3; i++) expect(await take(t.store, [b])).toBe(0);
      const wait = await take(t.store, [b]);
      expect(wait).toBeGreaterThan(55_000);
      expect(wait).toBeLessThanOrEqual(60_000);
    });

    it("takes from every bucket of a request or from none", async () => {
      const t = await target();
      const [wide, narrow] = [bucket(2, 60_000), bucket(1, 60_000)];
      expect(await take(t.store, [wide, narrow])).toBe(0);
      // narrow is empty: the request is refused, and wide keeps the token it had left
      expect(await take(t.store, [wide, narrow])).toBeGreaterThan(0);
      expect(await take(t.store, [wide])).toBe(0);
      expect(await take(t.store, [wide])).toBeGreaterThan(0);
    });

    it("keeps buckets apart by key", async () => {
      const t = await target();
      const [a, b] = [bucket(1, 60_000), bucket(1, 60_000)];
      expect(await take(t.store, [a])).toBe(0);
      expect(await take(t.store, [a])).toBeGreaterThan(0);
      expect(await take(t.store, [b])).toBe(0);
    });

    it("gives a token back at its rate, up to the burst and no further", async () => {
      const t = await target();
      const b = bucket(2, 50);
      expect(await take(t.store, [b])).toBe(0);
      expect(await take(t.store, [b])).toBe(0);
      expect(await take(t.store, [b])).toBeGreaterThan(0);
      await until(async () => {
        await t.advance(10);
        return (await take(t.store, [b])) === 0;
      }, "a token back");
      // idle for ten tokens' time: full again, but never past its burst
      await t.advance(500);
      expect(await take(t.store, [b])).toBe(0);
      expect(await take(t.store, [b])).toBe(0);
      expect(await take(t.store, [b])).toBeGreaterThan(0);
    });

    it.runIf(features.shared === true)("shares its buckets with another instance's store", async () => {
      const t = await target();
      const peer = need(t.peer, "peer");
      const b = bucket(2, 60_000);
      expect(await take(t.store, [b])).toBe(0);
      expect(await take(peer, [b])).toBe(0);
      expect(await take(t.store, [b])).toBeGreaterThan(0);
      expect(await take(peer, [b])).toBeGreaterThan(0);
    });
  });
}
