// Vitest's global set-up for the Redis tests: where no Redis can be had (no redis-server on the PATH,
// no REDIS_URL) they are skipped, and this says so once, loudly, with the command that brings them
// back. Under PICOMCP_REQUIRE_SERVICES=1 (CI) they run anyway and fail on the missing server instead.
import type { TestProject } from "vitest/node";
import { INSTALL_REDIS, redisServer, requireServices, sharedRedisUrl } from "./redis-helpers.js";

/** The line a run without redis-server prints, or undefined when nothing is skipped. */
export function redisSkipLine(): string | undefined {
  if (requireServices || redisServer) return undefined;
  if (sharedRedisUrl)
    return `SKIPPED: the Redis tests that stop and restart a server of their own (REDIS_URL serves the rest): ${INSTALL_REDIS}`;
  return `SKIPPED: the Redis tests (test/redis/, test/contracts/redis.test.ts): redis-server is not on the PATH and REDIS_URL is not set: ${INSTALL_REDIS}`;
}

export default function setup(project: TestProject) {
  return () => {
    const line = redisSkipLine();
    const ran = project.vitest.state
      .getFilepaths()
      .some((f) => /\/test\/(redis\/[^/]*|contracts\/redis)\.test\.ts$/.test(f));
    if (line && ran) project.vitest.logger.log(`\n\u001b[1;33m${line}\u001b[0m\n`);
  };
}
