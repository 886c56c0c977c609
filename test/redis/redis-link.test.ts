// Link against a real redis-server: a call that Redis does not answer within its deadline fails then
// (one line), a call after the outage brings the state back (one line); the late answer changes nothing.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Link, RedisTimeoutError } from "../../src/redis/link.js";
import { Script } from "../../src/redis/script.js";
import { until, useRedis, withRedis } from "../redis-helpers.js";

let redis: { url: string; stop(): Promise<void> };
const clients: { destroy(): void }[] = [];

async function connected() {
  const client = createClient({ url: redis.url });
  client.on("error", () => {});
  clients.push(client);
  await client.connect();
  return client;
}

beforeAll(async () => {
  if (withRedis) redis = await useRedis();
});
afterAll(async () => {
  for (const c of clients) c.destroy();
  await redis?.stop();
});

describe.runIf(withRedis)("Link", () => {
  it("bounds a call by its deadline, says so once, and is back when a call answers after the outage", async () => {
    const [client, admin] = [await connected(), await connected()];
    const lines: string[] = [];
    const link = new Link(client, {
      timeoutMs: 150,
      log: (l) => lines.push(l),
      down: "it waits",
      back: "it runs",
    });
    const echo = new Script("return ARGV[1]");
    expect(await link.run(echo, [], ["one"])).toBe("one");
    // scripts wait while Redis pauses writes (the admin connection may still unpause): the call outlives its deadline
    await admin.sendCommand(["CLIENT", "PAUSE", "60000", "WRITE"]);
    await expect(link.run(echo, [], ["two"])).rejects.toBeInstanceOf(RedisTimeoutError);
    await expect(link.run(echo, [], ["three"])).rejects.toThrow("did not answer within 150 ms");
    expect(lines).toEqual([
      "picomcp/redis: Redis is unreachable (picomcp/redis: Redis did not answer within 150 ms); it waits until it is back",
    ]);
    expect(link.ready).toBe(false);
    await admin.sendCommand(["CLIENT", "UNPAUSE"]);
    // once Redis answers again (and the failures are a deadline old), a call brings it back
    await until(
      async () => (await link.run(echo, [], ["four"]).catch(() => "")) === "four",
      10_000,
      "an answer",
    );
    await until(
      async () => {
        await link.run(echo, [], ["five"]);
        return link.ready;
      },
      10_000,
      "the link to be ready",
    );
    expect(lines.slice(1)).toEqual(["picomcp/redis: Redis is back; it runs"]);
    expect(link.stats).toMatchObject({ ready: true, outages: 1, refused: 0 });
    // the calls of the wait above may have met the pause too
    expect(link.stats.timeouts).toBeGreaterThanOrEqual(2);
  });

  it("refuses at once while a client is not connected; a reply error is a failure (error) but no outage", async () => {
    const client = await connected();
    const lines: string[] = [];
    const link = new Link(client, { log: (l) => lines.push(l), down: "d", back: "b" });
    await expect(link.run(new Script("return redis.call('INCR', KEYS[1])"), ["k:link"], [])).resolves.toBe(1);
    await expect(
      link.run(new Script("return redis.call('HGET', KEYS[1], 'x')"), ["k:link"], []),
    ).rejects.toThrow(/WRONGTYPE/);
    await expect(
      link.run(new Script("return redis.error_reply('ERR no such thing')"), [], []),
    ).rejects.toThrow("ERR no such thing");
    // Redis answered both: counted as failures (neither a timeout nor refused: an error), health unchanged
    expect(link.stats).toEqual({ ready: true, calls: 3, failures: 2, timeouts: 0, refused: 0, outages: 0 });
    expect(lines).toEqual([]);
    client.destroy();
    await expect(link.call((c) => c.del("k:link"))).rejects.toThrow("the Redis client is not connected");
    expect(link.stats).toEqual({ ready: false, calls: 3, failures: 3, timeouts: 0, refused: 1, outages: 1 });
    expect(lines).toHaveLength(1);
  });
});
