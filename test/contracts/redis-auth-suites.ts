// RedisAuthStore on one deployment: the auth store contract (two instances' stores on one prefix), and
// what only Redis has: every key expiring, a hash-tagged prefix, the subject's cap, the record cap, and
// a Redis that does not answer. Each deployment's file (test/contracts/redis-auth*.test.ts) runs it.
import { createClient } from "redis";
import { describe, expect, it } from "vitest";
import type { AuthStore, ClientRecord, GrantRecord } from "../../src/auth/store.js";
import { RedisAuthStore, type RedisAuthStoreOptions } from "../../src/redis/index.js";
import { slotOf } from "../../src/redis/link.js";
import type { Deployment, DeploymentKind } from "../redis-deployments.js";
import { faulty } from "../redis-helpers.js";
import { type AuthStoreTarget, authStoreContract } from "./auth-store-suite.js";
import { useRedisTargets, withDeployment } from "./redis-targets.js";
import { until } from "./support.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
let names = 0;
/** A key prefix no other test uses. */
const fresh = () => `picomcp:contract:auth:${++names}:`;

const plain = (url: string) => createClient({ url });

/** Calls `each` for every key under `prefix`, on a client of the master that holds it. */
async function eachKey(
  d: Deployment,
  prefix: string,
  each: (client: ReturnType<typeof plain>, key: string) => Promise<unknown>,
): Promise<void> {
  for (const url of await d.masters()) {
    const client = plain(url);
    await client.connect();
    try {
      for await (const keys of client.scanIterator({ MATCH: `${prefix.replace(/[[\]{}*?\\]/g, "\\$&")}*` }))
        for (const key of keys) await each(client, key);
    } finally {
      client.destroy();
    }
  }
}

/**
 * Moves the store's clock on by `ms` for the keys under `prefix`: each key's time to live `ms` shorter
 * (gone at zero), and each deadline a subject's index keeps (its scores) `ms` earlier.
 */
function advance(d: Deployment, prefix: string, ms: number): Promise<void> {
  return eachKey(d, prefix, async (client, key) => {
    if ((await client.type(key)) === "zset")
      for (const member of await client.zRange(key, 0, -1)) await client.zIncrBy(key, -ms, member);
    const ttl = await client.pTTL(key);
    if (ttl < 0) return;
    if (ttl - ms <= 0) await client.del(key);
    else await client.pExpire(key, ttl - ms);
  });
}

const grant = (subject: string, expiresAt: number, id: string, createdAt = 0): GrantRecord => ({
  id,
  clientId: "https://app.example/client.json",
  subject,
  resource: "https://mcp.example/mcp",
  scopes: [],
  refreshHash: `h-${id}`,
  usedRefreshHashes: [],
  createdAt,
  expiresAt,
});

/** Writes one record of every kind (a code taken, so its replay marker too). */
async function everyRecord(store: AuthStore): Promise<void> {
  const now = Date.now();
  const c: ClientRecord = {
    client_id: "c",
    kind: "registered",
    redirect_uris: [],
    token_endpoint_auth_method: "none",
  };
  await store.putClient({ ...c, redirect_uris: ["https://a.example/cb"] });
  await store.putClient({ ...c, client_id: "https://a.example/c.json", kind: "metadata-document" }, HOUR);
  await store.putPending(
    {
      id: "p",
      clientId: "c",
      redirectUri: "x",
      codeChallenge: "y",
      resource: "r",
      scopes: [],
      createdAt: now,
    },
    MINUTE,
  );
  await store.putCode("code", {
    clientId: "c",
    redirectUri: "x",
    codeChallenge: "y",
    resource: "r",
    scopes: [],
    identity: { subject: "ada" },
    grantId: "g",
    expiresAt: now + MINUTE,
  });
  expect(await store.takeCode("code")).toHaveProperty("code");
  await store.putGrant(grant("ada", now + HOUR, "g"));
  expect(await store.casKeys({ version: 1, keys: [] }, undefined)).toBe(true);
  expect(await store.hit("203.0.113.9", MINUTE)).toBe(1);
}

/** The auth store contract and RedisAuthStore's own tests on a deployment of `kind` of the file's own. */
export function redisAuthContracts(name: string, kind: DeploymentKind): void {
  const run = withDeployment(kind);
  const redis = useRedisTargets(kind, run);

  /** Two stores on one fresh prefix, on clients of their own; a healthy store logs nothing. */
  async function target(options: RedisAuthStoreOptions = {}): Promise<AuthStoreTarget & { prefix: string }> {
    const [one, two] = await Promise.all([redis.connected(), redis.connected()]);
    const prefix = options.prefix ?? fresh();
    const lines: string[] = [];
    const all = { ...options, prefix, log: (l: string) => lines.push(l) };
    return {
      prefix,
      store: new RedisAuthStore(one, all),
      peer: new RedisAuthStore(two, all),
      now: () => Date.now(),
      advance: (ms) => advance(redis.deployment(), prefix, ms),
      close() {
        void one.destroy();
        void two.destroy();
        expect(lines).toEqual([]);
      },
    };
  }

  describe.runIf(run)(name, () => {
    authStoreContract("RedisAuthStore", (options) => target(options), { shared: true });

    describe("RedisAuthStore, beyond the contract", () => {
      it("gives every key an expiry, a prefix with a hash tag too (all its keys then in its slot)", async () => {
        for (const prefix of [fresh(), `{auth-${++names}}:picomcp:`]) {
          const t = await target({ prefix });
          try {
            await everyRecord(t.store);
            const found: { [key: string]: number } = {};
            await eachKey(redis.deployment(), prefix, async (client, key) => {
              found[key.slice(prefix.length)] = await client.pTTL(key);
            });
            expect(Object.keys(found).sort()).toEqual(
              ["client:c", "client:https://a.example/c.json", "pending:p", "code:code", "grant:g"]
                .concat(["subject:ada", "keys", "hit:203.0.113.9"])
                .sort(),
            );
            for (const [key, ttl] of Object.entries(found)) expect([key, ttl > 0]).toEqual([key, true]);
            if (prefix.startsWith("{"))
              expect(new Set(Object.keys(found).map((k) => slotOf(prefix + k))).size).toBe(1);
          } finally {
            await t.close?.();
          }
        }
      });

      it("a grant past the cap whose delete fails stays listed (never live unlisted), and goes with the next sign-in", async () => {
        const client = await redis.connected();
        const prefix = fresh();
        let failing = false;
        // the delete of g1 (a script on its key with no arguments: DELETE_GRANT, or a read) fails
        const store = new RedisAuthStore(
          faulty(client, (keys, args) =>
            failing && keys[0] === `${prefix}grant:g1` && args.length === 0 ? "fail" : undefined,
          ),
          { prefix, maxGrantsPerSubject: 2, log: () => {} },
        );
        try {
          const now = Date.now();
          for (const i of [1, 2]) await store.putGrant(grant("ada", now + i * HOUR, `g${i}`));
          failing = true;
          await store.putGrant(grant("ada", now + 3 * HOUR, "g3"));
          failing = false;
          expect((await store.grantsOf("ada")).sort()).toEqual(["g1", "g2", "g3"]);
          expect(await store.getGrant("g1")).toEqual(grant("ada", now + HOUR, "g1"));
          await store.putGrant(grant("ada", now + 4 * HOUR, "g4"));
          expect((await store.grantsOf("ada")).sort()).toEqual(["g3", "g4"]);
          for (const id of ["g1", "g2"]) expect(await store.getGrant(id)).toBeUndefined();
        } finally {
          void client.destroy();
        }
      });

      it("refuses a record larger than maxRecordChars, naming the option, and writes nothing", async () => {
        const t = await target({ maxRecordChars: 1000 });
        const big: ClientRecord = {
          client_id: "big",
          kind: "registered",
          redirect_uris: ["https://a.example/cb"],
          token_endpoint_auth_method: "none",
          client_name: "x".repeat(1000),
        };
        await expect(t.store.putClient(big)).rejects.toThrow(
          /^picomcp\/redis: a client of 1\d{3} characters is larger than the auth store keeps \(maxRecordChars: 1000\)$/,
        );
        expect(await t.store.getClient("big")).toBeUndefined();
        await t.close?.();
      });

      it.runIf(kind === "single")(
        "rejects each call at once while Redis is gone, and serves again once it is back",
        async () => {
          const d = redis.deployment();
          const client = await redis.connected();
          const lines: string[] = [];
          // a deadline well beyond the bound below, so "at once" is told from "at the deadline" on a loaded
          // machine too (the store is back a deadline after its last failure: within the wait below)
          const store = new RedisAuthStore(client, {
            prefix: fresh(),
            log: (l) => lines.push(l),
            timeoutMs: 3_000,
          });
          try {
            await d.down();
            await until(() => !client.isReady, "the client to lose Redis");
            const started = performance.now();
            await expect(store.takeCode("h")).rejects.toThrow(
              "picomcp/redis: the Redis client is not connected",
            );
            await expect(store.getKeys()).rejects.toThrow("picomcp/redis: the Redis client is not connected");
            expect(performance.now() - started).toBeLessThan(2_500);
            expect(lines).toEqual([
              "picomcp/redis: Redis is unreachable (picomcp/redis: the Redis client is not connected); sign-in steps fail until it is back",
            ]);
            await d.up();
            await until(() => client.isReady, "the client to reconnect");
            await until(
              async () => (await store.hit("a", MINUTE)) > 0 && store.stats.ready,
              "the store back",
            );
            expect(lines[1]).toBe("picomcp/redis: Redis is back; sign-in steps are served again");
          } finally {
            if (!client.isReady) await d.up().catch(() => {});
            void client.destroy();
          }
        },
      );

      it("rejects each call within its deadline while Redis does not answer, says so once, and once when back", async () => {
        const client = await redis.connected();
        let fault: "hang" | "fail" | undefined = "hang";
        const lines: string[] = [];
        const store = new RedisAuthStore(
          faulty(client, () => fault),
          { prefix: fresh(), timeoutMs: 300, log: (l) => lines.push(l) },
        );
        try {
          const calls: [string, () => Promise<unknown>][] = [
            ["getClient", () => store.getClient("c")],
            ["takePending", () => store.takePending("p")],
            ["takeCode", () => store.takeCode("h")],
            ["replaceGrant", () => store.replaceGrant(grant("ada", Date.now() + HOUR, "g"), "h")],
            ["getKeys", () => store.getKeys()],
            ["casKeys", () => store.casKeys({ version: 1, keys: [] }, undefined)],
            ["hit", () => store.hit("a", MINUTE)],
          ];
          for (const [what, call] of calls) {
            const started = performance.now();
            const error = await call().then(
              () => new Error(`${what} answered`),
              (e: unknown) => e as Error,
            );
            const took = performance.now() - started;
            expect([what, error.message]).toEqual([
              what,
              "picomcp/redis: Redis did not answer within 300 ms",
            ]);
            expect(took).toBeGreaterThanOrEqual(290);
            expect(took).toBeLessThan(300 + 1_500);
          }
          // a failing connection rejects at once, as it said
          fault = "fail";
          await expect(store.takeCode("h")).rejects.toThrow("Socket closed unexpectedly");
          expect(lines).toEqual([
            "picomcp/redis: Redis is unreachable (picomcp/redis: Redis did not answer within 300 ms); sign-in steps fail until it is back",
          ]);
          expect(store.stats).toMatchObject({ ready: false, timeouts: calls.length, outages: 1 });
          fault = undefined;
          await until(async () => (await store.hit("a", MINUTE)) > 0 && store.stats.ready, "the store back");
          expect(lines[1]).toBe("picomcp/redis: Redis is back; sign-in steps are served again");
          expect(lines).toHaveLength(2);
        } finally {
          void client.destroy();
        }
      });
    });
  });
}
