// The Redis implementations as contract targets, on a real deployment of the test file's own (one
// redis-server, a 6-node Cluster, a Sentinel set, or Valkey: test/redis-deployments.ts). A shared store
// is two clients (two instances of one deployment); a deployment of buses is two buses on one channel.
// An outage takes the whole deployment away (every process killed) and brings it back empty.
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
import {
  type AnyClient,
  type Deployment,
  type DeploymentKind,
  startDeployment,
} from "../redis-deployments.js";
import type { BusDeployment, BusOutage } from "./change-bus.js";
import type { EventStoreOptions, EventStoreOutage, EventStoreTarget } from "./event-store.js";
import type { RateStoreTarget } from "./rate-store.js";
import type { SessionStoreTarget } from "./session-store.js";
import { until } from "./support.js";
import type { TaskStoreTarget } from "./task-store.js";

export { withDeployment } from "../redis-deployments.js";

/** How long a RedisEventStore target keeps a stream after its last event. */
export const EVENT_TTL_MS = 60_000;

const UNREACHABLE = "^picomcp/redis: Redis is unreachable \\(.+\\); ";
let names = 0;
/** A key prefix or channel no other test uses. */
const fresh = (what: string) => `picomcp:contract:${what}:${++names}:`;

async function connected(d: Deployment): Promise<AnyClient> {
  const client = d.client();
  client.on("error", () => {});
  await client.connect();
  return client;
}

const plain = (url: string) => createClient({ url });

/** Calls `each` for every key under `prefix`, on a client of the master that holds it (every master of a cluster). */
async function eachKey(
  d: Deployment,
  prefix: string,
  each: (client: ReturnType<typeof plain>, key: string) => Promise<unknown>,
): Promise<void> {
  for (const url of await d.masters()) {
    const client = plain(url);
    await client.connect();
    try {
      for await (const keys of client.scanIterator({ MATCH: `${prefix}*` }))
        for (const key of keys) await each(client, key);
    } finally {
      client.destroy();
    }
  }
}

/** Moves Redis's clock on for the keys under `prefix`: each one's time to live is `ms` shorter. */
function advance(d: Deployment, prefix: string, ms: number): Promise<void> {
  return eachKey(d, prefix, async (client, key) => {
    const ttl = await client.pTTL(key);
    if (ttl < 0) return; // a key without expiry, or one gone meanwhile
    if (ttl - ms <= 0) await client.del(key);
    else await client.pExpire(key, ttl - ms);
  });
}

/** Whether an outage has the file's deployment down now (a failed test leaves it so: its close brings it back). */
let isDown = false;

/** Takes the deployment away; on one node, waits until `clients` have seen it go (their `isReady`). */
async function down(d: Deployment, clients: readonly AnyClient[]): Promise<void> {
  isDown = true;
  await d.down();
  if (d.kind === "single" || d.kind === "valkey")
    await until(() => clients.every((c) => !c.isReady), "the clients to lose Redis");
}

/** Brings the deployment back, empty, as an outage's `up` means; on one node, waits until `clients` are ready. */
async function up(d: Deployment, clients: readonly AnyClient[]): Promise<void> {
  await d.up();
  isDown = false;
  for (const url of await d.masters()) {
    const client = plain(url);
    await client.connect();
    await client.flushAll();
    client.destroy();
  }
  if (d.kind === "single" || d.kind === "valkey")
    await until(() => clients.every((c) => c.isReady), "the clients to reconnect");
}

/** Ends an outage target: the deployment is back for the file's next tests, whatever the test did. */
async function closeOutage(d: Deployment, clients: readonly AnyClient[]): Promise<void> {
  for (const c of clients) void c.destroy();
  if (isDown) await up(d, []);
}

/** Two instances' buses on one fresh channel, each on a client of its own that the bus connects. */
async function buses(d: Deployment, options: RedisBusOptions) {
  const channel = fresh("changes");
  const lines: string[][] = [[], []];
  const clients = lines.map(() => d.client());
  const instances = clients.map(
    (c, i) => new RedisBus(c, { ...options, channel, log: (l) => lines[i]!.push(l) }),
  );
  await Promise.all(instances.map((b) => b.ready));
  const close = () => {
    for (const b of instances) b.close();
    for (const c of clients) void c.destroy();
  };
  return { channel, clients, instances, lines, close };
}

/**
 * Starts this file's deployment of `kind` (when `run`) and makes targets on it. The outage targets take
 * the whole deployment away and back: the file's other targets must be closed by then (tests of a file
 * run one after another).
 */
export function useRedisTargets(kind: DeploymentKind = "single", run = true) {
  let d: Deployment;
  beforeAll(async () => {
    if (run) d = await startDeployment(kind, { persist: kind === "cluster" || kind === "sentinel" });
  }, 60_000);
  afterAll(() => d?.stop());

  return {
    /** The file's deployment. */
    deployment: () => d,
    /** A connected client of this file's deployment (the caller destroys it). */
    connected: () => connected(d),

    /** Two RedisEventStores on one prefix, and a stranger on another; a healthy store logs nothing. */
    async eventStore({ maxEventsPerStream, maxEventChars }: EventStoreOptions): Promise<EventStoreTarget> {
      const [one, two] = await Promise.all([connected(d), connected(d)]);
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
        advance: (ms) => advance(d, prefix, ms),
        close() {
          void one.destroy();
          void two.destroy();
          expect(lines).toEqual([]);
        },
      };
    },

    /** Two RedisSessionStores on one prefix, each with the bus of its instance; a healthy store logs nothing. */
    async sessionStore(): Promise<SessionStoreTarget> {
      const b = await buses(d, {});
      const prefix = fresh("session");
      const lines: string[] = [];
      const [store, peer] = b.instances.map(
        (bus, i) => new RedisSessionStore(b.clients[i]!, { bus, prefix, log: (l) => lines.push(l) }),
      );
      return {
        store: store!,
        peer: peer!,
        close() {
          b.close();
          expect(lines).toEqual([]);
        },
      };
    },

    /** Two RedisRateStores on one prefix (two instances); `advance` moves every bucket's last count back. */
    async rateStore(): Promise<RateStoreTarget> {
      const [one, two] = await Promise.all([connected(d), connected(d)]);
      const prefix = fresh("rate");
      const lines: string[] = [];
      const options = { prefix, log: (l: string) => lines.push(l) };
      return {
        store: new RedisRateStore(one, options),
        peer: new RedisRateStore(two, options),
        advance: async (ms) => {
          // a bucket counted `ms` earlier has that much more refill, and expires that much sooner
          await eachKey(d, prefix, (client, key) => client.hIncrBy(key, "at", -ms));
          await advance(d, prefix, ms);
        },
        close() {
          void one.destroy();
          void two.destroy();
          expect(lines).toEqual([]);
        },
      };
    },

    /** Two RedisTaskStores on one prefix (two instances); `advance` shortens every task's time to live. */
    async taskStore(): Promise<TaskStoreTarget> {
      const [one, two] = await Promise.all([connected(d), connected(d)]);
      const prefix = fresh("tasks");
      const lines: string[] = [];
      const options = { prefix, log: (l: string) => lines.push(l) };
      const [store, peer] = [new RedisTaskStore(one, options), new RedisTaskStore(two, options)];
      return {
        store,
        peer,
        advance: (ms) => advance(d, prefix, ms),
        close() {
          store.close();
          peer.close();
          void one.destroy();
          void two.destroy();
          expect(lines).toEqual([]);
        },
      };
    },

    /** A RedisEventStore on the file's deployment, which `down` takes away and `up` brings back empty. */
    async eventStoreOutage(): Promise<EventStoreOutage> {
      const client = await connected(d);
      const lines: string[] = [];
      return {
        store: new RedisEventStore(client, { prefix: fresh("events"), log: (l) => lines.push(l) }),
        lines,
        says: {
          down: new RegExp(`${UNREACHABLE}SSE events are delivered live but not kept until it is back$`),
          back: "picomcp/redis: Redis is back; SSE events are kept again",
        },
        down: () => down(d, [client]),
        up: () => up(d, [client]),
        close: () => closeOutage(d, [client]),
      };
    },

    /** A deployment of two RedisBuses, its channel and clients; a healthy bus logs nothing. */
    async buses(options: RedisBusOptions): Promise<BusDeployment & { channel: string }> {
      const b = await buses(d, options);
      return {
        instances: b.instances,
        channel: b.channel,
        close() {
          b.close();
          expect(b.lines).toEqual([[], []]);
        },
      };
    },

    /** Two RedisBuses on the file's deployment, which `down` takes away and `up` brings back empty. */
    async busOutage(options: RedisBusOptions): Promise<BusOutage> {
      const b = await buses(d, options);
      return {
        instances: b.instances,
        lines: b.lines,
        says: {
          down: new RegExp(
            `${UNREACHABLE}change events reach this instance's clients only until it is back$`,
          ),
          back: "picomcp/redis: Redis is back; change events cross instances again",
        },
        down: () => down(d, b.clients),
        up: () => up(d, b.clients),
        close: async () => {
          b.close();
          await closeOutage(d, []);
        },
      };
    },
  };
}
