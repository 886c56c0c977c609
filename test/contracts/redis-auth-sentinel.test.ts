// RedisAuthStore on a real Sentinel set of the file's own: a master, a replica and three sentinels
// (test/redis-sentinel.ts). Needs redis-server and redis-cli: skipped without them, loudly; under
// PICOMCP_REQUIRE_SERVICES=1 it fails instead.
import { redisAuthContracts } from "./redis-auth-suites.js";

redisAuthContracts("Redis Sentinel", "sentinel");
