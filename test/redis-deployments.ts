// Redis as users deploy it, for the tests: one redis-server, a 6-node Cluster (test/redis-cluster.ts), a
// Sentinel set (test/redis-sentinel.ts) or a Valkey node, every process on loopback ports and in a temp
// directory of its own (removed at stop), with the faults each one has.
import { join } from "node:path";
import { startCluster } from "./redis-cluster.js";
import { freePort, onPath, redisServer, requireServices } from "./redis-helpers.js";
import {
  type Deployment,
  type DeploymentKind,
  Node,
  newClient,
  PERSIST,
  redisCli,
  scratch,
  startOnFreePorts,
} from "./redis-nodes.js";
import { startSentinel } from "./redis-sentinel.js";

export type { AnyClient, Deployment, DeploymentKind } from "./redis-nodes.js";
export { INSTALL_REDIS_CLI, Node, redisCli } from "./redis-nodes.js";
export { startCluster, startSentinel };

/** A Valkey server: `PICOMCP_VALKEY` names its binary, else `valkey-server` on the PATH. */
export const valkeyServer = process.env.PICOMCP_VALKEY || onPath("valkey-server");
/** How to get Valkey, for the skip line and the failures. */
export const INSTALL_VALKEY =
  "install valkey-server (apt-get install -y valkey-server where the distribution has it) or build it from https://github.com/valkey-io/valkey (make BUILD_TLS=no), and put it on the PATH or name it in PICOMCP_VALKEY";

/**
 * Whether the tests on a deployment of `kind` run. One node: with redis-server, or under
 * PICOMCP_REQUIRE_SERVICES=1 (then they fail without it). Cluster and Sentinel: with redis-server and
 * redis-cli, or under PICOMCP_REQUIRE_SERVICES=1. Valkey: only where it is installed, never required.
 */
export function withDeployment(kind: DeploymentKind): boolean {
  if (kind === "valkey") return valkeyServer !== undefined;
  if (kind === "single") return redisServer !== undefined || requireServices;
  return (redisServer !== undefined && redisCli !== undefined) || requireServices;
}

/** Starts a deployment of `kind`; `persist: false` keeps no data on disk (one node only). */
export function startDeployment(
  kind: DeploymentKind,
  options: { persist?: boolean } = {},
): Promise<Deployment> {
  if (kind === "cluster") return startCluster();
  if (kind === "sentinel") return startSentinel();
  return startSingle(kind, options);
}

/**
 * A single redis-server (or Valkey's server) with its data on disk, or with none when `persist` is false:
 * `down` kills it, `up` starts it again on its port with what it had.
 */
export async function startSingle(kind: "single" | "valkey" = "single", { persist = true } = {}) {
  const bin = kind === "valkey" ? valkeyServer : undefined;
  if (kind === "valkey" && !bin) throw new Error(`Valkey is not installed: ${INSTALL_VALKEY}`);
  const dir = scratch(kind);
  const config = persist ? PERSIST : 'appendonly no\nsave ""';
  const started: Node[] = [];
  const node = await startOnFreePorts(
    started,
    async () => new Node(kind, await freePort(), join(dir.root, "0"), config, { bin }),
  );
  return {
    kind,
    nodes: [node],
    url: node.url,
    /** A client of the node (not connected). */
    client: () => newClient(node.url),
    masters: async () => [node.url],
    down: () => node.kill(),
    up: () => node.start(),
    stop: () => dir.remove([node]),
  } satisfies Deployment & { url: string };
}
