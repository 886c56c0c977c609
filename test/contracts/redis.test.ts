// The Redis implementations of the pluggable interfaces run their contracts against a real
// redis-server of the file's own (test/contracts/redis-suites.ts); the same suites run on a Cluster,
// a Sentinel set and Valkey in the files beside this one. Without redis-server they are skipped,
// loudly; under PICOMCP_REQUIRE_SERVICES=1 they fail instead.
import { createClient } from "redis";
import { describe, expect, it } from "vitest";
import type { ChangeEvent } from "../../src/bus.js";
import { redisContracts } from "./redis-suites.js";
import { until } from "./support.js";

const { run, redis } = redisContracts("Redis", "single");

describe.runIf(run)("Redis", () => {
  describe("RedisBus, beyond the contract", () => {
    it("sends Redis only what other instances take: task changes stay in their instance", async () => {
      const d = await redis.buses({ share: "all" });
      const [url] = await redis.deployment().masters();
      const raw = await createClient({ url: url! }).connect();
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
