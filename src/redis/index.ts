/**
 * `picomcp/redis`: several instances behind one endpoint, on Redis. `RedisBus` carries change
 * events between them; `RedisEventStore` keeps resumable SSE events outside the process;
 * `RedisRateStore` gives every replica one rate-limit budget per caller; `RedisSessionStore` lets
 * every instance serve every 2025 session; `RedisTaskStore` keeps tasks and carries their control to
 * the instance that runs each; `RedisAuthStore` keeps the authorization server's records so that any
 * replica serves any step of a sign-in. Each takes a node-redis
 * client you create (the `redis` package, an optional peer dependency).
 */
export { RedisAuthStore, type RedisAuthStoreOptions } from "./auth-store.js";
export { RedisBus, type RedisBusOptions } from "./bus.js";
export type { RedisClient, RedisLog } from "./client.js";
export { RedisEventStore, type RedisEventStoreOptions } from "./event-store.js";
export type { RedisStats } from "./link.js";
export { RedisRateStore, type RedisRateStoreOptions } from "./rate-store.js";
export { RedisSessionStore, type RedisSessionStoreOptions } from "./session-store.js";
export { RedisTaskStore, type RedisTaskStoreOptions } from "./task-store.js";
