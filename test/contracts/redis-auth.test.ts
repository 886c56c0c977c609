// RedisAuthStore on a redis-server of the file's own (test/contracts/redis-auth-suites.ts). Without
// redis-server it is skipped, loudly; under PICOMCP_REQUIRE_SERVICES=1 it fails instead.
import { redisAuthContracts } from "./redis-auth-suites.js";

redisAuthContracts("Redis", "single");
