// The clients users create are taken as they are: a node-redis client, cluster client and Sentinel
// client are each a RedisClient without a cast (checked by `npm run typecheck`), and a cluster client
// is told from the others by what it has.
import { createClient, createCluster, createSentinel } from "redis";
import { describe, expect, it } from "vitest";
import type { RedisClient } from "../../src/redis/index.js";
import { Link, slotOf } from "../../src/redis/link.js";

describe("the clients picomcp/redis takes", () => {
  it("takes createClient(), createCluster() and createSentinel() as they are, and knows a cluster", () => {
    const single: RedisClient = createClient({ url: "redis://127.0.0.1:1" });
    const cluster: RedisClient = createCluster({ rootNodes: [{ url: "redis://127.0.0.1:1" }] });
    const sentinel: RedisClient = createSentinel({
      name: "picomcp",
      sentinelRootNodes: [{ host: "127.0.0.1", port: 1 }],
    });
    const line = { down: "", back: "" };
    expect([single, cluster, sentinel].map((c) => new Link(c, line).cluster)).toEqual([false, true, false]);
  });

  it("computes the slot of a key as Redis Cluster does", () => {
    // the values CLUSTER KEYSLOT answers (and the cluster specification's example: "123456789" is 0x31C3)
    expect(slotOf("123456789")).toBe(0x31c3 % 16384);
    expect(slotOf("foo")).toBe(12182);
    expect(slotOf("{user1000}.following")).toBe(slotOf("{user1000}.followers"));
    expect(slotOf("{user1000}.following")).toBe(slotOf("user1000"));
    // an empty tag is no tag: the whole key is hashed
    expect(slotOf("foo{}{bar}")).not.toBe(slotOf("bar"));
    expect(slotOf("foo{{bar}}zap")).toBe(slotOf("{bar"));
    expect(slotOf("foo{bar}{zap}")).toBe(slotOf("bar"));
  });
});
