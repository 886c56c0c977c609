// RedisSessionStore repairs what a failed step leaves, on a real redis-server (a step made to fail by
// a key of the wrong type, so Redis refuses it): a push of the caps' score that fails is tried again
// by the next request and puts back a place that lapsed meanwhile (a live session stays counted); a
// create whose record could not be written leaves no session and holds no place; a place given back
// after a failed create is given back even when the first tries fail (those made to fail by a wrapper
// of the real client, the one step Redis cannot be made to refuse alone).
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisBus, RedisSessionStore } from "../../src/redis/index.js";
import { RUN, useRedis, withRedis } from "../redis-helpers.js";

let redis: { url: string; stop(): Promise<void> };
let client: ReturnType<typeof createClient>;
let bus: RedisBus;

beforeAll(async () => {
  if (!withRedis) return;
  redis = await useRedis();
  client = createClient({ url: redis.url });
  await client.connect();
  bus = new RedisBus(createClient({ url: redis.url }), { log: () => {} });
  await bus.ready;
});

afterAll(async () => {
  bus?.close();
  client?.destroy();
  await redis?.stop();
});

const record = (caller: string) => ({
  protocolVersion: "2025-11-25",
  capabilities: {},
  authenticated: false,
  caller,
  subscriptions: [],
});

describe.skipIf(!withRedis)("RedisSessionStore repairs a failed step", () => {
  it("a push to the caller's set that failed is tried again by the next request, and puts the lapsed place back", async () => {
    const prefix = `picomcp:${RUN}:push:`;
    const lines: string[] = [];
    const store = new RedisSessionStore(client, { bus, prefix, log: (l) => lines.push(l) });
    const caller = "anonymous:10.0.0.1";
    const mine = `${prefix}caller:${caller}`;
    const caps = { ttlMs: 600_000, perCaller: 1, total: 100 };
    const a = "a".repeat(32);
    expect(await store.create(a, record(caller), caps)).toBe("ok");
    // the session has outlived its score in the sets (as after most of its time to live idle)
    await client.hSet(`${prefix}s:${a}`, "e", "0");
    // its caller's set refuses the push (WRONGTYPE): the request is served all the same
    await client.del(mine);
    await client.set(mine, "not a set");
    expect((await store.touch(a, caps.ttlMs))?.caller).toBe(caller);
    expect(await client.type(mine)).toBe("string");
    // the set's old score lapses, and its key with it
    await client.del(mine);
    // the next request pushes again, and the place is back: the caller is at its cap
    expect((await store.touch(a, caps.ttlMs))?.caller).toBe(caller);
    const score = await client.zScore(mine, a);
    expect(score).toBeGreaterThan(Date.now() + caps.ttlMs);
    expect(await store.create("b".repeat(32), record(caller), caps)).toBe("caller");
    // both sets took it: the hash notes the score, and a request in between pushes no more
    expect(Number(await client.hGet(`${prefix}s:${a}`, "e"))).toBe(score);
    // Redis answered every call: no outage told
    expect(lines).toEqual([]);
  });

  it("a create whose record fails to be written leaves no session and holds no place", async () => {
    const prefix = `picomcp:${RUN}:write:`;
    const store = new RedisSessionStore(client, { bus, prefix, log: () => {} });
    const caller = "anonymous:10.0.0.2";
    const caps = { ttlMs: 1_800_000, perCaller: 1, total: 100 };
    const a = "a".repeat(32);
    // the record's key holds something else: Redis refuses the WRITE
    await client.set(`${prefix}s:${a}`, "not a hash");
    await expect(store.create(a, record(caller), caps)).rejects.toThrow(/WRONGTYPE/);
    // the client got an error and never learned the id: nothing of it is left, nothing counts
    expect(await client.exists(`${prefix}s:${a}`)).toBe(0);
    expect(await client.zCard(`${prefix}caller:${caller}`)).toBe(0);
    expect(await client.zCard(`${prefix}all`)).toBe(0);
    expect(await store.create("b".repeat(32), record(caller), caps)).toBe("ok");
    expect(await client.zRange(`${prefix}caller:${caller}`, 0, -1)).toEqual(["b".repeat(32)]);
  });

  it("a place reserved by a create that failed is given back, though the first releases fail", async () => {
    const prefix = `picomcp:${RUN}:release:`;
    let failing = 2;
    const released: string[] = [];
    type Eval = (sha: string, o: { keys: string[]; arguments: string[] }) => Promise<unknown>;
    // the releases (one id, no other argument) of the caller's set fail twice, as Redis failing would
    const wrap = (c: typeof client): typeof client =>
      new Proxy(c, {
        get(target, p) {
          if (p === "withCommandOptions")
            return (o: unknown) => wrap((target.withCommandOptions as (o: unknown) => typeof client)(o));
          const v = Reflect.get(target, p) as unknown;
          if (p !== "evalSha" && p !== "EVAL") return typeof v === "function" ? v.bind(target) : v;
          return (sha: string, o: { keys: string[]; arguments: string[] }) => {
            if (o.arguments.length === 1 && o.keys[0]!.includes(":caller:")) {
              released.push(o.keys[0]!);
              if (failing-- > 0) return Promise.reject(new Error("LOADING Redis is loading the dataset"));
            }
            return (v as Eval).call(target, sha, o);
          };
        },
      });
    const store = new RedisSessionStore(wrap(client), { bus, prefix, timeoutMs: 50, log: () => {} });
    const caller = "anonymous:10.0.0.3";
    const caps = { ttlMs: 1_800_000, perCaller: 1, total: 100 };
    // the total's set refuses its reservation; the caller's place was reserved and must go back
    await client.set(`${prefix}all`, "not a set");
    await expect(store.create("a".repeat(32), record(caller), caps)).rejects.toThrow(/WRONGTYPE/);
    await expect.poll(() => client.zCard(`${prefix}caller:${caller}`), { timeout: 10_000 }).toBe(0);
    expect(released.length).toBe(3);
    await client.del(`${prefix}all`);
    expect(await store.create("b".repeat(32), record(caller), caps)).toBe("ok");
  });
});
