// Vitest's global set-up for the Redis tests: where no Redis can be had (no redis-server on the PATH,
// no REDIS_URL) they are skipped, and this says so once, loudly, with the command that brings them
// back. Under PICOMCP_REQUIRE_SERVICES=1 (CI) they run anyway and fail on the missing server instead.
// The Cluster and Sentinel contracts need redis-cli too; Valkey's are never required: its line is its own.
import type { TestProject } from "vitest/node";
import { INSTALL_REDIS_CLI, INSTALL_VALKEY, redisCli, valkeyServer } from "./redis-deployments.js";
import { INSTALL_REDIS, redisServer, requireServices, sharedRedisUrl } from "./redis-helpers.js";

/** The line a run without redis-server prints, or undefined when nothing is skipped. */
export function redisSkipLine(): string | undefined {
  if (requireServices || redisServer) return undefined;
  if (sharedRedisUrl)
    return `SKIPPED: the Redis tests that stop and restart a server of their own (REDIS_URL serves the rest): ${INSTALL_REDIS}`;
  return `SKIPPED: the Redis tests (test/redis/, test/contracts/redis*.test.ts): redis-server is not on the PATH and REDIS_URL is not set: ${INSTALL_REDIS}`;
}

/** The line a run with redis-server but without redis-cli prints (the Cluster and Sentinel contracts need both). */
export function deploymentsSkipLine(): string | undefined {
  if (requireServices || !redisServer || redisCli) return undefined;
  return `SKIPPED: the Redis Cluster and Sentinel contracts (test/contracts/redis-cluster.test.ts, redis-sentinel.test.ts): redis-cli is not on the PATH: ${INSTALL_REDIS_CLI}`;
}

/** The line a run without Valkey prints: never a failure, not even under PICOMCP_REQUIRE_SERVICES=1. */
export function valkeySkipLine(): string | undefined {
  if (valkeyServer) return undefined;
  return `SKIPPED (optional): the Valkey contracts (test/contracts/redis-valkey.test.ts): valkey-server is not on the PATH and PICOMCP_VALKEY is not set: ${INSTALL_VALKEY}`;
}

export default function setup(project: TestProject) {
  return () => {
    const files = project.vitest.state.getFilepaths();
    const ran = (pattern: RegExp) => files.some((f) => pattern.test(f));
    const lines = [
      ran(/\/test\/(redis\/[^/]*|contracts\/redis(-cluster|-sentinel)?)\.test\.ts$/) && redisSkipLine(),
      ran(/\/test\/contracts\/redis-(cluster|sentinel)\.test\.ts$/) && deploymentsSkipLine(),
      ran(/\/test\/contracts\/redis-valkey\.test\.ts$/) && valkeySkipLine(),
    ];
    for (const line of lines) if (line) project.vitest.logger.log(`\n\u001b[1;33m${line}\u001b[0m\n`);
  };
}
