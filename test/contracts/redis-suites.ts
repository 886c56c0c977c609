// The store and bus contracts of picomcp/redis on one deployment: each test file of a deployment
// (test/contracts/redis*.test.ts) runs them all, so vitest runs the deployments side by side.
import { describe } from "vitest";
import type { DeploymentKind } from "../redis-deployments.js";
import { changeBusContract } from "./change-bus.js";
import { eventStoreContract } from "./event-store.js";
import { rateStoreContract } from "./rate-store.js";
import { EVENT_TTL_MS, useRedisTargets, withDeployment } from "./redis-targets.js";
import { sessionBackendContract } from "./session-backend.js";
import { sessionStoreContract } from "./session-store.js";
import { taskStoreContract } from "./task-store.js";

/** Runs every Redis contract, its outages too, on a deployment of `kind` of the file's own; returns its targets. */
export function redisContracts(name: string, kind: DeploymentKind) {
  const run = withDeployment(kind);
  const redis = useRedisTargets(kind, run);

  describe.runIf(run)(name, () => {
    eventStoreContract("RedisEventStore", redis.eventStore, {
      shared: true,
      ttlMs: EVENT_TTL_MS,
      outage: redis.eventStoreOutage,
    });

    rateStoreContract("RedisRateStore", redis.rateStore, { shared: true });

    sessionStoreContract("RedisSessionStore", redis.sessionStore);
    sessionBackendContract(
      "shared (sessions: RedisSessionStore)",
      async () => {
        const t = await redis.sessionStore();
        return { sessions: t.store, peer: t.peer, close: () => t.close?.() };
      },
      { sessions: true, shared: true },
    );
    taskStoreContract("RedisTaskStore", redis.taskStore, { shared: true });

    changeBusContract("RedisBus, share: 'updates'", () => redis.buses({}), {
      shared: true,
      crosses: (e) => e.type === "resource_updated",
      outage: () => redis.busOutage({}),
    });

    changeBusContract("RedisBus, share: 'all'", () => redis.buses({ share: "all" }), {
      shared: true,
      crosses: (e) => e.type !== "task",
    });
  });
  return { run, redis };
}
