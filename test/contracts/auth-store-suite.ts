// The auth store contract: what the authorization server relies on from any `AuthStore`
// (src/auth/store.ts). Each store runs it in a few lines (test/contracts/memory-auth.test.ts,
// test/contracts/redis-auth*.test.ts), giving a fresh store, its clock, and a way to move it on.
import { afterEach, describe, expect, it } from "vitest";
import type {
  AuthStore,
  ClientRecord,
  CodeRecord,
  GrantRecord,
  PendingAuthorization,
  StoredKeys,
} from "../../src/auth/store.js";
import { need } from "./support.js";

/** A fresh, empty store under test. */
export interface AuthStoreTarget {
  readonly store: AuthStore;
  /** `shared`: another instance's store on the same backend, which sees the same records. */
  readonly peer?: AuthStore;
  /** The store's clock (ms since the epoch): the one records' `expiresAt` are written on. */
  now(): number;
  /**
   * Moves the store's clock on by `ms`: an injected `now`, or for a backend that expires keys itself,
   * every key's time to live (and every deadline it keeps) `ms` shorter.
   */
  advance(ms: number): void | Promise<void>;
  close?(): void | Promise<void>;
}

/** What the store offers beyond the interface, so that the suite checks it too. */
export interface AuthStoreFeatures {
  /** Its backend is shared by instances: the target gives `peer`. */
  readonly shared?: boolean;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/**
 * How much before a deadline a record is checked still there: the real time a loaded machine may take
 * between a write and that check, on a backend whose keys expire by the real clock as well.
 */
const MARGIN = 15_000;
/** How many calls race for one record in the atomicity tests. */
const RACERS = 20;

let made = 0;
/** A name no other test of the run uses. */
const fresh = (what: string) => `${what}-${++made}-${Math.random().toString(36).slice(2, 8)}`;

/** A client with every field a store must keep, as plain JSON. */
function client(clientId = `https://app.example/${fresh("client")}.json`): ClientRecord {
  return {
    client_id: clientId,
    kind: "metadata-document",
    redirect_uris: ["http://127.0.0.1:33418/callback", "https://app.example/cb?x=1&y=ü"],
    token_endpoint_auth_method: "none",
    client_name: 'Notes "app" — ✓',
    client_uri: "https://app.example/",
    scope: "notes:read notes:write",
    grant_types: ["authorization_code", "refresh_token"],
    client_id_issued_at: 1_790_000_000,
    software_id: "notes",
    contacts: ["ada@example.com"],
  };
}

function pending(now: number, id = fresh("pending")): PendingAuthorization {
  return {
    id,
    clientId: "https://app.example/client.json",
    redirectUri: "http://127.0.0.1:33418/callback",
    state: "s t\u00e4te",
    codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    resource: "https://mcp.example/mcp",
    scopes: ["notes:read"],
    createdAt: now,
    signIn: { verifier: "v".repeat(43), nonce: fresh("nonce") },
  };
}

function code(now: number, ttlMs = MINUTE): CodeRecord {
  return {
    clientId: "https://app.example/client.json",
    redirectUri: "http://127.0.0.1:33418/callback",
    codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    resource: "https://mcp.example/mcp",
    scopes: ["notes:read", "notes:write"],
    identity: {
      subject: "user:ada",
      claims: { name: "Ada", email: "ada@example.com" },
      upstream: { accessToken: "gho_x", refreshToken: "ghr_y", expiresAt: now + HOUR, scope: "read:user" },
    },
    grantId: fresh("grant"),
    expiresAt: now + ttlMs,
  };
}

function grant(now: number, subject = fresh("subject"), ttlMs = HOUR): GrantRecord {
  return {
    id: fresh("grant"),
    clientId: "https://app.example/client.json",
    subject,
    resource: "https://mcp.example/mcp",
    scopes: ["notes:read"],
    claims: { name: "Ada" },
    upstream: { accessToken: "gho_x", tokenType: "bearer", idToken: "e.y.j" },
    refreshHash: fresh("hash"),
    usedRefreshHashes: [],
    createdAt: now,
    expiresAt: now + ttlMs,
  };
}

function keys(version: number, kid = fresh("kid")): StoredKeys {
  return {
    version,
    keys: [
      {
        jwk: { kid, alg: "ES256", kty: "EC", crv: "P-256", x: "x", y: "y", d: "d" },
        createdAt: 1_790_000_000_000,
      },
      {
        jwk: { kid: `${kid}-old`, alg: "ES256", kty: "EC", crv: "P-256", x: "x", y: "y", d: "d" },
        createdAt: 1_789_000_000_000,
        retiredUntil: 1_790_003_600_000,
      },
    ],
  };
}

/** The stores the racers call: half on the store, half on its peer when it has one. */
const sides = (t: AuthStoreTarget) => (t.peer ? [t.store, t.peer] : [t.store]);
const racers = <T>(t: AuthStoreTarget, call: (store: AuthStore, i: number) => Promise<T>) => {
  const s = sides(t);
  return Promise.all(Array.from({ length: RACERS }, (_, i) => call(s[i % s.length]!, i)));
};

/** Runs the auth store contract against the stores `make` builds (a fresh, empty one per test). */
export function authStoreContract(
  name: string,
  make: (options?: { maxGrantsPerSubject?: number }) => Promise<AuthStoreTarget>,
  features: AuthStoreFeatures = {},
): void {
  describe(`AuthStore contract: ${name}`, () => {
    const open: AuthStoreTarget[] = [];
    const target = async (options?: { maxGrantsPerSubject?: number }) => {
      const t = await make(options);
      open.push(t);
      return t;
    };
    afterEach(async () => {
      for (const t of open.splice(0)) await t.close?.();
    });

    describe("clients", () => {
      it("keeps a client as it was saved, every field, until replaced", async () => {
        const t = await target();
        const c = client();
        expect(await t.store.getClient(c.client_id)).toBeUndefined();
        await t.store.putClient(c);
        expect(await t.store.getClient(c.client_id)).toEqual(c);
        const renamed = { ...c, client_name: "Notes 2" };
        await t.store.putClient(renamed);
        expect(await t.store.getClient(c.client_id)).toEqual(renamed);
        expect(await t.store.getClient(`${c.client_id}x`)).toBeUndefined();
      });

      it("forgets a client saved with a time to live once it passed, and keeps one saved without", async () => {
        const t = await target();
        const [cached, registered] = [client(), client(fresh("registered"))];
        await t.store.putClient(cached, 10 * MINUTE);
        await t.store.putClient(registered);
        await t.advance(10 * MINUTE - MARGIN);
        expect(await t.store.getClient(cached.client_id)).toEqual(cached);
        await t.advance(MARGIN);
        expect(await t.store.getClient(cached.client_id)).toBeUndefined();
        await t.advance(24 * HOUR);
        expect(await t.store.getClient(registered.client_id)).toEqual(registered);
      });
    });

    describe("pending authorizations", () => {
      it("get leaves one in place; take removes it; a put replaces it", async () => {
        const t = await target();
        const p = pending(t.now());
        await t.store.putPending(p, 10 * MINUTE);
        expect(await t.store.getPending(p.id)).toEqual(p);
        expect(await t.store.getPending(p.id)).toEqual(p);
        const approved: PendingAuthorization = {
          ...p,
          consented: true,
          identity: { subject: "user:ada", claims: { name: "Ada" } },
        };
        await t.store.putPending(approved, 10 * MINUTE);
        expect(await t.store.takePending(p.id)).toEqual(approved);
        expect(await t.store.takePending(p.id)).toBeUndefined();
        expect(await t.store.getPending(p.id)).toBeUndefined();
        expect(await t.store.takePending(fresh("unknown"))).toBeUndefined();
      });

      it("is gone once its time to live passed", async () => {
        const t = await target();
        const p = pending(t.now());
        await t.store.putPending(p, 5 * MINUTE);
        await t.advance(5 * MINUTE - MARGIN);
        expect(await t.store.getPending(p.id)).toEqual(p);
        await t.advance(MARGIN);
        expect(await t.store.getPending(p.id)).toBeUndefined();
        expect(await t.store.takePending(p.id)).toBeUndefined();
      });

      it(`has one winner among ${RACERS} concurrent takes`, async () => {
        const t = await target();
        const p = pending(t.now());
        await t.store.putPending(p, 10 * MINUTE);
        const taken = await racers(t, (s) => s.takePending(p.id));
        expect(taken.filter((x) => x !== undefined)).toEqual([p]);
      });
    });

    describe("codes", () => {
      it("the first take gets the code; later ones get it as replayed until it would have expired", async () => {
        const t = await target();
        const [hash, c] = [fresh("code"), code(t.now())];
        await t.store.putCode(hash, c);
        expect(await t.store.takeCode(hash)).toEqual({ code: c });
        expect(await t.store.takeCode(hash)).toEqual({ replayed: c });
        await t.advance(MINUTE - MARGIN);
        expect(await (t.peer ?? t.store).takeCode(hash)).toEqual({ replayed: c });
        await t.advance(MARGIN);
        expect(await t.store.takeCode(hash)).toBeUndefined();
        expect(await t.store.takeCode(fresh("unknown"))).toBeUndefined();
      });

      it("a code never taken is gone at its expiry, not reported as replayed", async () => {
        const t = await target();
        const [hash, c] = [fresh("code"), code(t.now())];
        await t.store.putCode(hash, c);
        await t.advance(MINUTE);
        expect(await t.store.takeCode(hash)).toBeUndefined();
      });

      it(`has one winner among ${RACERS} concurrent takes; the others see a replay`, async () => {
        const t = await target();
        const [hash, c] = [fresh("code"), code(t.now())];
        await t.store.putCode(hash, c);
        const taken = await racers(t, (s) => s.takeCode(hash));
        expect(taken.filter((x) => x && "code" in x)).toEqual([{ code: c }]);
        expect(taken.filter((x) => x && "replayed" in x)).toHaveLength(RACERS - 1);
      });
    });

    describe("grants", () => {
      it("keeps a grant until its expiry, listed under its subject meanwhile", async () => {
        const t = await target();
        const g = grant(t.now());
        await t.store.putGrant(g);
        expect(await t.store.getGrant(g.id)).toEqual(g);
        expect(await t.store.grantsOf(g.subject)).toEqual([g.id]);
        await t.advance(HOUR - MARGIN);
        expect(await t.store.getGrant(g.id)).toEqual(g);
        await t.advance(MARGIN);
        expect(await t.store.getGrant(g.id)).toBeUndefined();
        expect(await t.store.grantsOf(g.subject)).toEqual([]);
      });

      it("lists each subject's grants apart", async () => {
        const t = await target();
        const [ada, bob] = [fresh("ada"), fresh("bob")];
        const mine = [grant(t.now(), ada), grant(t.now(), ada), grant(t.now(), ada, 2 * HOUR)];
        const his = grant(t.now(), bob);
        for (const g of [...mine, his]) await t.store.putGrant(g);
        expect((await t.store.grantsOf(ada)).sort()).toEqual(mine.map((g) => g.id).sort());
        expect(await t.store.grantsOf(bob)).toEqual([his.id]);
        expect(await t.store.grantsOf(fresh("nobody"))).toEqual([]);
        // the two that expire first go; the third stays listed
        await t.advance(HOUR);
        expect(await t.store.grantsOf(ada)).toEqual([mine[2]!.id]);
      });

      it("replaces a grant only while its refresh digest is the one expected", async () => {
        const t = await target();
        const g = grant(t.now());
        await t.store.putGrant(g);
        const rotated: GrantRecord = {
          ...g,
          refreshHash: fresh("hash"),
          usedRefreshHashes: [g.refreshHash],
          upstream: { accessToken: "gho_new", refreshToken: "ghr_new", expiresAt: t.now() + HOUR },
        };
        expect(await t.store.replaceGrant(rotated, g.refreshHash)).toBe(true);
        expect(await (t.peer ?? t.store).getGrant(g.id)).toEqual({ ...rotated, rev: 1 });
        // the old digest lost: nothing written
        const stale = { ...g, refreshHash: fresh("hash"), usedRefreshHashes: [g.refreshHash], rev: 1 };
        expect(await t.store.replaceGrant(stale, g.refreshHash)).toBe(false);
        expect(await t.store.getGrant(g.id)).toEqual({ ...rotated, rev: 1 });
        expect(await t.store.grantsOf(g.subject)).toEqual([g.id]);
      });

      it("replaces a grant only over the revision it was read at: an upstream refresh saved meanwhile is kept", async () => {
        const t = await target();
        const g = grant(t.now());
        await t.store.putGrant(g);
        // a token refresh reads the grant; meanwhile an upstream refresh is saved (on another replica)
        const read = (await t.store.getGrant(g.id))!;
        const seen = (await (t.peer ?? t.store).getGrant(g.id))!;
        const upstream = { accessToken: "gho_fresh", refreshToken: "ghr_fresh", expiresAt: t.now() + HOUR };
        expect(await (t.peer ?? t.store).replaceGrant({ ...seen, upstream }, seen.refreshHash)).toBe(true);
        // the rotation over what it read, with the right digest, loses: the spent upstream tokens are not written back
        const rotated = { ...read, refreshHash: fresh("hash"), usedRefreshHashes: [g.refreshHash] };
        expect(await t.store.replaceGrant(rotated, g.refreshHash)).toBe(false);
        const now = (await t.store.getGrant(g.id))!;
        expect(now).toEqual({ ...g, upstream, rev: 1 });
        // read again, it wins
        expect(await t.store.replaceGrant({ ...now, refreshHash: rotated.refreshHash }, g.refreshHash)).toBe(
          true,
        );
        expect(await (t.peer ?? t.store).getGrant(g.id)).toEqual({
          ...g,
          upstream,
          refreshHash: rotated.refreshHash,
          rev: 2,
        });
      });

      it("a replaced grant lives until its new expiry, and stays listed that long", async () => {
        const t = await target();
        const g = grant(t.now());
        await t.store.putGrant(g);
        const longer = { ...g, refreshHash: fresh("hash"), expiresAt: t.now() + 3 * HOUR };
        expect(await t.store.replaceGrant(longer, g.refreshHash)).toBe(true);
        await t.advance(2 * HOUR);
        expect(await t.store.getGrant(g.id)).toEqual({ ...longer, rev: 1 });
        expect(await t.store.grantsOf(g.subject)).toEqual([g.id]);
        await t.advance(HOUR);
        expect(await t.store.getGrant(g.id)).toBeUndefined();
        expect(await t.store.grantsOf(g.subject)).toEqual([]);
      });

      it(`has one winner among ${RACERS} concurrent rotations of one refresh token`, async () => {
        const t = await target();
        const g = grant(t.now());
        await t.store.putGrant(g);
        const next = Array.from({ length: RACERS }, () => ({ ...g, refreshHash: fresh("hash") }));
        const won = await racers(t, (s, i) => s.replaceGrant(next[i]!, g.refreshHash));
        expect(won.filter(Boolean)).toHaveLength(1);
        expect(await t.store.getGrant(g.id)).toEqual({ ...next[won.indexOf(true)], rev: 1 });
      });

      it("keeps at most maxGrantsPerSubject grants a subject: the ones that expire first are revoked", async () => {
        const t = await target({ maxGrantsPerSubject: 3 });
        const now = t.now();
        const five = [1, 2, 3, 4, 5].map((i) => grant(now, "ada", i * HOUR));
        for (const g of five) await t.store.putGrant(g);
        const ids = (gs: GrantRecord[]) => gs.map((g) => g.id).sort();
        expect((await t.store.grantsOf("ada")).sort()).toEqual(ids(five.slice(2)));
        for (const g of five.slice(0, 2)) expect(await t.store.getGrant(g.id)).toBeUndefined();
        // a new grant that expires first is kept all the same: the next-earliest goes
        const soon = grant(now, "ada", MINUTE);
        await t.store.putGrant(soon);
        expect((await t.store.grantsOf("ada")).sort()).toEqual(ids([soon, five[3]!, five[4]!]));
        expect(await (t.peer ?? t.store).getGrant(five[2]!.id)).toBeUndefined();
        expect(await (t.peer ?? t.store).getGrant(soon.id)).toEqual(soon);
        // another subject's grants are not counted with ada's
        const bob = grant(now, "bob");
        await t.store.putGrant(bob);
        expect(await t.store.grantsOf("bob")).toEqual([bob.id]);
        expect(await t.store.grantsOf("ada")).toHaveLength(3);
      });

      it("a deleted grant is gone at once: not read, not listed, not replaced", async () => {
        const t = await target();
        const [g, other] = [grant(t.now()), grant(t.now())];
        const sibling = grant(t.now(), g.subject);
        for (const x of [g, other, sibling]) await t.store.putGrant(x);
        await (t.peer ?? t.store).deleteGrant(g.id);
        expect(await t.store.getGrant(g.id)).toBeUndefined();
        expect(await t.store.grantsOf(g.subject)).toEqual([sibling.id]);
        expect(await t.store.replaceGrant({ ...g, refreshHash: fresh("hash") }, g.refreshHash)).toBe(false);
        expect(await t.store.getGrant(g.id)).toBeUndefined();
        expect(await t.store.getGrant(other.id)).toEqual(other);
        // deleting what is not there is no error
        await t.store.deleteGrant(g.id);
        await t.store.deleteGrant(fresh("unknown"));
      });
    });

    describe("signing keys", () => {
      it("are written only over the version expected", async () => {
        const t = await target();
        expect(await t.store.getKeys()).toBeUndefined();
        const [k1, k2] = [keys(1), keys(2)];
        expect(await t.store.casKeys(k1, undefined)).toBe(true);
        expect(await t.store.casKeys(keys(1), undefined)).toBe(false);
        expect(await t.store.getKeys()).toEqual(k1);
        expect(await t.store.casKeys(keys(3), 2)).toBe(false);
        expect(await t.store.casKeys(k2, 1)).toBe(true);
        expect(await t.store.casKeys(keys(2), 1)).toBe(false);
        expect(await (t.peer ?? t.store).getKeys()).toEqual(k2);
      });

      it(`have one winner among ${RACERS} concurrent first writes, and as many rotations`, async () => {
        const t = await target();
        const first = Array.from({ length: RACERS }, () => keys(1));
        const made = await racers(t, (s, i) => s.casKeys(first[i]!, undefined));
        expect(made.filter(Boolean)).toHaveLength(1);
        expect(await t.store.getKeys()).toEqual(first[made.indexOf(true)]);
        const next = Array.from({ length: RACERS }, () => keys(2));
        const rotated = await racers(t, (s, i) => s.casKeys(next[i]!, 1));
        expect(rotated.filter(Boolean)).toHaveLength(1);
        expect(await t.store.getKeys()).toEqual(next[rotated.indexOf(true)]);
      });
    });

    describe("hits", () => {
      it("counts hits on a key in a fixed window, each key apart, and starts over after it", async () => {
        const t = await target();
        const [a, b] = [fresh("203.0.113.7"), fresh("203.0.113.8")];
        expect(await t.store.hit(a, MINUTE)).toBe(1);
        expect(await t.store.hit(a, MINUTE)).toBe(2);
        expect(await t.store.hit(b, MINUTE)).toBe(1);
        await t.advance(MINUTE - MARGIN);
        expect(await (t.peer ?? t.store).hit(a, MINUTE)).toBe(3);
        await t.advance(MARGIN);
        expect(await t.store.hit(a, MINUTE)).toBe(1);
      });

      it(`counts ${RACERS} concurrent hits once each`, async () => {
        const t = await target();
        const key = fresh("198.51.100.1");
        const counts = await racers(t, (s) => s.hit(key, MINUTE));
        expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: RACERS }, (_, i) => i + 1));
      });
    });

    it.runIf(features.shared === true)("shares every record with another instance's store", async () => {
      const t = await target();
      const peer = need(t.peer, "peer");
      const [c, p, hash, k, g] = [client(), pending(t.now()), fresh("code"), keys(1), grant(t.now())];
      const cd = code(t.now());
      await t.store.putClient(c);
      await t.store.putPending(p, MINUTE);
      await t.store.putCode(hash, cd);
      await t.store.putGrant(g);
      await t.store.casKeys(k, undefined);
      expect(await peer.getClient(c.client_id)).toEqual(c);
      expect(await peer.takePending(p.id)).toEqual(p);
      expect(await t.store.getPending(p.id)).toBeUndefined();
      expect(await peer.takeCode(hash)).toEqual({ code: cd });
      expect(await t.store.takeCode(hash)).toEqual({ replayed: cd });
      expect(await peer.grantsOf(g.subject)).toEqual([g.id]);
      expect(await peer.getKeys()).toEqual(k);
      expect(await peer.hit("shared", MINUTE)).toBe(1);
      expect(await t.store.hit("shared", MINUTE)).toBe(2);
    });
  });
}
