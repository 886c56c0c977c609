// A real Sentinel set for the tests: a master, a replica and three sentinels on loopback ports; its faults
// (the master killed, a sentinel killed, a node paused, everything restarted) resolve once the sentinels
// agree on a master that takes writes (polled, never slept on).
import { join } from "node:path";
import { freePort, until } from "./redis-helpers.js";
import {
  type Deployment,
  HEALTHY_MS,
  info,
  Node,
  needRedisCli,
  newSentinel,
  PERSIST,
  scratch,
  startOnFreePorts,
} from "./redis-nodes.js";

/** The Sentinel set's master name. */
export const SENTINEL_NAME = "picomcp";

/**
 * A Sentinel set: a master, a replica and three sentinels (quorum 2) that fail the master over after a
 * second of silence. Resolves once the sentinels agree on the master, see each other and the replica is in sync.
 */
export async function startSentinel() {
  needRedisCli();
  const dir = scratch("sentinel");
  const nodes: Node[] = [];
  const data: Node[] = [];
  const sentinels: Node[] = [];
  const monitor = (mp: number) =>
    [
      `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${mp} 2`,
      `sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
      `sentinel failover-timeout ${SENTINEL_NAME} 3000`,
    ].join("\n");

  /** The master's port as every answering sentinel says, if they agree. */
  async function agreed(): Promise<number | undefined> {
    const said = new Set<string>();
    for (const s of sentinels.filter((s) => s.answering)) {
      said.add(await s.cli("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SENTINEL_NAME).catch(() => "?"));
    }
    if (said.size !== 1) return undefined;
    const port = Number([...said][0]!.split("\n")[1]);
    return Number.isInteger(port) ? port : undefined;
  }

  /** Whether the sentinels agree on an answering master that takes writes, see 3 sentinels, and its running replicas are in sync. */
  async function healthy(): Promise<boolean> {
    const port = await agreed();
    const now = data.find((n) => n.port === port);
    if (!now?.answering || (await now.role()) !== "master") return false;
    for (const s of sentinels.filter((s) => s.answering)) {
      const line = info(await s.cli("INFO", "sentinel").catch(() => "")).master0 ?? "";
      if (!line.includes("status=ok") || !line.includes("sentinels=3")) return false;
    }
    const replicas = data.filter((n) => n !== now && n.answering);
    const state = info(await now.cli("INFO", "replication").catch(() => ""));
    if (Number(state.connected_slaves) !== replicas.length) return false;
    for (const r of replicas) {
      const rs = info(await r.cli("INFO", "replication").catch(() => ""));
      if (rs.master_port !== String(now.port) || rs.master_link_status !== "up") return false;
    }
    return (await now.cli("SET", "picomcp:deployment:probe", "1").catch(() => "")) === "OK";
  }
  const settled = (what: string) => until(healthy, HEALTHY_MS, what);

  try {
    const dirOf = (name: string) => join(dir.root, name);
    const master = await startOnFreePorts(
      nodes,
      async () => new Node("master", await freePort(), dirOf("master"), PERSIST),
    );
    const replicaOf = `${PERSIST}\nreplicaof 127.0.0.1 ${master.port}`;
    await startOnFreePorts(
      nodes,
      async () => new Node("replica", await freePort(), dirOf("replica"), replicaOf),
    );
    data.push(...nodes);
    const sentinel = async (i: number) =>
      new Node(`sentinel ${i}`, await freePort(), dirOf(`s${i}`), monitor(master.port), { sentinel: true });
    await Promise.all([0, 1, 2].map((i) => startOnFreePorts(nodes, () => sentinel(i))));
    sentinels.push(...nodes.slice(2).sort((a, b) => a.name.localeCompare(b.name)));
    await settled("the Sentinel set to be ready");
  } catch (error) {
    await dir.remove(nodes);
    throw error;
  }
  const sentinelRootNodes = sentinels.map((s) => ({ host: "127.0.0.1", port: s.port }));
  const current = async () => {
    const port = await agreed();
    const node = data.find((n) => n.port === port);
    if (!node) throw new Error("the sentinels do not agree on a master");
    return node;
  };
  const deployment = {
    kind: "sentinel" as const,
    nodes,
    data,
    sentinels,
    sentinelRootNodes,
    /** A Sentinel client of the set (not connected: the caller or the store connects it). */
    client: () => newSentinel(SENTINEL_NAME, sentinelRootNodes),
    /** The data node the sentinels name master now. */
    master: current,
    async masters(): Promise<string[]> {
      return [(await current()).url];
    },
    /** Kills the master (SIGKILL); resolves once the sentinels name the replica master and it takes writes. */
    async killMaster(): Promise<Node> {
      const old = await current();
      await old.kill();
      await settled(`the sentinels to fail ${old.name} over`);
      return old;
    },
    /** Kills the `i`-th sentinel; resolves once it has exited. */
    killSentinel: (i: number) => sentinels[i]!.kill(),
    /** Starts a killed node again (a killed master comes back as a replica); resolves once the set is healthy. */
    async restart(node: Node): Promise<void> {
      await node.start();
      await settled(`${node.name} to be back`);
    },
    pause: (node: Node) => node.pause(),
    /** Lets a paused node go on; resolves once the set is healthy (a paused master may have been failed over). */
    async resume(node: Node): Promise<void> {
      node.resume();
      await settled(`${node.name} to be back`);
    },
    async down(): Promise<void> {
      for (const n of nodes) if (n.running && !n.answering) n.resume();
      await Promise.all(nodes.map((n) => n.kill()));
    },
    async up(): Promise<void> {
      await Promise.all(data.map((n) => n.start()));
      await Promise.all(sentinels.map((n) => n.start()));
      await settled("the restarted Sentinel set to be ready");
    },
    async restartAll(): Promise<void> {
      await deployment.down();
      await deployment.up();
    },
    stop: () => dir.remove(nodes),
  };
  return deployment satisfies Deployment;
}
