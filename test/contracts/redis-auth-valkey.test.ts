// RedisAuthStore on a Valkey server of the file's own, where Valkey is installed (valkey-server on the
// PATH, or PICOMCP_VALKEY naming it). Never required, not even under PICOMCP_REQUIRE_SERVICES=1: without
// it the file is skipped, and test/redis-setup.ts says how to get it.
import { redisAuthContracts } from "./redis-auth-suites.js";

redisAuthContracts("Valkey", "valkey");
