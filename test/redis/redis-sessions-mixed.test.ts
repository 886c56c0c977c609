// A mixed fleet on one real redis-server, as during a rolling deploy: the release before's
// RedisSessionStore (test/fixtures/previous-session-store.js: scripts on the hash and both caps' sets at
// once, scores at the session's expiry) beside this one (one key per script, scores at the expiry plus a
// slack). Each serves, changes and ends the sessions the other made, and the caps hold across both. Of
// this release alone: the slack (an idle session's places outlive it by at most the slack, an ended one's
// go at once) and what moving the places on costs (three commands, once per slack of a busy session).
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionRecord } from "../../src/http/session-store.js";
import type { RedisBus } from "../../src/redis/index.js";
import { RedisSessionStore, slackOf } from "../../src/redis/session-store.js";
import { RedisSessionStore as PreviousStore } from "../fixtures/previous-session-store.js";
import { useRedis, withRedis } from "../redis-helpers.js";

/** The relay is no part of these tests. */
const NO_BUS = { relay: () => {}, onRelay: () => () => {} } as unknown as RedisBus;
const RECORD: SessionRecord = {
  protocolVersion: "2025-11-25",
  capabilities: { elicitation: {} },
  clientInfo: { name: "c", version: "1" },
  principal: "ada",
  authenticated: true,
  caller: "principal:ada",
  subscriptions: [],
};
const READ = { ...RECORD, logLevel: undefined, home: undefined };
const hex = () => crypto.randomUUID().replaceAll("-", "");

let redis: { url: string; stop(): Promise<void> };
let client: ReturnType<typeof createClient>;
let prefixes = 0;

beforeAll(async () => {
  if (!withRedis) return;
  redis = await useRedis();
  client = createClient({ url: redis.url });
  client.on("error", () => {});
  await client.connect();
});
afterAll(async () => {
  client?.destroy();
  await redis?.stop();
});

/** Both releases on one fresh prefix, each on a client of its own; the keys it names. */
async function fleet() {
  const prefix = `picomcp:mixed:${++prefixes}:`;
  const [a, b] = [createClient({ url: redis.url }), createClient({ url: redis.url })];
  for (const c of [a, b]) {
    c.on("error", () => {});
    await c.connect();
  }
  const log: string[] = [];
  const previous = new PreviousStore(a, { bus: NO_BUS, prefix, log: (l) => void log.push(l) });
  const current = new RedisSessionStore(b, { bus: NO_BUS, prefix, log: (l) => void log.push(l) });
  return {
    previous,
    current,
    log,
    hash: (id: string) => `${prefix}s:${id}`,
    caller: (who: string) => `${prefix}caller:${who}`,
    all: `${prefix}all`,
    close() {
      a.destroy();
      b.destroy();
      expect(log).toEqual([]);
    },
  };
}

describe.runIf(withRedis)("a fleet of the release before and this one on one Redis", () => {
  it("this release serves a session the one before made: its places moved on by the first touch, once", async () => {
    const f = await fleet();
    const ttl = 60_000;
    const caps = { ttlMs: ttl, perCaller: 10, total: 100 };
    const id = hex();
    expect(await f.previous.create(id, RECORD, caps)).toBe("ok");
    const before = await client.zScore(f.all, id);
    const calls = f.current.stats.calls;
    expect(await f.current.touch(id, ttl)).toEqual(READ);
    // no score of its own in the hash: the touch pushed one into both sets, then the hash noted it (four commands)
    expect(f.current.stats.calls - calls).toBe(4);
    const score = Number(await client.hGet(f.hash(id), "e"));
    expect([await client.zScore(f.all, id), await client.zScore(f.caller("principal:ada"), id)]).toEqual([
      score,
      score,
    ]);
    expect(score).toBeGreaterThan(before!);
    const expiry = Number(await client.sendCommand(["PEXPIRETIME", f.hash(id)]));
    expect(score - expiry).toBe(slackOf(ttl));
    // the next touch: one command
    expect(await f.current.touch(id, ttl)).toEqual(READ);
    expect(f.current.stats.calls - calls).toBe(5);
    // both change it, both read the change
    await f.previous.update(id, { logLevel: "debug", subscribe: ["note://a"] });
    expect(await f.current.touch(id, ttl)).toMatchObject({ logLevel: "debug", subscriptions: ["note://a"] });
    await f.current.update(id, { unsubscribe: ["note://a"] });
    expect(await f.previous.touch(id, ttl, { claim: "A" })).toMatchObject({ subscriptions: [], home: "A" });
    // ended by this release: gone from the hash and both sets
    expect(await f.current.end(id)).toBe(true);
    expect(await f.previous.touch(id, ttl)).toBeUndefined();
    expect([await client.zScore(f.all, id), await client.exists(f.caller("principal:ada"))]).toEqual([
      null,
      0,
    ]);
    f.close();
  });

  it("the release before serves and ends a session this one made", async () => {
    const f = await fleet();
    const caps = { ttlMs: 60_000, perCaller: 10, total: 100 };
    const id = hex();
    expect(await f.current.create(id, RECORD, caps)).toBe("ok");
    expect(await f.previous.touch(id, caps.ttlMs)).toEqual(READ);
    await f.current.update(id, { logLevel: "info" });
    expect((await f.previous.touch(id, caps.ttlMs))?.logLevel).toBe("info");
    expect((await f.current.touch(id, caps.ttlMs))?.logLevel).toBe("info");
    expect(await f.previous.end(id)).toBe(true);
    expect(await f.current.touch(id, caps.ttlMs)).toBeUndefined();
    expect(await f.current.end(id)).toBe(false);
    expect([await client.zScore(f.all, id), await client.zScore(f.caller("principal:ada"), id)]).toEqual([
      null,
      null,
    ]);
    f.close();
  });

  it("holds a caller's share and the total across both releases", async () => {
    const f = await fleet();
    const caps = { ttlMs: 60_000, perCaller: 2, total: 3 };
    const [a, b, c] = [hex(), hex(), hex()];
    expect(await f.previous.create(a, RECORD, caps)).toBe("ok");
    expect(await f.current.create(b, RECORD, caps)).toBe("ok");
    expect(await f.previous.create(hex(), RECORD, caps)).toBe("caller");
    expect(await f.current.create(hex(), RECORD, caps)).toBe("caller");
    expect(await f.current.create(c, { ...RECORD, caller: "principal:bo" }, caps)).toBe("ok");
    // both full: the caller's share is the answer
    expect(await f.current.create(hex(), RECORD, caps)).toBe("caller");
    expect(await f.previous.create(hex(), { ...RECORD, caller: "principal:cy" }, caps)).toBe("total");
    expect(await f.current.create(hex(), { ...RECORD, caller: "principal:cy" }, caps)).toBe("total");
    // a refusal takes back what it reserved: the total holds the three, the refused caller nothing
    expect(await client.zCard(f.all)).toBe(3);
    expect(await client.exists(f.caller("principal:cy"))).toBe(0);
    expect(await f.current.end(a)).toBe(true);
    expect(await f.previous.create(hex(), RECORD, caps)).toBe("ok");
    expect(await f.previous.end(b)).toBe(true);
    expect(await f.current.create(hex(), RECORD, caps)).toBe("ok");
    f.close();
  });
});

describe.runIf(withRedis)("RedisSessionStore: the caps' sets and their slack", () => {
  it("holds an idle session's places at most the slack past its expiry, an ended one's not at all", async () => {
    const f = await fleet();
    const ttl = 400;
    const caps = { ttlMs: ttl, perCaller: 10, total: 100 };
    const id = hex();
    expect(await f.current.create(id, RECORD, caps)).toBe("ok");
    const expiry = Number(await client.sendCommand(["PEXPIRETIME", f.hash(id)]));
    for (const set of [f.all, f.caller("principal:ada")]) {
      const score = (await client.zScore(set, id))!;
      // never before the record expires (a live session is always counted), at most the slack after it
      expect(score - expiry).toBeGreaterThanOrEqual(0);
      expect(score - expiry).toBeLessThanOrEqual(slackOf(ttl));
    }
    const ended = hex();
    expect(await f.current.create(ended, RECORD, caps)).toBe("ok");
    expect(await f.current.end(ended)).toBe(true);
    expect([
      await client.zScore(f.all, ended),
      await client.zScore(f.caller("principal:ada"), ended),
    ]).toEqual([null, null]);
    f.close();
  });

  it("moves a busy session's places on only when they would lapse before it: three commands, once per slack", async () => {
    const f = await fleet();
    const ttl = 400; // a slack of 100 ms
    const id = hex();
    expect(await f.current.create(id, RECORD, { ttlMs: ttl, perCaller: 10, total: 100 })).toBe("ok");
    const calls = f.current.stats.calls;
    let touches = 0;
    const began = Date.now();
    while (Date.now() - began < 1_000) {
      expect(await f.current.touch(id, ttl)).toEqual(READ);
      touches++;
      // after every touch both places hold at least as long as the session
      const expiry = Number(await client.sendCommand(["PEXPIRETIME", f.hash(id)]));
      for (const set of [f.all, f.caller("principal:ada")])
        expect((await client.zScore(set, id))!).toBeGreaterThanOrEqual(expiry);
    }
    // both sets, then the hash notes the score
    const pushes = (f.current.stats.calls - calls - touches) / 3;
    expect(Number.isInteger(pushes)).toBe(true);
    // at most one per slack (100 ms) of the second, give or take the first
    expect(pushes).toBeGreaterThanOrEqual(1);
    expect(pushes).toBeLessThanOrEqual(1_000 / slackOf(ttl) + 2);
    console.log(
      `a busy session (time to live ${ttl} ms, slack ${slackOf(ttl)} ms): ${touches} touches, ${pushes} of them moved its places on (3 commands each)`,
    );
    f.close();
  });
});
