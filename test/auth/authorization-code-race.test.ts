// A code replayed while its first redemption is under way (between takeCode and putGrant): the grant
// the first redemption saves is revoked all the same. The store pauses on a promise the test resolves.
import { describe, expect, it } from "vitest";
import { MemoryAuthStore } from "../../src/auth/index.js";
import type { GrantRecord } from "../../src/auth/store.js";
import { getCode, redeem, registerClient, useAuthServers } from "./as-helpers.js";

const serve = useAuthServers();

/** A MemoryAuthStore whose next putGrant waits for `release()` once it has been entered. */
class PausingStore extends MemoryAuthStore {
  entered!: Promise<GrantRecord>;
  release!: () => void;
  #enter!: (g: GrantRecord) => void;
  #gate!: Promise<void>;

  constructor(options: ConstructorParameters<typeof MemoryAuthStore>[0] = {}) {
    super(options);
    this.arm();
  }

  arm(): void {
    this.entered = new Promise((r) => {
      this.#enter = r;
    });
    this.#gate = new Promise((r) => {
      this.release = r;
    });
  }

  override async putGrant(grant: GrantRecord): Promise<void> {
    this.#enter(grant);
    await this.#gate;
    return super.putGrant(grant);
  }
}

describe("a code replayed during its first redemption", () => {
  it("revokes the grant the first redemption saves afterwards: no tokens come of it", async () => {
    const store = new PausingStore();
    const s = await serve({ store });
    const clientId = await registerClient(s.origin);
    const got = await getCode(s, clientId);
    const first = redeem(s, clientId, got);
    const grant = await store.entered;
    // the replay arrives while the first is between takeCode and putGrant
    expect(await redeem(s, clientId, got)).toMatchObject({
      status: 400,
      body: { error: "invalid_grant", error_description: expect.stringMatching(/already used/) },
    });
    store.release();
    expect(await first).toMatchObject({
      status: 400,
      body: { error: "invalid_grant", error_description: expect.stringMatching(/revoked/) },
    });
    expect(await store.getGrant(grant.id)).toBeUndefined();
    expect(await store.grantsOf(grant.subject)).toEqual([]);
  });

  it("revokes it as well when the store's counters are full (the replay mark not kept)", async () => {
    const store = new PausingStore({ maxCounters: 10 });
    const s = await serve({ store });
    const clientId = await registerClient(s.origin);
    const got = await getCode(s, clientId);
    for (let i = 0; store.size.counters < 10; i++) await store.hit(`filler:${i}`, 600_000);
    expect(await store.hit("one-more", 600_000)).toBe(Number.MAX_SAFE_INTEGER);
    const first = redeem(s, clientId, got);
    const grant = await store.entered;
    expect((await redeem(s, clientId, got)).status).toBe(400);
    store.release();
    expect(await first).toMatchObject({
      status: 400,
      body: { error: "invalid_grant", error_description: expect.stringMatching(/revoked/) },
    });
    expect(await store.getGrant(grant.id)).toBeUndefined();
  });

  it("a code redeemed once, with no replay, gives its tokens", async () => {
    const store = new PausingStore();
    store.release();
    const s = await serve({ store });
    const clientId = await registerClient(s.origin);
    const r = await redeem(s, clientId, await getCode(s, clientId));
    expect(r.status).toBe(200);
    expect(await store.getGrant((r.body.refresh_token as string).split(".")[0]!)).toBeDefined();
  });
});

describe("a code redeemed while the store's counters are full", () => {
  it("still gives its tokens: a counter that could not be kept is no replay", async () => {
    const store = new MemoryAuthStore({ maxCounters: 6 });
    const s = await serve({ store });
    const clientId = await registerClient(s.origin);
    const got = await getCode(s, clientId);
    // register's and authorize's address, network and total counters: the cap is reached
    expect(store.size.counters).toBe(6);
    const r = await redeem(s, clientId, got);
    expect(r.status).toBe(200);
  });
});
