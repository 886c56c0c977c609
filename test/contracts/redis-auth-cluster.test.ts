// RedisAuthStore on a real Redis Cluster of the file's own: 6 nodes, 3 masters with a replica each
// (test/redis-cluster.ts). Needs redis-server and redis-cli: skipped without them, loudly; under
// PICOMCP_REQUIRE_SERVICES=1 it fails instead.
import { redisAuthContracts } from "./redis-auth-suites.js";

redisAuthContracts("Redis Cluster", "cluster");
