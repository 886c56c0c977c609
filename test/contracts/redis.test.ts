// The Redis implementations of the pluggable interfaces run their contracts against a real
// redis-server (test/contracts/redis-targets.ts). Without redis-server they are skipped, loudly;
// under PICOMCP_REQUIRE_SERVICES=1 they fail instead.
import { describe, expect, it } from "vitest";
import type { ChangeEvent } from "../../src/bus.js";
import { changeBusContract } from "./change-bus.js";
import { eventStoreContract } from "./event-store.js";
import { rateStoreContract } from "./rate-store.js";
import { EVENT_TTL_MS, useRedisTargets, withRedis } from "./redis-targets.js";
import { sessionBackendContract } from "./session-backend.js";
import { sessionStoreContract } from "./session-store.js";
import { until } from "./support.js";
import { taskStoreContract } from "./task-store.js";

const redis = useRedisTargets();

describe.runIf(withRedis)("Redis", () => {
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

  describe("RedisBus, beyond the contract", () => {
    it("sends Redis only what other instances take: task changes stay in their instance", async () => {
      const d = await redis.buses({ share: "all" });
      const raw = await redis.connected();
      const sent: unknown[] = [];
      await raw.subscribe(d.channel, (m) => void sent.push(JSON.parse(m).event));
      try {
        const task = { taskId: "t-1", status: "completed", result: { content: [] } };
        const events: ChangeEvent[] = [
          { type: "task", task, owner: "ada" },
          { type: "list_changed", kind: "tools" },
          { type: "resource_updated", uri: "note://end" },
        ];
        for (const e of events) d.instances[0]!.publish(e);
        // a task change sent would be first on the channel
        await until(() => sent.length >= 2, "the messages on the channel");
        expect(sent).toEqual(events.slice(1));
      } finally {
        d.close?.();
        raw.destroy();
      }
    });
  });
});
