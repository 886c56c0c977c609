// The test deployments themselves (test/redis-deployments.ts): a Cluster and a Sentinel set start
// healthy, their faults do what they say (a master killed is failed over, a paused master too, every
// process restarted loses no write) and a user's client works through each; stop leaves nothing behind.
import { existsSync } from "node:fs";
import { createClient } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import { startCluster, startSentinel, withDeployment } from "../redis-deployments.js";

/** A plain client of one node, connected. */
const plain = (url: string) => createClient({ url }).connect();

describe.runIf(withDeployment("cluster"))("a Redis Cluster of the test's own", () => {
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let client: ReturnType<typeof cluster.client>;
  afterAll(async () => {
    client?.destroy();
    await cluster?.stop();
    // every process gone, and its directory
    for (const n of cluster?.nodes ?? []) {
      expect(n.running).toBe(false);
      expect(existsSync(n.dir)).toBe(false);
    }
  });

  it("starts with 3 masters, a replica each; a key's master is the one that serves it", async () => {
    cluster = await startCluster();
    const roles = await Promise.all(cluster.nodes.map((n) => n.role()));
    expect(roles.filter((r) => r === "master")).toHaveLength(3);
    expect(roles.filter((r) => r === "slave")).toHaveLength(3);
    client = cluster.client();
    client.on("error", () => {});
    await client.connect();
    await cluster.resetStats();
    for (const key of ["a", "b", "c", "{a}:d"]) await client.set(key, key);
    for (const key of ["a", "b", "c", "{a}:d"]) {
      const owner = await cluster.masterOf(key);
      // the owner answers for the key itself, where any other master would answer MOVED
      const direct = await plain(owner.url);
      expect(await direct.get(key)).toBe(key);
      direct.destroy();
    }
    // each SET counted on its key's master alone
    const sets = await Promise.all(
      (await cluster.masterNodes()).map(async (m) => (await m.commandStats()).set ?? 0),
    );
    const expected = await Promise.all(
      (await cluster.masterNodes()).map(async (m) => {
        let n = 0;
        for (const key of ["a", "b", "c", "{a}:d"]) if ((await cluster.masterOf(key)) === m) n++;
        return n;
      }),
    );
    expect(sets).toEqual(expected);
  });

  it("fails a killed master over to its replica; the client goes on, no acknowledged write lost", async () => {
    const owner = await cluster.masterOf("a");
    const index = (await cluster.masterNodes()).indexOf(owner);
    await client.set("a", "before the kill");
    // the write is on the replica before the kill (replication is asynchronous)
    expect(await client.sendCommand("a", false, ["WAIT", "1", "5000"])).toBe(1);
    const killed = await cluster.killMaster(index);
    expect(killed).toBe(owner);
    expect(owner.running).toBe(false);
    expect(await cluster.masterOf("a")).not.toBe(owner);
    await expect.poll(() => client.get("a").catch(String)).toBe("before the kill");
    await cluster.restart(owner);
    expect(await owner.role()).toBe("slave");
  });

  it("a master paused past the node timeout is failed over; resumed, it serves again as a replica", async () => {
    const owner = await cluster.masterOf("b");
    cluster.pause(owner);
    expect(owner.answering).toBe(false);
    await expect.poll(async () => (await cluster.masterOf("b")) !== owner).toBe(true);
    await cluster.resume(owner);
    expect(await owner.role()).toBe("slave");
    await expect.poll(() => client.get("b").catch(String)).toBe("b");
  });

  it("restarted all at once, it comes back with every write", async () => {
    await client.set("c", "before the restart");
    await cluster.restartAll();
    for (const n of cluster.nodes) expect(n.answering).toBe(true);
    await expect.poll(() => client.get("c").catch(String)).toBe("before the restart");
    expect(await client.get("{a}:d")).toBe("{a}:d");
  });
});

describe.runIf(withDeployment("sentinel"))("a Sentinel set of the test's own", () => {
  let set: Awaited<ReturnType<typeof startSentinel>>;
  let client: ReturnType<typeof set.client>;
  afterAll(async () => {
    await client?.destroy();
    await set?.stop();
    for (const n of set?.nodes ?? []) {
      expect(n.running).toBe(false);
      expect(existsSync(n.dir)).toBe(false);
    }
  });

  it("starts with a master, its replica and three sentinels that agree", async () => {
    set = await startSentinel();
    expect(await Promise.all(set.data.map((n) => n.role()))).toEqual(["master", "slave"]);
    expect(await Promise.all(set.sentinels.map((n) => n.role()))).toEqual([
      "sentinel",
      "sentinel",
      "sentinel",
    ]);
    expect(await set.master()).toBe(set.data[0]);
    client = set.client();
    client.on("error", () => {});
    await client.connect();
    await client.set("k", "1");
  });

  it("restarted all at once, it comes back with every write", async () => {
    await client.set("k", "before the restart");
    await set.restartAll();
    await expect.poll(() => client.get("k").catch(String)).toBe("before the restart");
  });

  it("a sentinel killed and started again: the set stays healthy", async () => {
    await set.killSentinel(0);
    expect(set.sentinels[0]!.running).toBe(false);
    await client.set("k", "one sentinel down");
    await set.restart(set.sentinels[0]!);
    expect(await set.sentinels[0]!.role()).toBe("sentinel");
  });

  it("fails a killed master over to the replica; the client goes on, no acknowledged write lost", async () => {
    const old = await set.master();
    const direct = await plain(old.url);
    await direct.set("k", "before the kill");
    expect(await direct.sendCommand(["WAIT", "1", "5000"])).toBe(1);
    direct.destroy();
    await set.killMaster();
    expect(await set.master()).not.toBe(old);
    await expect.poll(() => client.get("k").catch(String)).toBe("before the kill");
    await expect.poll(() => client.set("k", "after").catch(String)).toBe("OK");
  });
});
