// A real Redis Cluster for the tests: 6 nodes on loopback ports, a replica per master, failover in about
// two seconds; its faults (a master killed, a node paused, everything restarted) resolve once every node
// says the cluster is ok again (CLUSTER INFO, CLUSTER NODES, INFO replication: polled, never slept on).
import { join } from "node:path";
import { freePort, until } from "./redis-helpers.js";
import {
  type Deployment,
  HEALTHY_MS,
  info,
  Node,
  needRedisCli,
  newCluster,
  PERSIST,
  redisCliRun,
  scratch,
  startOnFreePorts,
} from "./redis-nodes.js";

/** One line of `CLUSTER NODES`. */
interface ClusterLine {
  readonly id: string;
  readonly port: number;
  readonly flags: string[];
  readonly slots: [number, number][];
}

function clusterNodes(text: string): ClusterLine[] {
  return text.split("\n").map((line) => {
    const [id, address, flags, , , , , , ...slots] = line.trim().split(" ");
    return {
      id: id!,
      port: Number(/:(\d+)@/.exec(address!)![1]),
      flags: flags!.split(","),
      slots: slots
        .filter((s) => !s.startsWith("["))
        .map((s) => s.split("-").map(Number) as [number, number])
        .map(([a, b]) => [a, b ?? a]),
    };
  });
}

/** How long a cluster node may be silent before the others fail it over (cluster-node-timeout). */
export const CLUSTER_NODE_TIMEOUT_MS = 1_000;

/**
 * A Redis Cluster: 6 nodes (3 masters, a replica each), every write on disk before it is answered,
 * a node timeout of a second (a failover takes about two). Resolves once every node says the cluster
 * is ok, all 16384 slots served and every replica in sync.
 */
export async function startCluster() {
  needRedisCli();
  const dir = scratch("cluster");
  const nodes: Node[] = [];
  const node = async (i: number) => {
    const config = [
      "cluster-enabled yes",
      "cluster-config-file nodes.conf",
      `cluster-node-timeout ${CLUSTER_NODE_TIMEOUT_MS}`,
      `cluster-port ${await freePort()}`,
      // a replica takes over however long its master has been away
      "cluster-replica-validity-factor 0",
      PERSIST,
    ].join("\n");
    return new Node(`node ${i}`, await freePort(), join(dir.root, String(i)), config);
  };
  try {
    await Promise.all([0, 1, 2, 3, 4, 5].map((i) => startOnFreePorts(nodes, () => node(i))));
    nodes.sort((a, b) => a.name.localeCompare(b.name));
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await redisCliRun(HEALTHY_MS, [
      "--cluster",
      "create",
      ...addresses,
      "--cluster-replicas",
      "1",
      "--cluster-yes",
    ]);
  } catch (error) {
    await dir.remove(nodes);
    throw error;
  }

  /** What `node`'s view of the cluster says, or undefined when it does not answer. */
  const view = (n: Node) => n.cli("CLUSTER", "NODES").then(clusterNodes, () => undefined);
  const byPort = (port: number) => nodes.find((n) => n.port === port)!;

  /** Whether `n` says: cluster ok, all slots served by answering masters, no answering node failed, in sync if a replica. */
  async function saysOk(n: Node): Promise<boolean> {
    const state = info(await n.cli("CLUSTER", "INFO").catch(() => ""));
    if (state.cluster_state !== "ok" || state.cluster_slots_ok !== "16384") return false;
    const lines = await view(n);
    if (!lines) return false;
    for (const line of lines) {
      const node = nodes.find((m) => m.port === line.port);
      // a node it knows by no address yet (a handshake) is not settled either
      if (!node) return false;
      if (node.answering && line.flags.some((f) => f.startsWith("fail"))) return false;
      if (line.slots.length > 0 && (!node.answering || !line.flags.includes("master"))) return false;
    }
    const replication = info(await n.cli("INFO", "replication").catch(() => ""));
    return replication.role !== "slave" || replication.master_link_status === "up";
  }
  /** Whether every answering node says the cluster is ok. */
  const healthy = async () =>
    (await Promise.all(nodes.filter((n) => n.answering).map(saysOk))).every(Boolean);
  const settled = (what: string) => until(healthy, HEALTHY_MS, what);

  /** The masters now, as one answering node sees them, with their slot ranges. */
  async function masterLines(): Promise<ClusterLine[]> {
    for (const n of nodes.filter((n) => n.answering)) {
      const lines = await view(n);
      if (lines)
        return lines.filter((l) => l.slots.length > 0).sort((a, b) => a.slots[0]![0] - b.slots[0]![0]);
    }
    throw new Error("no cluster node answers");
  }

  try {
    await settled("the new cluster to be ok");
  } catch (error) {
    await dir.remove(nodes);
    throw error;
  }
  const rootNodes = nodes.map((n) => ({ url: n.url }));
  const deployment = {
    kind: "cluster" as const,
    nodes,
    rootNodes,
    /** A cluster client on every node (not connected: the caller or the store connects it). */
    client: () => newCluster(rootNodes),
    /** The masters now, in the order of their first slot. */
    async masterNodes(): Promise<Node[]> {
      return (await masterLines()).map((l) => byPort(l.port));
    },
    async masters(): Promise<string[]> {
      return (await masterLines()).map((l) => byPort(l.port).url);
    },
    /** The master that serves `key`'s slot now. */
    async masterOf(key: string): Promise<Node> {
      const any = nodes.find((n) => n.answering)!;
      const slot = Number(await any.cli("CLUSTER", "KEYSLOT", key));
      const owner = (await masterLines()).find((l) => l.slots.some(([a, b]) => slot >= a && slot <= b));
      return byPort(owner!.port);
    },
    /** Zeroes every answering node's command counts (`CONFIG RESETSTAT`). */
    async resetStats(): Promise<void> {
      await Promise.all(nodes.filter((n) => n.answering).map((n) => n.cli("CONFIG", "RESETSTAT")));
    },
    /** Kills the `i`-th master (SIGKILL); resolves once its replica serves its slots and the cluster is ok. */
    async killMaster(i: number): Promise<Node> {
      const master = (await deployment.masterNodes())[i];
      if (!master) throw new Error(`there is no master ${i}`);
      await master.kill();
      await settled(`a replica to take over from ${master.name}`);
      return master;
    },
    /** Starts a killed node again (a killed master comes back as a replica); resolves once the cluster is ok. */
    async restart(node: Node): Promise<void> {
      await node.start();
      await settled(`${node.name} to be back in the cluster`);
    },
    pause: (node: Node) => node.pause(),
    /** Lets a paused node go on; resolves once the cluster is ok (a paused master may have been failed over). */
    async resume(node: Node): Promise<void> {
      node.resume();
      await settled(`${node.name} to be back in the cluster`);
    },
    async down(): Promise<void> {
      for (const n of nodes) if (n.running && !n.answering) n.resume();
      await Promise.all(nodes.map((n) => n.kill()));
    },
    async up(): Promise<void> {
      await Promise.all(nodes.map((n) => n.start()));
      await settled("the restarted cluster to be ok");
    },
    async restartAll(): Promise<void> {
      await deployment.down();
      await deployment.up();
    },
    stop: () => dir.remove(nodes),
  };
  return deployment satisfies Deployment;
}
