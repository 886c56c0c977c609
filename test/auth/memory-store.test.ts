// MemoryAuthStore's bounds: caps per kind of record, expiry, one-time codes, key CAS, hit windows.
import { describe, expect, it } from "vitest";
import { AuthStoreFullError, MemoryAuthStore } from "../../src/auth/memory-store.js";
import type { CodeRecord, GrantRecord, PendingAuthorization } from "../../src/auth/store.js";

const pending = (id: string): PendingAuthorization => ({
  id,
  clientId: "c",
  redirectUri: "http://127.0.0.1/cb",
  codeChallenge: "x",
  resource: "http://127.0.0.1/mcp",
  scopes: [],
  createdAt: Date.now(),
});
const grant = (id: string, subject = "alice", ttl = 60_000): GrantRecord => ({
  id,
  clientId: "c",
  subject,
  resource: "http://127.0.0.1/mcp",
  scopes: [],
  refreshHash: `h-${id}`,
  usedRefreshHashes: [],
  createdAt: Date.now(),
  expiresAt: Date.now() + ttl,
});
const code = (grantId: string, ttl = 60_000): CodeRecord => ({
  clientId: "c",
  redirectUri: "http://127.0.0.1/cb",
  codeChallenge: "x",
  resource: "http://127.0.0.1/mcp",
  scopes: [],
  identity: { subject: "alice" },
  grantId,
  expiresAt: Date.now() + ttl,
});

describe("MemoryAuthStore", () => {
  it("keeps at most maxPending authorizations in progress, refusing a new one instead of dropping a live one", async () => {
    const store = new MemoryAuthStore({ maxPending: 3 });
    for (let i = 0; i < 3; i++) await store.putPending(pending(`p${i}`), 60_000);
    await expect(store.putPending(pending("p3"), 60_000)).rejects.toBeInstanceOf(AuthStoreFullError);
    expect(store.size.pending).toBe(3);
    expect((await store.getPending("p0"))?.id).toBe("p0");
    // one already kept is saved again (consent given), whatever the cap
    await store.putPending({ ...pending("p0"), consented: true }, 60_000);
    expect((await store.takePending("p0"))?.consented).toBe(true);
    expect(await store.takePending("p0")).toBeUndefined();
    // its room is free again
    await store.putPending(pending("p3"), 60_000);
  });

  it("redeems a code once, then tells a replay until it would have expired", async () => {
    const store = new MemoryAuthStore();
    await store.putCode("h", code("g1"));
    expect(await store.takeCode("h")).toMatchObject({ code: { grantId: "g1" } });
    expect(await store.takeCode("h")).toMatchObject({ replayed: { grantId: "g1" } });
    expect(await store.takeCode("other")).toBeUndefined();
    await store.putCode("old", code("g2", -1));
    expect(await store.takeCode("old")).toBeUndefined();
  });

  it("keeps at most maxCodes: a redeemed code makes room, oldest first; a code not yet redeemed never does", async () => {
    const store = new MemoryAuthStore({ maxCodes: 3 });
    for (const h of ["a", "b", "c"]) await store.putCode(h, code(`g-${h}`));
    await expect(store.putCode("d", code("g-d"))).rejects.toBeInstanceOf(AuthStoreFullError);
    // c and b redeemed: the older code of the two (b) makes room for d
    expect(await store.takeCode("c")).toMatchObject({ code: { grantId: "g-c" } });
    expect(await store.takeCode("b")).toMatchObject({ code: { grantId: "g-b" } });
    await store.putCode("d", code("g-d"));
    expect(await store.takeCode("b")).toBeUndefined();
    expect(await store.takeCode("c")).toMatchObject({ replayed: { grantId: "g-c" } });
    await store.putCode("e", code("g-e"));
    await expect(store.putCode("f", code("g-f"))).rejects.toBeInstanceOf(AuthStoreFullError);
    // every code not yet redeemed is still there, once
    for (const h of ["a", "d", "e"])
      expect(await store.takeCode(h)).toMatchObject({ code: { grantId: `g-${h}` } });
    // an expired code's room comes back, whatever sweepMs says
    const swept = new MemoryAuthStore({ maxCodes: 1, sweepMs: 60_000 });
    await swept.putCode("old", code("g-old", -1));
    await swept.putCode("new", code("g-new"));
    expect(await swept.takeCode("new")).toMatchObject({ code: { grantId: "g-new" } });
  });

  it("refuses a grant beyond maxGrants instead of dropping a live one", async () => {
    const store = new MemoryAuthStore({ maxGrants: 2 });
    await store.putGrant(grant("a"));
    await store.putGrant(grant("b"));
    await expect(store.putGrant(grant("c"))).rejects.toBeInstanceOf(AuthStoreFullError);
    expect(await store.grantsOf("alice")).toEqual(["a", "b"]);
  });

  it("sweeps expired grants, so their room comes back", async () => {
    const store = new MemoryAuthStore({ maxGrants: 2, sweepMs: 0 });
    await store.putGrant(grant("a", "alice", -1));
    await store.putGrant(grant("b", "bob", -1));
    await store.putGrant(grant("c"));
    expect(store.size.grants).toBe(1);
    expect(await store.grantsOf("bob")).toEqual([]);
  });

  it("replaces a grant only while its refresh hash is the expected one", async () => {
    const store = new MemoryAuthStore();
    await store.putGrant(grant("a"));
    const next = { ...grant("a"), refreshHash: "h2", usedRefreshHashes: ["h-a"] };
    expect(await store.replaceGrant(next, "h-a")).toBe(true);
    expect(await store.replaceGrant({ ...next, refreshHash: "h3" }, "h-a")).toBe(false);
    expect((await store.getGrant("a"))?.refreshHash).toBe("h2");
    await store.deleteGrant("a");
    expect(await store.getGrant("a")).toBeUndefined();
    expect(await store.grantsOf("alice")).toEqual([]);
  });

  it("drops cached metadata documents before it refuses a registration", async () => {
    const store = new MemoryAuthStore({ maxClients: 2 });
    const client = (id: string, kind: "registered" | "metadata-document" = "registered") => ({
      client_id: id,
      kind,
      redirect_uris: ["http://127.0.0.1/cb"],
      token_endpoint_auth_method: "none" as const,
    });
    await store.putClient(client("https://a.example/doc", "metadata-document"), 60_000);
    await store.putClient(client("r1"));
    await store.putClient(client("r2"));
    expect(await store.getClient("https://a.example/doc")).toBeUndefined();
    await expect(store.putClient(client("r3"))).rejects.toBeInstanceOf(AuthStoreFullError);
    // a registered client saved with a time to live (not yet used) makes no room either
    await expect(store.putClient(client("r4"), 60_000)).rejects.toBeInstanceOf(AuthStoreFullError);
    // a copy goes out: changing it changes nothing stored
    const got = await store.getClient("r1");
    got!.redirect_uris.push("http://evil.example/");
    expect((await store.getClient("r1"))?.redirect_uris).toEqual(["http://127.0.0.1/cb"]);
  });

  it("writes keys only over the version it was told", async () => {
    const store = new MemoryAuthStore();
    const keys = { version: 1, keys: [] };
    expect(await store.casKeys(keys, 0)).toBe(false);
    expect(await store.casKeys(keys, undefined)).toBe(true);
    expect(await store.casKeys({ version: 2, keys: [] }, undefined)).toBe(false);
    expect(await store.casKeys({ version: 2, keys: [] }, 1)).toBe(true);
    expect((await store.getKeys())?.version).toBe(2);
  });

  it("counts hits per key in a window, with at most maxCounters counters", async () => {
    const store = new MemoryAuthStore({ maxCounters: 2 });
    expect(await store.hit("a", 60_000)).toBe(1);
    expect(await store.hit("a", 60_000)).toBe(2);
    expect(await store.hit("b", 60_000)).toBe(1);
    // at the cap a new counter is over any limit; the live ones go on counting
    expect(await store.hit("c", 60_000)).toBe(Number.MAX_SAFE_INTEGER);
    expect(store.size.counters).toBe(2);
    expect(await store.hit("a", 60_000)).toBe(3);
    const expiring = new MemoryAuthStore({ maxCounters: 1 });
    expect(await expiring.hit("x", -1)).toBe(1);
    expect(await expiring.hit("x", -1)).toBe(1);
    expect(await expiring.hit("y", 60_000)).toBe(1);
  });
});

describe("MemoryAuthStore's registered clients", () => {
  const client = (id: string) => ({
    client_id: id,
    kind: "registered" as const,
    redirect_uris: ["http://127.0.0.1/cb"],
    token_endpoint_auth_method: "none" as const,
  });

  it("are forgotten once unused for idleTtlMs, and each read starts that time again", async () => {
    const expired = new MemoryAuthStore({ idleTtlMs: 1, sweepMs: 0 });
    await expired.putClient(client("r1"));
    await expect.poll(() => expired.getClient("r1")).toBeUndefined();
    const kept = new MemoryAuthStore({ idleTtlMs: 60_000, maxClients: 1 });
    await kept.putClient(client("r1"));
    expect((await kept.getClient("r1"))?.client_id).toBe("r1");
    await expect(kept.putClient(client("r2"))).rejects.toBeInstanceOf(AuthStoreFullError);
    expect(() => new MemoryAuthStore({ idleTtlMs: 0 })).toThrow(RangeError);
  });

  it("make room once expired: a full store takes a new registration after they lapse", async () => {
    const store = new MemoryAuthStore({ idleTtlMs: 1, maxClients: 1 });
    await store.putClient(client("r1"));
    await expect
      .poll(() =>
        store.putClient(client("r2")).then(
          () => true,
          () => false,
        ),
      )
      .toBe(true);
    // r1 made room (r2 itself lapses within a millisecond: not read back, which would depend on the clock)
    expect(store.size.clients).toBe(1);
  });
});
