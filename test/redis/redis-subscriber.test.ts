// Subscriber against a real redis-server: a subscription killed from outside is found by a probe and
// made again (one down line, one back line), a paused Redis fails probes within the deadline, probes
// never reach listeners, the timers keep no process alive, and close() stops everything; on a
// Cluster, a classic channel is heard from every node and subscribed again when its node dies.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Link } from "../../src/redis/link.js";
import { Subscriber } from "../../src/redis/subscriber.js";
import { startCluster, withDeployment } from "../redis-deployments.js";
import { RUN, until, useRedis, withRedis } from "../redis-helpers.js";

let redis: { url: string; stop(): Promise<void> };
const clients: { destroy(): void }[] = [];
const subscribers: Subscriber[] = [];

async function connected(options: { reconnect?: false } = {}) {
  const client = createClient({
    url: redis.url,
    ...(options.reconnect === false ? { socket: { reconnectStrategy: false as const } } : {}),
  });
  client.on("error", () => {});
  clients.push(client);
  await client.connect();
  return client;
}

function linked(client: Awaited<ReturnType<typeof connected>>, timeoutMs = 300) {
  const lines: string[] = [];
  const link = new Link(client, { timeoutMs, log: (l) => lines.push(l), down: "down", back: "back" });
  return { link, lines };
}

function subscriber(client: Awaited<ReturnType<typeof connected>>, link: Link, probeMs = 100) {
  const s = new Subscriber(client, { link, probeMs });
  subscribers.push(s);
  return s;
}

/**
 * The timers the code of `file` sets from now on (through the global `setTimeout`, as the Subscriber
 * does), while they are pending: until they fire or are cleared. `restore` stops tracking.
 */
function pendingTimersOf(file: string) {
  const pending = new Set<ReturnType<typeof setTimeout>>();
  const [set, clear] = [globalThis.setTimeout, globalThis.clearTimeout];
  const tracked = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const timer = set(
      (...a: unknown[]) => {
        pending.delete(timer);
        callback(...a);
      },
      ms,
      ...args,
    );
    // the frame below this one: the code that called setTimeout itself
    if (new Error().stack?.split("\n")[2]?.includes(file)) pending.add(timer);
    return timer;
  }) as typeof setTimeout;
  globalThis.setTimeout = tracked;
  globalThis.clearTimeout = ((timer?: ReturnType<typeof setTimeout>) => {
    if (timer !== undefined) pending.delete(timer);
    clear(timer);
  }) as typeof clearTimeout;
  return {
    pending,
    restore() {
      globalThis.setTimeout = set;
      globalThis.clearTimeout = clear;
    },
  };
}

const pubsubClients = async (admin: Awaited<ReturnType<typeof connected>>) =>
  (await admin.sendCommand(["CLIENT", "LIST", "TYPE", "pubsub"]))!.toString().split("\n").filter(Boolean)
    .length;

let n = 0;
const channel = () => `${RUN}:sub:${++n}`;

beforeAll(async () => {
  if (withRedis) redis = await useRedis();
});
afterAll(async () => {
  for (const s of subscribers) s.close();
  for (const c of clients) c.destroy();
  await redis?.stop();
});

describe.runIf(withRedis)("Subscriber", () => {
  it("hears messages and never hands a probe (its own or another's) to a listener", async () => {
    const [client, admin] = [await connected(), await connected()];
    const { link, lines } = linked(client);
    const heard: string[] = [];
    const other: string[] = [];
    const ch = channel();
    const a = subscriber(client, link);
    a.add(ch, (m) => heard.push(m));
    const bLink = linked(client).link;
    const b = subscriber(client, bLink);
    b.add(ch, (m) => other.push(m));
    await Promise.all([a.ready, b.ready]);
    expect(a.listening).toBe(true);
    // probes go out (through the Links) while the channel is silent; one subscriber's probe is a
    // message the other heard, so between them the channel is probed about once an interval
    const probes = () => link.stats.calls + bLink.stats.calls;
    const calls = probes();
    await until(() => probes() >= calls + 4, 10_000, "probes");
    // a probe of a subscriber elsewhere (and anything starting as one) is dropped; messages keep their order
    await admin.publish(ch, '{"picomcp-probe":"elsewhere","n":1}');
    await admin.publish(ch, '{"picomcp-probe":');
    await admin.publish(ch, "one");
    await admin.publish(ch, '{"picomcp":"two"}');
    await until(() => heard.length === 2 && other.length === 2, 10_000, "the messages");
    expect(heard).toEqual(["one", '{"picomcp":"two"}']);
    expect(other).toEqual(heard);
    expect(a.listening).toBe(true);
    expect(link.stats).toMatchObject({ ready: true, failures: 0, outages: 0 });
    expect(lines).toEqual([]);
  });

  it("finds a subscription killed from outside by its next probe, and subscribes again on a fresh connection", async () => {
    // without reconnection the killed connection stays dead: only the subscriber brings it back
    const [client, admin] = [await connected({ reconnect: false }), await connected()];
    const { link, lines } = linked(client);
    const heard: string[] = [];
    const ch = channel();
    const s = subscriber(client, link);
    let resubscribed = 0;
    s.onResubscribed(() => resubscribed++);
    s.add(ch, (m) => heard.push(m));
    await s.ready;
    await admin.publish(ch, "before");
    await until(() => heard.length === 1, 10_000, "the first message");
    await admin.sendCommand(["CLIENT", "KILL", "TYPE", "pubsub"]);
    await until(() => lines.length > 0, 10_000, "the lost subscription to be found");
    expect(lines).toEqual([
      `picomcp/redis: Redis is unreachable (the subscription to ${ch} was lost: no subscriber on the channel); down until it is back`,
    ]);
    // messages flow again, each once
    let k = 0;
    await until(
      async () => {
        await admin.publish(ch, `after ${++k}`);
        return heard.length > 1;
      },
      10_000,
      "a message after the kill",
    );
    await until(() => lines.length === 2 && link.ready, 10_000, "the back line");
    expect(lines[1]).toBe("picomcp/redis: Redis is back; back");
    expect(new Set(heard).size).toBe(heard.length);
    expect(resubscribed).toBe(1);
    expect(link.stats).toMatchObject({ ready: true, outages: 1 });
    expect(s.listening).toBe(true);
  });

  it("comes back when the client reconnects and subscribes again by itself", async () => {
    const [client, admin] = [await connected(), await connected()];
    const { link } = linked(client);
    const heard: string[] = [];
    const ch = channel();
    const s = subscriber(client, link);
    s.add(ch, (m) => heard.push(m));
    await s.ready;
    await admin.sendCommand(["CLIENT", "KILL", "TYPE", "pubsub"]);
    let k = 0;
    await until(
      async () => {
        await admin.publish(ch, `after ${++k}`);
        return heard.length > 0;
      },
      10_000,
      "a message after the kill",
    );
    await until(() => s.listening && link.ready, 10_000, "listening");
    expect(new Set(heard).size).toBe(heard.length);
  });

  it("fails probes within the deadline while Redis pauses writes, and is back after", async () => {
    const [client, admin] = [await connected(), await connected()];
    const { link, lines } = linked(client, 200);
    const s = subscriber(client, link, 100);
    s.add(channel(), () => {});
    await s.ready;
    await until(() => link.stats.calls >= 2, 10_000, "a probe");
    // PUBLISH waits while writes are paused: the probe's deadline passes
    const paused = performance.now();
    await admin.sendCommand(["CLIENT", "PAUSE", "60000", "WRITE"]);
    try {
      await until(() => !link.ready, 10_000, "the outage");
      // the next probe (within a probe interval) fails at its deadline, with some room for a loaded machine
      expect(performance.now() - paused).toBeLessThan(100 + 200 + 2000);
      expect(link.stats.timeouts).toBeGreaterThanOrEqual(1);
      expect(lines).toEqual([
        "picomcp/redis: Redis is unreachable (picomcp/redis: Redis did not answer within 200 ms); down until it is back",
      ]);
      expect(s.listening).toBe(false);
    } finally {
      await admin.sendCommand(["CLIENT", "UNPAUSE"]);
    }
    await until(() => link.ready && s.listening, 10_000, "the recovery");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe("picomcp/redis: Redis is back; back");
  });

  it("keeps no timer alive, and close() stops probing and closes its connection", async () => {
    const [client, admin] = [await connected(), await connected()];
    const before = await pubsubClients(admin);
    const timers = pendingTimersOf("src/redis/subscriber.ts");
    try {
      const { link } = linked(client);
      const s = subscriber(client, link, 20);
      s.add(channel(), () => {});
      s.add(channel(), () => {}, true);
      await s.ready;
      expect(await pubsubClients(admin)).toBe(before + 1);
      const control = linked(client).link;
      const c = subscriber(client, control, 20);
      c.add(channel(), () => {});
      await c.ready;
      await until(() => link.stats.calls >= 4, 10_000, "probes");
      // each subscriber's tick is always armed, and a probe waits to be heard: none of them keeps the
      // process alive (a call's deadline is the Link's, and lasts while the call does)
      expect(timers.pending.size).toBeGreaterThanOrEqual(2);
      expect([...timers.pending].filter((t) => t.hasRef())).toEqual([]);
      s.close();
      const calls = link.stats.calls;
      // the control subscriber probes on: the closed one does not
      const seen = control.stats.calls;
      await until(() => control.stats.calls >= seen + 4, 10_000, "the control's probes");
      expect(link.stats.calls).toBe(calls);
      await until(async () => (await pubsubClients(admin)) === before + 1, 10_000, "the connection to close");
      c.close();
      await until(async () => (await pubsubClients(admin)) === before, 10_000, "the control to close");
      await expect(s.ready).resolves.toBeUndefined();
    } finally {
      timers.restore();
    }
  });
});

describe.runIf(withDeployment("cluster"))("Subscriber on a Redis Cluster", () => {
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  const open: { destroy(): void }[] = [];
  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterAll(async () => {
    for (const s of subscribers) s.close();
    for (const c of open) c.destroy();
    await cluster?.stop();
  });

  it("hears a classic channel wherever it is published, and subscribes again when the node holding it dies", async () => {
    const client = cluster.client();
    client.on("error", () => {});
    open.push(client);
    await client.connect();
    const lines: string[] = [];
    const link = new Link(client, { log: (l) => lines.push(l), down: "down", back: "back" });
    const heard: string[] = [];
    const s = new Subscriber(client, { link, probeMs: 200 });
    subscribers.push(s);
    let resubscribed = 0;
    s.onResubscribed(() => resubscribed++);
    const ch = channel();
    s.add(ch, (m) => heard.push(m));
    await s.ready;
    // a classic PUBLISH reaches every node: from any of them it is heard
    for (const n of cluster.nodes) await n.cli("PUBLISH", ch, `from ${n.port}`);
    await until(() => heard.length === 6, 10_000, "a message from every node");
    // the node holding the subscription dies: the probes find it, and the channel is subscribed elsewhere
    let holder: (typeof cluster.nodes)[number] | undefined;
    for (const n of cluster.nodes) if ((await n.cli("PUBSUB", "NUMSUB", ch)).endsWith("\n1")) holder = n;
    expect(holder).toBeDefined();
    await holder!.kill();
    const others = cluster.nodes.filter((n) => n !== holder);
    await until(
      async () => {
        await others[0]!.cli("PUBLISH", ch, "after");
        return heard.includes("after");
      },
      30_000,
      "a message after the holder died",
    );
    expect(resubscribed).toBeGreaterThanOrEqual(1);
    expect(lines[0]).toMatch(/^picomcp\/redis: Redis is unreachable \(.+\); down until it is back$/);
    await until(() => link.ready && s.listening, 30_000, "the link to be back");
    expect(lines.at(-1)).toBe("picomcp/redis: Redis is back; back");
    await cluster.restart(holder!);
  }, 90_000);
});
