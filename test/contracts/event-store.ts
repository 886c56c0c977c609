// The event store contract: what Streamable HTTP relies on from any `EventStore` (src/http/event-store.ts)
// to resume an SSE stream after `Last-Event-ID`. Each store runs it in a few lines
// (test/contracts/memory.test.ts, test/contracts/redis.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import type { EventStore } from "../../src/http/event-store.js";
import { need, until } from "./support.js";

/** A fresh, empty store under test, and what else the features of the store call for. */
export interface EventStoreTarget {
  readonly store: EventStore;
  /** `shared`: another instance's store on the same backend; it reads what `store` keeps. */
  readonly peer?: EventStore;
  /** `shared`: a store of another deployment on the same backend (another key prefix). */
  readonly stranger?: EventStore;
  /**
   * `ttlMs`: moves the store's clock on by `ms` (an injected clock, or shortening every key's time
   * to live by `ms`: one that reaches zero is gone).
   */
  advance?(ms: number): Promise<void>;
  close?(): void | Promise<void>;
}

/** What the store offers beyond the interface, so that the suite checks it too. */
export interface EventStoreFeatures {
  /** Its backend is shared by instances: the target gives `peer` and `stranger`. */
  readonly shared?: boolean;
  /** It forgets a stream this long after its last event: the target gives `advance`. */
  readonly ttlMs?: number;
  /** It documents what it does while its backend is down: a store cut off on demand. */
  readonly outage?: () => Promise<EventStoreOutage>;
}

/** The bounds `make` gives the store. */
export interface EventStoreOptions {
  /** Events kept per stream; the oldest go first. */
  readonly maxEventsPerStream: number;
  /** The largest event kept, in characters; a larger one is not kept (and takes nothing away). */
  readonly maxEventChars: number;
}

/** A store cut off from its backend, and the switch (for a store that documents what it does then). */
export interface EventStoreOutage {
  readonly store: EventStore;
  /** The store's log lines so far. */
  readonly lines: readonly string[];
  /** What the one line of an outage says, and the one of the recovery. */
  readonly says: { readonly down: RegExp; readonly back: string };
  /** Takes the backend away; resolves once the store's connection knows. */
  down(): Promise<void>;
  /** Brings it back (empty); resolves once the store's connection is ready again. */
  up(): Promise<void>;
  close(): Promise<void>;
}

const MAX_EVENTS = 5;
const MAX_CHARS = 100;

/** Runs the event store contract against the stores `make` builds (a fresh one per test). */
export function eventStoreContract(
  name: string,
  make: (options: EventStoreOptions) => Promise<EventStoreTarget>,
  features: EventStoreFeatures = {},
): void {
  const { shared = false, ttlMs, outage } = features;
  describe(`event store contract: ${name}`, () => {
    const open: { close?(): void | Promise<void> }[] = [];
    afterEach(async () => {
      for (const t of open.splice(0)) await t.close?.();
    });
    async function target(): Promise<EventStoreTarget> {
      const t = await make({ maxEventsPerStream: MAX_EVENTS, maxEventChars: MAX_CHARS });
      open.push(t);
      return t;
    }
    /** The store, and the peer instance's when the backend is shared: each must answer the same. */
    const readers = (t: EventStoreTarget) => (shared ? [t.store, need(t.peer, "peer")] : [t.store]);
    const seqs = async (s: EventStore, stream: string, after = 0) =>
      (await s.after(stream, after)).map((e) => e.seq);

    it("returns a stream's events in order, each with its seq and data exactly as appended", async () => {
      const t = await target();
      const data = ['{"jsonrpc":"2.0","id":1,"result":{}}', "a b\nc\r\nd", "", "ünï ✓ 🚀", "1 2 3"];
      for (const [i, d] of data.entries()) await t.store.append("s1", i + 1, d, "session-1");
      for (const s of readers(t)) {
        expect(await s.after("s1", 0)).toStrictEqual(data.map((d, i) => ({ seq: i + 1, data: d })));
      }
    });

    it("after(seq) gives only the events numbered above seq: none after the last", async () => {
      const t = await target();
      for (let seq = 1; seq <= 4; seq++) await t.store.append("s1", seq, `e${seq}`, "session-1");
      for (const s of readers(t)) {
        expect(await s.after("s1", 2)).toStrictEqual([
          { seq: 3, data: "e3" },
          { seq: 4, data: "e4" },
        ]);
        expect(await seqs(s, "s1", 4)).toEqual([]);
        expect(await seqs(s, "s1", 99)).toEqual([]);
      }
    });

    it("answers an empty list for a stream it never had, whatever the id's characters", async () => {
      const t = await target();
      await t.store.append("known", 1, "x", "session-1");
      for (const id of ["unknown", "", "*", "kno?n", "[k]nown", "known ", "ключ"]) {
        for (const s of readers(t)) expect(await s.after(id, 0)).toEqual([]);
      }
    });

    it("keeps streams apart, whichever session writes them", async () => {
      const t = await target();
      await t.store.append("a", 1, "a1", "session-1");
      await t.store.append("b", 1, "b1", "session-1");
      await t.store.append("c", 1, "c1", "session-2");
      await t.store.append("a", 2, "a2", "session-1");
      await t.store.append("c", 2, "c2", "session-2");
      for (const s of readers(t)) {
        expect(await s.after("a", 0)).toStrictEqual([
          { seq: 1, data: "a1" },
          { seq: 2, data: "a2" },
        ]);
        expect(await s.after("b", 0)).toStrictEqual([{ seq: 1, data: "b1" }]);
        expect(await s.after("c", 0)).toStrictEqual([
          { seq: 1, data: "c1" },
          { seq: 2, data: "c2" },
        ]);
      }
    });

    it("drop forgets one stream, leaves the others, and is harmless on an unknown one", async () => {
      const t = await target();
      await t.store.append("a", 1, "a1", "session-1");
      await t.store.append("b", 1, "b1", "session-1");
      await t.store.drop("a");
      await t.store.drop("a");
      await t.store.drop("never");
      for (const s of readers(t)) {
        expect(await s.after("a", 0)).toEqual([]);
        expect(await seqs(s, "b")).toEqual([1]);
      }
      await t.store.append("a", 2, "again", "session-1");
      for (const s of readers(t)) expect(await s.after("a", 0)).toStrictEqual([{ seq: 2, data: "again" }]);
    });

    it("keeps calls in the order they were made, though the transport does not wait for appends", async () => {
      const t = await target();
      // the transport fires appends and drops without waiting, then reads on resume
      for (let seq = 1; seq <= MAX_EVENTS; seq++) void t.store.append("s1", seq, `e${seq}`, "session-1");
      expect(await seqs(t.store, "s1")).toEqual([1, 2, 3, 4, 5]);
      void t.store.append("s2", 1, "gone", "session-1");
      void t.store.drop("s2");
      void t.store.append("s3", 1, "kept", "session-1");
      expect(await t.store.after("s2", 0)).toEqual([]);
      expect(await t.store.after("s3", 0)).toStrictEqual([{ seq: 1, data: "kept" }]);
    });

    it("keeps a stream's last maxEventsPerStream events, the oldest going first", async () => {
      const t = await target();
      for (let seq = 1; seq <= MAX_EVENTS + 3; seq++) await t.store.append("s1", seq, `e${seq}`, "session-1");
      for (const s of readers(t)) {
        expect(await seqs(s, "s1")).toEqual([4, 5, 6, 7, 8]);
        // a client that resumes from an event already gone gets what is left
        expect(await seqs(s, "s1", 2)).toEqual([4, 5, 6, 7, 8]);
      }
    });

    it("does not keep an event over maxEventChars, and takes nothing away for it", async () => {
      const t = await target();
      await t.store.append("s1", 1, "x".repeat(MAX_CHARS), "session-1");
      await t.store.append("s1", 2, "y".repeat(MAX_CHARS + 1), "session-1");
      for (const s of readers(t))
        expect(await s.after("s1", 0)).toStrictEqual([{ seq: 1, data: "x".repeat(MAX_CHARS) }]);
    });

    it("one session's flood never evicts another session's events", async () => {
      const t = await target();
      await t.store.append("b-answer", 1, "B's answer", "B");
      for (let i = 1; i <= 60; i++) await t.store.append(`a${i % 4}`, i, "x".repeat(MAX_CHARS), "A");
      for (const s of readers(t))
        expect(await s.after("b-answer", 0)).toStrictEqual([{ seq: 1, data: "B's answer" }]);
    });

    it("takes appends to many streams in flight together: every stream keeps its own, in order", async () => {
      const t = await target();
      const streams = Array.from({ length: 20 }, (_, i) => `s${i}`);
      await Promise.all(
        streams.flatMap((id) =>
          [1, 2, 3].map((seq) => t.store.append(id, seq, `${id}:${seq}`, `session-${id}`)),
        ),
      );
      for (const s of readers(t)) {
        for (const id of streams)
          expect((await s.after(id, 0)).map((e) => e.data)).toEqual([1, 2, 3].map((n) => `${id}:${n}`));
      }
    });

    it.runIf(shared)("shares nothing with a store of another deployment on the same backend", async () => {
      const t = await target();
      const stranger = need(t.stranger, "stranger");
      await t.store.append("s1", 1, "mine", "session-1");
      await stranger.append("s1", 1, "theirs", "session-1");
      await t.store.append("s2", 1, "mine too", "session-1");
      await stranger.drop("s2");
      expect(await t.store.after("s1", 0)).toStrictEqual([{ seq: 1, data: "mine" }]);
      expect(await stranger.after("s1", 0)).toStrictEqual([{ seq: 1, data: "theirs" }]);
      expect(await seqs(t.store, "s2")).toEqual([1]);
    });

    it.runIf(ttlMs !== undefined)(
      "forgets a stream ttlMs after its last event; each event starts the wait again",
      async () => {
        const t = await target();
        const advance = need(t.advance, "advance");
        const ttl = ttlMs!;
        await t.store.append("s1", 1, "e1", "session-1");
        await t.store.append("other", 1, "o1", "session-1");
        await advance(ttl / 2);
        await t.store.append("s1", 2, "e2", "session-1");
        await advance(ttl / 2);
        for (const s of readers(t)) {
          expect(await seqs(s, "s1")).toEqual([1, 2]);
          expect(await s.after("other", 0)).toEqual([]);
        }
        await advance(ttl / 2);
        for (const s of readers(t)) expect(await s.after("s1", 0)).toEqual([]);
      },
    );

    it.runIf(outage !== undefined)(
      "while its backend is down: never rejects, keeps and finds nothing, says so once; then works again",
      async () => {
        const o = await outage!();
        open.push(o);
        await o.store.append("s1", 1, "before", "session-1");
        await o.down();
        await o.store.append("s1", 2, "lost", "session-1");
        await o.store.append("s2", 1, "lost", "session-1");
        expect(await o.store.after("s1", 0)).toEqual([]);
        await o.store.drop("s1");
        expect(o.lines).toHaveLength(1);
        expect(o.lines[0]).toMatch(o.says.down);
        await o.up();
        // back once a call answers (health is told by calls, not by the client's events)
        await until(async () => {
          await o.store.after("s0", 0);
          return o.lines.length === 2;
        }, "the line of the recovery");
        expect(o.lines[1]).toBe(o.says.back);
        await o.store.append("s1", 3, "after", "session-1");
        expect(await o.store.after("s1", 0)).toStrictEqual([{ seq: 3, data: "after" }]);
        expect(o.lines).toHaveLength(2);
      },
    );
  });
}
