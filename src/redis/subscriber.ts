/**
 * `Subscriber`: channels heard on a connection of their own, and checked by what they do: a channel
 * that has been silent for a probe interval gets a probe published to it, and a probe not heard
 * within the deadline means the subscription is lost: it is made again (on a fresh connection when
 * the one it had cannot), whatever events the client emitted or did not.
 */
import type { RedisClient } from "./client.js";
import { instanceId, type Link, positive, unref, within } from "./link.js";

/** The default interval between two probes of a silent channel, in milliseconds. */
export const DEFAULT_PROBE_MS = 5000;

/** Options of a {@link Subscriber}. */
export interface SubscriberOptions {
  /** The owner's Link: probes are published through it, and their outcomes feed its health. */
  link: Link;
  /** How often a silent channel is probed, in milliseconds. Default: {@link DEFAULT_PROBE_MS}. */
  probeMs?: number | undefined;
}

/** The start of every probe (so a message is told from a probe without parsing it). */
const PROBE = '{"picomcp-probe":';

interface Channel {
  readonly name: string;
  readonly listener: (message: string) => void;
  /** SSUBSCRIBE/SPUBLISH: sharded and on a cluster. */
  readonly sharded: boolean;
  /** The listener given to the connection (one per channel, so unsubscribing names it). */
  readonly onMessage: (message: string) => void;
  /** Subscribed on the current connection. */
  subscribed: boolean;
  /** Subscribed once at least: a later subscription is a re-subscription. */
  once: boolean;
  /** Something was heard on it since the last tick. */
  heard: boolean;
  /** Its last probe was heard (or it has not been probed since it was subscribed). */
  listening: boolean;
  /** A probe failed, and no subscription was made since: the next probe heard may follow a gap. */
  suspect: boolean;
  /** The number of its last probe sent and not yet heard or failed, 0 for none. */
  probe: number;
  /** Probes numbered up to this were sent before its current subscription: they prove nothing of it. */
  floor: number;
  /** The highest number of its own probes heard. */
  heardUpTo: number;
  /** Settles once it is first subscribed (or the subscriber is closed). */
  readonly first: Promise<void>;
  settle: () => void;
}

const pause = (ms: number) => new Promise<void>((resolve) => unref(setTimeout(resolve, ms)));

/** Closes a connection at once, whatever state it is in. */
function destroy(connection: RedisClient | undefined): void {
  try {
    connection?.destroy();
  } catch {
    // closed already
  }
}

/**
 * Listens to channels on a duplicate of `client` (a client, a cluster or Sentinel), connected by the
 * subscriber itself. Sharded channels use SSUBSCRIBE on a cluster (SPUBLISH reaches them on every
 * node) and classic SUBSCRIBE elsewhere. Each channel silent for `probeMs` (every half deadline
 * while the owner's Link is down or a channel unheard) is probed: a message `{"picomcp-probe":"<id>","n":<k>}` published
 * through the Link. A probe heard tells the Link it works; one not heard within `link.timeoutMs`
 * (or counted by nobody) tells it the subscription is lost, and the channel is subscribed again: on
 * the same connection, else on a fresh duplicate. Probes never reach the channels' listeners, and
 * the probes of other subscribers are dropped. Its timers do not keep a process alive.
 */
export class Subscriber {
  /** This subscriber's id in its probes. */
  readonly id: string;
  readonly #client: RedisClient;
  readonly #link: Link;
  readonly #probeMs: number;
  readonly #channels = new Map<string, Channel>();
  readonly #resubscribed = new Set<() => void>();
  #connection: RedisClient | undefined;
  #repairing = false;
  #n = 0;
  #tick: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(client: RedisClient, options: SubscriberOptions) {
    this.#client = client;
    this.#link = options.link;
    this.#probeMs = positive(options.probeMs ?? DEFAULT_PROBE_MS, "probeMs");
    this.id = instanceId();
  }

  /** Adds a channel (sharded: SSUBSCRIBE on a cluster, classic elsewhere); its probes never reach `listener`. */
  add(channel: string, listener: (message: string) => void, sharded = false): void {
    if (this.#closed) return;
    if (this.#channels.has(channel))
      throw new Error(`picomcp/redis: the channel ${channel} is subscribed already`);
    let settle!: () => void;
    const first = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const c: Channel = {
      name: channel,
      listener,
      sharded: sharded && this.#link.cluster,
      onMessage: (message) => this.#message(c, message),
      subscribed: false,
      once: false,
      heard: false,
      listening: false,
      suspect: false,
      probe: 0,
      floor: 0,
      heardUpTo: 0,
      first,
      settle,
    };
    this.#channels.set(channel, c);
    void this.#repair();
    this.#schedule();
  }

  /** Settles once every channel added so far is subscribed (waits, retrying, while Redis is unreachable). */
  get ready(): Promise<void> {
    return Promise.all([...this.#channels.values()].map((c) => c.first)).then(() => {});
  }

  /** Whether every channel was heard by its last probe (or has not been probed yet and is subscribed). */
  get listening(): boolean {
    for (const c of this.#channels.values()) if (!c.subscribed || !c.listening) return false;
    return true;
  }

  /**
   * Called after every re-subscription, and when a probe is heard again after probes failed (the
   * client may have subscribed again by itself): messages may have been missed meanwhile.
   */
  onResubscribed(listener: () => void): void {
    this.#resubscribed.add(listener);
  }

  /** Stops probing and closes the subscriber's connection. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#tick) clearTimeout(this.#tick);
    for (const c of this.#channels.values()) c.settle();
    destroy(this.#connection);
    this.#connection = undefined;
  }

  #message(c: Channel, message: string): void {
    if (this.#closed) return;
    c.heard = true;
    if (!message.startsWith(PROBE)) {
      try {
        c.listener(message);
      } catch {
        // the listener's failure is its own
      }
      return;
    }
    let probe: { "picomcp-probe"?: unknown; n?: unknown };
    try {
      probe = JSON.parse(message);
    } catch {
      return;
    }
    const n = probe.n;
    if (probe["picomcp-probe"] !== this.id || typeof n !== "number" || n <= c.floor || n <= c.heardUpTo)
      return;
    c.heardUpTo = n;
    if (c.probe <= n) c.probe = 0;
    c.listening = true;
    // back only when every channel is heard: on a cluster one may be on a node that answers while
    // another's is away, and the state would go back and forth with each probe
    if (this.listening) this.#link.succeeded();
    if (c.suspect) {
      c.suspect = false;
      this.#tell();
    }
  }

  /**
   * Arms the next tick: every probe interval, or every half deadline while something is wrong (then
   * each tick probes the channels not heard, whether a probe is in flight or not). A probe that fails
   * then does so less than a deadline after the last one, so the Link cannot be told back (by a call
   * that answers, to a node that works) while a channel is not heard.
   */
  #schedule(): void {
    if (this.#closed || this.#channels.size === 0) return;
    if (this.#tick) clearTimeout(this.#tick);
    const wrong = !this.#link.ready || !this.listening;
    const ms = wrong ? Math.min(this.#probeMs, Math.ceil(this.#link.timeoutMs / 2)) : this.#probeMs;
    this.#tick = unref(setTimeout(() => this.#onTick(), ms));
  }

  #onTick(): void {
    this.#tick = undefined;
    if (this.#closed) return;
    const down = !this.#link.ready;
    for (const c of this.#channels.values()) {
      const wrong = down || !c.listening;
      if (c.subscribed && (wrong || (c.probe === 0 && !c.heard))) this.#probe(c);
      c.heard = false;
    }
    this.#schedule();
  }

  #probe(c: Channel): void {
    const n = ++this.#n;
    c.probe = n;
    const message = `${PROBE}${JSON.stringify(this.id)},"n":${n}}`;
    // whether this probe, sent on the channel's current subscription, still says something of it
    const current = () => !this.#closed && c.subscribed && n > c.floor && c.heardUpTo < n;
    this.#link.publish(c.name, message, c.sharded).then(
      (count) => {
        if (!current()) return;
        // nobody subscribed where it was published (where the count covers every subscriber)
        if (count === 0 && (c.sharded || !this.#link.cluster)) {
          this.#lost(c, "no subscriber on the channel");
          return;
        }
        const ms = this.#link.timeoutMs;
        unref(setTimeout(() => current() && this.#lost(c, `a probe was not heard within ${ms} ms`), ms));
      },
      () => {
        // the Link has counted the failure: the channel is unknown until a probe is heard
        if (!current()) return;
        if (c.probe === n) c.probe = 0;
        c.listening = false;
        c.suspect = true;
      },
    );
  }

  #lost(c: Channel, why: string): void {
    if (this.#closed) return;
    c.probe = 0;
    c.listening = false;
    c.subscribed = false;
    this.#link.failed(new Error(`the subscription to ${c.name} was lost: ${why}`));
    void this.#repair();
  }

  /** Subscribes every channel that is not, one repair at a time, until each is (or the subscriber closes). */
  async #repair(): Promise<void> {
    if (this.#repairing) return;
    this.#repairing = true;
    try {
      for (;;) {
        const lost = [...this.#channels.values()].filter((c) => !c.subscribed);
        if (this.#closed || lost.length === 0) return;
        // on the connection there is, if it answers; else on a fresh one, every channel
        if (!(await this.#again(lost))) await this.#fresh();
      }
    } finally {
      this.#repairing = false;
    }
  }

  /** Subscribes `lost` again on the current connection; false when it cannot. */
  async #again(lost: Channel[]): Promise<boolean> {
    const connection = this.#connection;
    if (!connection?.isReady) return false;
    const ms = this.#link.timeoutMs;
    try {
      for (const c of lost) {
        // the client may believe it is still subscribed, and would then send nothing
        await within(
          c.sharded ? connection.sUnsubscribe(c.name) : connection.unsubscribe(c.name),
          ms,
          "unsubscribing",
        ).catch(() => {});
        await within(
          c.sharded ? connection.sSubscribe(c.name, c.onMessage) : connection.subscribe(c.name, c.onMessage),
          ms,
          `subscribing to ${c.name}`,
        );
        if (this.#connection !== connection) return true;
        this.#subscribed(c);
      }
    } catch {
      return false;
    }
    this.#told(lost);
    return true;
  }

  /** A fresh duplicate connection, every channel subscribed on it; waits a deadline after a failure. */
  async #fresh(): Promise<void> {
    destroy(this.#connection);
    const connection = this.#client.duplicate();
    this.#connection = connection;
    // the first error heard while connecting says why at once (a client that retries by itself
    // would only be given up at the deadline); and without an error listener a lost connection
    // would end the process
    let connecting = true;
    connection.on("error", (error) => {
      if (!connecting || this.#closed || this.#connection !== connection) return;
      connecting = false;
      this.#link.failed(error);
    });
    const channels = [...this.#channels.values()];
    for (const c of channels) c.subscribed = false;
    const ms = this.#link.timeoutMs;
    try {
      // a cluster or Sentinel client connects to several nodes: a few deadlines
      await within(connection.connect(), 5 * ms, "connecting");
      for (const c of channels) {
        if (this.#connection !== connection) return;
        await within(
          c.sharded ? connection.sSubscribe(c.name, c.onMessage) : connection.subscribe(c.name, c.onMessage),
          ms,
          `subscribing to ${c.name}`,
        );
      }
    } catch (error) {
      if (this.#closed || this.#connection !== connection) return;
      if (connecting) this.#link.failed(error);
      connecting = false;
      destroy(connection);
      this.#connection = undefined;
      await pause(ms);
      return;
    }
    connecting = false;
    if (this.#connection !== connection) return;
    for (const c of channels) this.#subscribed(c);
    this.#told(channels);
  }

  #subscribed(c: Channel): void {
    // a probe sent before this subscription proves nothing of it
    c.floor = this.#n;
    c.probe = 0;
    c.subscribed = true;
    c.listening = true;
    c.heard = false;
    c.settle();
  }

  /** After `channels` were subscribed: a re-subscription is told, and probed at once. */
  #told(channels: Channel[]): void {
    let again = false;
    for (const c of channels) {
      c.suspect = false;
      if (c.once) {
        again = true;
        this.#probe(c);
      }
      c.once = true;
    }
    if (again) this.#tell();
    this.#schedule();
  }

  #tell(): void {
    for (const listener of [...this.#resubscribed]) {
      try {
        listener();
      } catch {
        // one listener's failure is its own
      }
    }
  }
}
