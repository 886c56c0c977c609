// The Redis contracts on a real Sentinel set of the file's own: a master, a replica and three sentinels
// (test/redis-sentinel.ts); the outages kill every process and start them again. Needs redis-server
// and redis-cli: skipped without them, loudly; under PICOMCP_REQUIRE_SERVICES=1 it fails instead.
import { redisContracts } from "./redis-suites.js";

redisContracts("Redis Sentinel", "sentinel");
