// The session store contract: what shared 2025 sessions (src/http/shared.ts) rely on from any
// `SessionStore` (src/http/session-store.ts). Each store runs it in a few lines
// (test/contracts/memory.test.ts, test/contracts/redis.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import type { SessionMessage, SessionRecord, SessionStore } from "../../src/http/session-store.js";
import { until } from "./support.js";

/** A fresh, empty store under test; `peer`: another instance's store on the same backend (a shared store). */
export interface SessionStoreTarget {
  readonly store: SessionStore;
  readonly peer: SessionStore;
  close?(): void | Promise<void>;
}

const RECORD: SessionRecord = {
  protocolVersion: "2025-11-25",
  capabilities: { elicitation: {} },
  clientInfo: { name: "c", version: "1" },
  principal: "ada",
  authenticated: true,
  caller: "principal:ada",
  subscriptions: [],
};
const CAPS = { ttlMs: 60_000, perCaller: 100, total: 10_000 };
let ids = 0;
const fresh = () => `sid-${process.pid}-${++ids}`;

export function sessionStoreContract(name: string, make: () => Promise<SessionStoreTarget>): void {
  describe(`SessionStore contract: ${name}`, () => {
    let target: SessionStoreTarget | undefined;
    const open = async () => {
      target = await make();
      return target;
    };
    afterEach(async () => {
      await target?.close?.();
      target = undefined;
    });

    it("keeps a record every instance reads, with its changes, until it ends everywhere", async () => {
      const { store, peer } = await open();
      const id = fresh();
      expect(await store.create(id, RECORD, CAPS)).toBe("ok");
      expect(await peer.touch(id, CAPS.ttlMs)).toEqual({ ...RECORD, logLevel: undefined, home: undefined });
      await peer.update(id, { logLevel: "warning", subscribe: ["note://a", "note://b"] });
      await store.update(id, { unsubscribe: ["note://a"] });
      const read = await store.touch(id, CAPS.ttlMs);
      expect([read?.logLevel, read?.subscriptions]).toEqual(["warning", ["note://b"]]);
      expect(await peer.end(id)).toBe(true);
      expect(await store.touch(id, CAPS.ttlMs)).toBeUndefined();
      expect(await store.end(id)).toBe(false);
      // a change to a session that ended makes no session
      await store.update(id, { logLevel: "debug" });
      expect(await peer.touch(id, CAPS.ttlMs)).toBeUndefined();
    });

    it("knows which instance holds the GET stream: claimed, released only by its holder", async () => {
      const { store, peer } = await open();
      const id = fresh();
      await store.create(id, RECORD, CAPS);
      expect((await store.touch(id, CAPS.ttlMs, { claim: "A" }))?.home).toBe("A");
      expect((await peer.touch(id, CAPS.ttlMs, { release: "B" }))?.home).toBe("A");
      expect((await peer.touch(id, CAPS.ttlMs))?.home).toBe("A");
      expect((await peer.touch(id, CAPS.ttlMs, { release: "A" }))?.home).toBeUndefined();
      expect((await store.touch(id, CAPS.ttlMs))?.home).toBeUndefined();
    });

    it("holds a caller's share and the total across instances, and frees a place on end", async () => {
      const { store, peer } = await open();
      const caps = { ttlMs: 60_000, perCaller: 2, total: 3 };
      const who = `principal:${fresh()}`;
      const [a, b] = [fresh(), fresh()];
      expect(await store.create(a, { ...RECORD, caller: who }, caps)).toBe("ok");
      expect(await peer.create(b, { ...RECORD, caller: who }, caps)).toBe("ok");
      expect(await store.create(fresh(), { ...RECORD, caller: who }, caps)).toBe("caller");
      await peer.end(a);
      expect(await store.create(fresh(), { ...RECORD, caller: who }, caps)).toBe("ok");
      // the total counts every caller's (this store's earlier tests hold sessions too: a total of its own)
      const other = `principal:${fresh()}`;
      const total = { ...caps, perCaller: 100, total: 1 };
      expect(await peer.create(fresh(), { ...RECORD, caller: other }, total)).toBe("total");
    });

    it("forgets a session idle for its time to live, and counts it no more", async () => {
      const { store, peer } = await open();
      const who = `principal:${fresh()}`;
      const caps = { ttlMs: 150, perCaller: 1, total: 10_000 };
      const id = fresh();
      expect(await store.create(id, { ...RECORD, caller: who }, caps)).toBe("ok");
      // watched by counting, not by reading it (a read would keep it alive)
      await until(
        async () => (await peer.create(fresh(), { ...RECORD, caller: who }, caps)) === "ok",
        "expiry",
      );
      expect(await store.touch(id, caps.ttlMs)).toBeUndefined();
    });

    it("holds a session's record and its count to one deadline, to the millisecond", async () => {
      const { store, peer } = await open();
      // asked without a pause between tries, the first create to succeed falls in the very millisecond
      // the count lets go of the old session: the record must be gone by then too, never a moment later
      for (let round = 0; round < 20; round++) {
        const who = `principal:${fresh()}`;
        const caps = { ttlMs: 20, perCaller: 1, total: 10_000 };
        const id = fresh();
        expect(await store.create(id, { ...RECORD, caller: who }, caps)).toBe("ok");
        const end = Date.now() + 10_000;
        while ((await peer.create(fresh(), { ...RECORD, caller: who }, caps)) !== "ok") {
          if (Date.now() > end) throw new Error("timed out waiting for the expiry");
        }
        expect(await store.touch(id, caps.ttlMs), `round ${round}`).toBeUndefined();
      }
    });

    it("carries messages to every instance, its sender's too, until a listener stops", async () => {
      const { store, peer } = await open();
      const heard: SessionMessage[][] = [[], []];
      const stops = [
        store.subscribe((m) => void heard[0]!.push(m)),
        peer.subscribe((m) => void heard[1]!.push(m)),
      ];
      const sid = fresh();
      const m: SessionMessage = {
        type: "out",
        from: "A",
        sid,
        to: "B",
        data: '{"jsonrpc":"2.0","method":"x"}',
      };
      // a subscription may take a moment to be in place: sent until heard
      await until(() => {
        if (heard[1]!.length === 0) store.publish(m);
        return heard[0]!.length > 0 && heard[1]!.length > 0;
      }, "the first message");
      expect(heard[1]![0]).toEqual(m);
      stops[1]!();
      const n = heard[1]!.length;
      const end: SessionMessage = { type: "end", from: "A", sid };
      store.publish(end);
      await until(() => heard[0]!.some((x) => x.type === "end"), "the end");
      expect(heard[1]!.length).toBe(n);
      stops[0]!();
    });
  });
}
