// The governor's parts: counts per caller and in all, leases that end by themselves, token buckets
// (refill, burst, all or none), and the queue of SSE clients counted by bytes.
import { describe, expect, it } from "vitest";
import { HttpGovernor } from "../../src/http/limits.js";
import { LiveStreams } from "../../src/http/sse.js";
import { MemoryCountStore, MemoryRateStore } from "../../src/index.js";
import { Governor } from "../../src/limits/governor.js";

describe("counts and leases", () => {
  it("a caller at its share is refused, and so is anyone at the total; giving back makes room", () => {
    const g = new Governor({ listens: { perPrincipal: 2, total: 3 } });
    g.take("listens", "a");
    g.take("listens", "a");
    expect(g.check("listens", "a")?.data).toEqual({
      limit: "listens",
      scope: "principal",
      max: 2,
      retryAfterMs: 5000,
    });
    g.take("listens", "b");
    expect(g.check("listens", "c")?.data).toEqual({
      limit: "listens",
      scope: "server",
      max: 3,
      retryAfterMs: 5000,
    });
    g.give("listens", "a");
    expect(g.check("listens", "c")).toBeUndefined();
    expect(() => new Governor({ listens: { perPrincipal: 0 } })).toThrow(
      "limits.listens.perPrincipal must be a positive integer",
    );
    expect(() => new Governor({ tasks: 5 })).toThrow("limits.tasks must be an object");
  });

  it("a lease gives itself back once its time has passed, and tells how long until then", () => {
    const g = new Governor({ tasks: { perPrincipal: 1, total: 2 } });
    const now = Date.now();
    g.lease("tasks", "a", now + 60_000);
    const refused = g.check("tasks", "a")!.data as { retryAfterMs: number };
    expect(refused.retryAfterMs).toBeGreaterThan(59_000);
    g.lease("tasks", "b", now - 1); // already over: swept when the total is in the way
    g.lease("tasks", "c", now + 1000);
    expect(g.held("tasks", "b")).toBe(0);
    expect(g.check("tasks", "d")?.data).toMatchObject({ scope: "server" });
    g.unlease("tasks", "c", now + 1000);
    expect(g.check("tasks", "d")).toBeUndefined();
  });

  it("a count never goes below nothing, and a caller that holds nothing takes no room", () => {
    const store = new MemoryCountStore();
    store.add("x", "a", 2);
    store.add("x", "a", -5);
    expect([store.held("x", "a"), store.total("x")]).toEqual([0, 0]);
    const g = new Governor({ store });
    const release = g.claim("requests", "a") as () => void;
    release();
    release();
    expect(store.total("requests")).toBe(0);
  });
});

describe("token buckets", () => {
  it("refill at perMinute up to burst, and take from every bucket of a request or from none", () => {
    let now = 0;
    const store = new MemoryRateStore({ now: () => now });
    const a = { key: "a", capacity: 2, perMs: 1 / 1000 };
    const b = { key: "b", capacity: 1, perMs: 1 / 2000 };
    expect(store.take([a])).toBe(0);
    expect(store.take([a, b])).toBe(0);
    expect(store.take([a])).toBe(1000);
    now = 1000;
    // a has a token again, b not: nothing is taken from a
    expect(store.take([a, b])).toBe(1000);
    expect(store.take([a])).toBe(0);
    now = 1_000_000;
    expect(store.take([a])).toBe(0);
    expect(store.take([a])).toBe(0);
    expect(store.take([a])).toBe(1000);
  });
});

describe("the queue of SSE clients", () => {
  it("a stream whose client does not read is dropped at its caller's share; another caller's reader goes on", async () => {
    const limits = new HttpGovernor({ limits: { sseBytes: { perPrincipal: 64 * 1024 } } });
    const streams = new LiveStreams({
      keepAliveMs: 60_000,
      everyMs: 60_000,
      maxBufferedBytes: 8 * 1024 * 1024,
      beat: () => false,
    });
    let gone = 0;
    const stalled = streams.open(() => gone++, limits.queue("principal:alice"));
    const reading = streams.open(() => {}, limits.queue("principal:bob"));
    const reader = reading.readable.getReader();
    const chunk = "x".repeat(4096);
    let written = 0;
    while (stalled.event(chunk)) {
      written++;
      expect(reading.event(chunk)).toBe(true);
      await reader.read();
      if (written > 100) break;
    }
    expect(gone).toBe(1);
    expect(written).toBeGreaterThan(10);
    expect(written).toBeLessThan(20);
    expect(limits.governor.held("sseBytes", "principal:alice")).toBe(0);
    expect(reading.event(chunk)).toBe(true);
    streams.close();
    expect(limits.governor.held("sseBytes", "principal:bob")).toBe(0);
  });
});
