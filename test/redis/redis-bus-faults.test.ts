// RedisBus through the faults of real deployments (test/redis-deployments.ts), with its defaults (a
// deadline of 1 s, a probe every 5 s): on a Cluster events cross on sharded channels (PUBSUB
// SHARDCHANNELS on the channel's master), and cross again within seconds after the channel's master is
// killed (failover) and after every process restarts; on Sentinel the same after a sentinel is killed,
// after the master is killed, and after everything restarts. Each bus ends ready, one line per change.
// PICOMCP_FIGURES=1 prints how long each fault took to cross again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChangeEvent } from "../../src/bus.js";
import { RedisBus } from "../../src/redis/index.js";
import { type AnyClient, startCluster, startSentinel, withDeployment } from "../redis-deployments.js";
import { RUN, until } from "../redis-helpers.js";

const figures: string[] = [];
afterAll(() => {
  if (process.env.PICOMCP_FIGURES === "1") console.log(figures.join("\n"));
});

const DOWN =
  /^picomcp\/redis: Redis is unreachable \(.+\); change events reach this instance's clients only until it is back$/;
const BACK = "picomcp/redis: Redis is back; change events cross instances again";

/** Two instances' buses on one channel, each on a client of its own (as users create them). */
function pair(client: () => AnyClient, channel: string) {
  const lines: string[][] = [[], []];
  const heard: string[][] = [[], []];
  const relayed: string[][] = [[], []];
  const clients = [client(), client()];
  const buses = clients.map((c, i) => {
    const bus = new RedisBus(c, { channel, log: (l) => lines[i]!.push(l) });
    bus.subscribe((e: ChangeEvent) => {
      if (e.type === "resource_updated") heard[i]!.push(e.uri);
    });
    bus.onRelay((m) => relayed[i]!.push(m));
    return bus;
  });
  let n = 0;
  /** Publishes from `from` (an event and a relay) until the other hears both; resolves with the ms it took. */
  async function crosses(from: 0 | 1, ms = 30_000): Promise<number> {
    const to = 1 - from;
    const start = performance.now();
    await until(
      async () => {
        const mark = `mark-${from}-${++n}`;
        buses[from]!.publish({ type: "resource_updated", uri: `note://${mark}` });
        buses[from]!.relay(mark);
        // this mark heard within a few round trips, or the next one is sent
        const both = () => heard[to]!.includes(`note://${mark}`) && relayed[to]!.includes(mark);
        return until(both, 250, "").then(
          () => true,
          () => false,
        );
      },
      ms,
      `bus ${from} to cross to bus ${to}`,
    );
    return Math.round(performance.now() - start);
  }
  /** Resolves once both buses are ready again; checks each change had one line, ending in the recovery. */
  async function settled(): Promise<void> {
    await until(() => buses.every((b) => b.stats.ready), 30_000, "both buses to be ready");
    for (const l of lines) {
      for (const [i, line] of l.entries()) {
        if (i % 2 === 0) expect(line).toMatch(DOWN);
        else expect(line).toBe(BACK);
      }
      expect(l.length % 2).toBe(0);
    }
  }
  const close = () => {
    for (const b of buses) b.close();
    for (const c of clients) c.destroy();
  };
  return { buses, clients, lines, crosses, settled, close };
}

describe.runIf(withDeployment("cluster"))("RedisBus on a Redis Cluster, through its faults", () => {
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let p: ReturnType<typeof pair>;
  const channel = `${RUN}:bus`;
  beforeAll(async () => {
    cluster = await startCluster();
    p = pair(() => cluster.client(), channel);
    await Promise.all(p.buses.map((b) => b.ready));
  }, 60_000);
  afterAll(async () => {
    p?.close();
    await cluster?.stop();
  });

  it("crosses instances on sharded channels, each on the master of its slot", async () => {
    await p.crosses(0);
    await p.crosses(1);
    for (const ch of [channel, `${channel}:relay`]) {
      const owner = await cluster.masterOf(ch);
      expect((await owner.cli("PUBSUB", "SHARDCHANNELS")).split("\n")).toContain(ch);
      expect(await owner.cli("PUBSUB", "SHARDNUMSUB", ch)).toBe(`${ch}\n2`);
    }
    // no classic subscription anywhere
    for (const n of cluster.nodes) expect(await n.cli("PUBSUB", "CHANNELS", `${RUN}*`)).toBe("");
  });

  it("crosses again within seconds after the channel's master is killed and failed over", async () => {
    const owner = await cluster.masterOf(channel);
    const masters = await cluster.masterNodes();
    const start = performance.now();
    const killed = await cluster.killMaster(masters.indexOf(owner));
    const failover = Math.round(performance.now() - start);
    const [a, b] = [await p.crosses(0), await p.crosses(1)];
    figures.push(
      `cluster, master killed: failed over in ${failover} ms, bus crossing again ${failover + a} ms after the kill (${b} ms more the other way)`,
    );
    expect(
      (await (await cluster.masterOf(channel)).cli("PUBSUB", "SHARDNUMSUB", channel)).split("\n")[1],
    ).toBe("2");
    await cluster.restart(killed);
    await p.crosses(0);
    await p.settled();
  }, 90_000);

  it("crosses again within seconds after every process restarts", async () => {
    const start = performance.now();
    await cluster.restartAll();
    const restarted = Math.round(performance.now() - start);
    const [a, b] = [await p.crosses(0), await p.crosses(1)];
    figures.push(
      `cluster, everything restarted: healthy after ${restarted} ms, bus crossing again ${a} ms later (${b} ms more the other way)`,
    );
    await p.settled();
    for (const ch of [channel, `${channel}:relay`])
      expect(await (await cluster.masterOf(ch)).cli("PUBSUB", "SHARDNUMSUB", ch)).toBe(`${ch}\n2`);
  }, 90_000);
});

describe.runIf(withDeployment("sentinel"))("RedisBus on Sentinel, through its faults", () => {
  let set: Awaited<ReturnType<typeof startSentinel>>;
  let p: ReturnType<typeof pair>;
  beforeAll(async () => {
    set = await startSentinel();
    p = pair(() => set.client(), `${RUN}:bus`);
    await Promise.all(p.buses.map((b) => b.ready));
  }, 60_000);
  afterAll(async () => {
    p?.close();
    await set?.stop();
  });

  it("crosses instances, and still does after a sentinel is killed", async () => {
    await p.crosses(0);
    await p.crosses(1);
    await set.killSentinel(0);
    const [a, b] = [await p.crosses(0), await p.crosses(1)];
    figures.push(`sentinel, a sentinel killed: crossing ${a} ms / ${b} ms after`);
    await set.restart(set.sentinels[0]!);
    await p.crosses(0);
    await p.settled();
  }, 90_000);

  it("crosses again within seconds after every process restarts", async () => {
    const start = performance.now();
    await set.restartAll();
    const restarted = Math.round(performance.now() - start);
    const [a, b] = [await p.crosses(0), await p.crosses(1)];
    figures.push(
      `sentinel, everything restarted: healthy after ${restarted} ms, bus crossing again ${a} ms later (${b} ms more the other way)`,
    );
    await p.settled();
  }, 90_000);

  it("crosses again within seconds after the master is killed and failed over", async () => {
    const start = performance.now();
    await set.killMaster();
    const failover = Math.round(performance.now() - start);
    const [a, b] = [await p.crosses(0), await p.crosses(1)];
    figures.push(
      `sentinel, master killed: failed over in ${failover} ms, bus crossing again ${failover + a} ms after the kill (${b} ms more the other way)`,
    );
    // the last fault of the set: a restart right after a failover waits ~10 s for the sentinels
    await p.settled();
  }, 90_000);
});
