// The Redis contracts on a real Redis Cluster of the file's own: 6 nodes, 3 masters with a replica each
// (test/redis-cluster.ts); the outages kill every node and start them again. Needs redis-server and
// redis-cli: skipped without them, loudly; under PICOMCP_REQUIRE_SERVICES=1 it fails instead.
import { redisContracts } from "./redis-suites.js";

redisContracts("Redis Cluster", "cluster");
