// The Redis implementations as contract targets, on a real redis-server: one per test file for the
// healthy targets, and one of each outage's own, taken away and brought back. A shared store is two
// connections (two instances of one deployment); a deployment of buses is two buses on one channel.
import { spawnSync } from "node:child_process";
import { createClient } from "redis";
import { afterAll, beforeAll, expect } from "vitest";
import {
  RedisBus,
  type RedisBusOptions,
  RedisEventStore,
  RedisRateStore,
  RedisSessionStore,
  RedisTaskStore,
} from "../../src/redis/index.js";
import { freePort, startRedis } from "../redis-helpers.js";
import type { BusDeployment, BusOutage } from "./change-bus.js";
import type { EventStoreOptions, EventStoreOutage, EventStoreTarget } from "./event-store.js";
import type { RateStoreTarget } from "./rate-store.js";
import type { SessionStoreTarget } from "./session-store.js";
import { until } from "./support.js";
import type { TaskStoreTarget } from "./task-store.js";

const newClient = (url: string) => createClient({ url });
type Client = ReturnType<typeof newClient>;

/**
 * Whether the Redis contracts run: with redis-server on the PATH, or under PICOMCP_REQUIRE_SERVICES=1
 * (then they fail without it). A skip is said once for every Redis test, by test/redis-setup.ts.
 */
export const withRedis =
  spawnSync("redis-server", ["--version"]).error === undefined ||
  process.env.PICOMCP_REQUIRE_SERVICES === "1";

/** How long a RedisEventStore target keeps a stream after its last event. */
export const EVENT_TTL_MS = 60_000;

const UNREACHABLE = "^picomcp/redis: Redis is unreachable \\(.+\\); ";
let names = 0;
/** A key prefix or channel no other test uses. */
const fresh = (what: string) => `picomcp:contract:${what}:${++names}:`;

async function connected(url: string): Promise<Client> {
  const client = newClient(url);
  client.on("error", () => {});
  await client.connect();
  return client;
}

/** Moves Redis's clock on for the keys under `prefix`: each one's time to live is `ms` shorter. */
async function advance(client: Client, prefix: string, ms: number): Promise<void> {
  for await (const keys of client.scanIterator({ MATCH: `${prefix}*` })) {
    for (const key of keys) {
      const ttl = await client.pTTL(key);
      if (ttl < 0) continue; // a key without expiry, or one gone meanwhile
      if (ttl - ms <= 0) await client.del(key);
      else await client.pExpire(key, ttl - ms);
    }
  }
}

/** A redis-server of the test's own, to take away (`down`) and bring back empty (`up`). */
async function ownRedis() {
  const port = await freePort();
  let server = await startRedis(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    down: () => server.stop(),
    up: async () => {
      server = await startRedis(port);
    },
    stop: () => server.stop(),
  };
}

/** Two instances' buses on one fresh channel, each on a client of its own that the bus connects. */
async function buses(url: string, options: RedisBusOptions) {
  const channel = fresh("changes");
  const lines: string[][] = [[], []];
  const clients = lines.map(() => newClient(url));
  const instances = clients.map(
    (c, i) => new RedisBus(c, { ...options, channel, log: (l) => lines[i]!.push(l) }),
  );
  await Promise.all(instances.map((b) => b.ready));
  const close = () => {
    for (const b of instances) b.close();
    for (const c of clients) c.destroy();
  };
  return { channel, clients, instances, lines, close };
}

/** Starts this file's redis-server (when the Redis contracts run) and makes targets on it. */
export function useRedisTargets() {
  let url = "";
  let server: { stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    if (!withRedis) return;
    const port = await freePort();
    url = `redis://127.0.0.1:${port}`;
    server = await startRedis(port);
  });
  afterAll(() => server?.stop());

  return {
    /** A client of this file's redis-server (the caller destroys it). */
    connected: () => connected(url),

    /** Two RedisEventStores on one prefix, and a stranger on another; a healthy store logs nothing. */
    async eventStore({ maxEventsPerStream, maxEventChars }: EventStoreOptions): Promise<EventStoreTarget> {
      const [one, two] = [await connected(url), await connected(url)];
      const prefix = fresh("events");
      const lines: string[] = [];
      const options = {
        prefix,
        maxEventsPerStream,
        maxEventChars,
        ttlMs: EVENT_TTL_MS,
        log: (l: string) => lines.push(l),
      };
      return {
        store: new RedisEventStore(one, options),
        peer: new RedisEventStore(two, options),
        stranger: new RedisEventStore(two, { ...options, prefix: fresh("events") }),
        advance: (ms) => advance(one, prefix, ms),
        close() {
          one.destroy();
          two.destroy();
          expect(lines).toEqual([]);
        },
      };
    },

    /** Two RedisSessionStores on one prefix, each with the bus of its instance; a healthy store logs nothing. */
    async sessionStore(): Promise<SessionStoreTarget> {
      const d = await buses(url, {});
      const prefix = fresh("session");
      const lines: string[] = [];
      const [store, peer] = d.instances.map(
        (bus, i) => new RedisSessionStore(d.clients[i]!, { bus, prefix, log: (l) => lines.push(l) }),
      );
      return {
        store: store!,
        peer: peer!,
        close() {
          d.close();
          expect(lines).toEqual([]);
        },
      };
    },

    /** Two RedisRateStores on one prefix (two instances); `advance` moves every bucket's last count back. */
    async rateStore(): Promise<RateStoreTarget> {
      const [one, two] = [await connected(url), await connected(url)];
      const prefix = fresh("rate");
      const lines: string[] = [];
      const options = { prefix, log: (l: string) => lines.push(l) };
      return {
        store: new RedisRateStore(one, options),
        peer: new RedisRateStore(two, options),
        advance: async (ms) => {
          // a bucket counted `ms` earlier has that much more refill, and expires that much sooner
          for await (const keys of one.scanIterator({ MATCH: `${prefix}*` }))
            for (const key of keys) await one.hIncrBy(key, "at", -ms);
          await advance(one, prefix, ms);
        },
        close() {
          one.destroy();
          two.destroy();
          expect(lines).toEqual([]);
        },
      };
    },

    /** Two RedisTaskStores on one prefix (two instances); `advance` shortens every task's time to live. */
    async taskStore(): Promise<TaskStoreTarget> {
      const [one, two] = [await connected(url), await connected(url)];
      const prefix = fresh("tasks");
      const lines: string[] = [];
      const options = { prefix, log: (l: string) => lines.push(l) };
      const [store, peer] = [new RedisTaskStore(one, options), new RedisTaskStore(two, options)];
      return {
        store,
        peer,
        advance: (ms) => advance(one, prefix, ms),
        close() {
          store.close();
          peer.close();
          one.destroy();
          two.destroy();
          expect(lines).toEqual([]);
        },
      };
    },

    async eventStoreOutage(): Promise<EventStoreOutage> {
      const own = await ownRedis();
      const client = await connected(own.url);
      const lines: string[] = [];
      return {
        store: new RedisEventStore(client, { prefix: fresh("events"), log: (l) => lines.push(l) }),
        lines,
        says: {
          down: new RegExp(`${UNREACHABLE}SSE events are delivered live but not kept until it is back$`),
          back: "picomcp/redis: Redis is back; SSE events are kept again",
        },
        down: async () => {
          await own.down();
          await until(() => !client.isReady, "the client to lose Redis");
        },
        up: async () => {
          await own.up();
          await until(() => client.isReady, "the client to reconnect");
        },
        close: async () => {
          client.destroy();
          await own.stop();
        },
      };
    },

    /** A deployment of two RedisBuses, its channel and clients; a healthy bus logs nothing. */
    async buses(options: RedisBusOptions): Promise<BusDeployment & { channel: string }> {
      const d = await buses(url, options);
      return {
        instances: d.instances,
        channel: d.channel,
        close() {
          d.close();
          expect(d.lines).toEqual([[], []]);
        },
      };
    },

    async busOutage(options: RedisBusOptions): Promise<BusOutage> {
      const own = await ownRedis();
      const d = await buses(own.url, options);
      return {
        instances: d.instances,
        lines: d.lines,
        says: {
          down: new RegExp(
            `${UNREACHABLE}change events reach this instance's clients only until it is back$`,
          ),
          back: "picomcp/redis: Redis is back; change events cross instances again",
        },
        down: async () => {
          await own.down();
          await until(() => d.clients.every((c) => !c.isReady), "the clients to lose Redis");
        },
        up: async () => {
          await own.up();
          await until(() => d.clients.every((c) => c.isReady), "the clients to reconnect");
        },
        close: async () => {
          d.close();
          await own.stop();
        },
      };
    },
  };
}
