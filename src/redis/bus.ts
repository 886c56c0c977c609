/**
 * `RedisBus`: a {@link ChangeBus} shared by every instance through one Redis pub/sub channel. An
 * event reaches this instance's own listeners at once, and the other instances through Redis; an
 * instance ignores its own messages when they come back, so nothing is delivered twice.
 */
import { type ChangeBus, type ChangeEvent, LocalBus } from "../bus.js";
import { Health, type RedisClient, type RedisLog } from "./client.js";

/** Options of {@link RedisBus}. */
export interface RedisBusOptions {
  /** The channel every instance publishes on and listens to. Default: `"picomcp:changes"`. */
  channel?: string;
  /**
   * What crosses instances: `"updates"` (`resourceUpdated` only: each instance announces its own
   * registration changes to its own clients) or `"all"` (list changes too). Task changes never
   * cross: they stay with the process that runs the task. Default: `"updates"`.
   */
  share?: "updates" | "all";
  /** Where the one line per Redis outage and per recovery goes. Default: `console.warn`. */
  log?: RedisLog;
}

const KINDS = new Set(["tools", "resources", "prompts"]);

/** The event of a message from another instance, or undefined when it is not one picomcp sent. */
function parse(message: string): { from: string; event: ChangeEvent } | undefined {
  let m: unknown;
  try {
    m = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof m !== "object" || m === null) return undefined;
  const { from, event } = m as { from?: unknown; event?: { type?: unknown; uri?: unknown; kind?: unknown } };
  if (typeof from !== "string" || typeof event !== "object" || event === null) return undefined;
  if (event.type === "resource_updated" && typeof event.uri === "string")
    return { from, event: { type: "resource_updated", uri: event.uri } };
  if (event.type === "list_changed" && typeof event.kind === "string" && KINDS.has(event.kind))
    return { from, event: { type: "list_changed", kind: event.kind as "tools" | "resources" | "prompts" } };
  return undefined;
}

/**
 * A change bus across instances on Redis pub/sub. Give it a node-redis client (`createClient()`,
 * connected or not); it publishes on it and subscribes on a duplicate of its own, which reconnects
 * and resubscribes by itself after an outage. While Redis is down, events still reach this
 * instance's clients, and one log line says so.
 * @example
 * const bus = new RedisBus(createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }));
 * const server = new McpServer({ name: "notes", version: "1.0.0", bus });
 */
export class RedisBus implements ChangeBus {
  /** This instance's id in the messages it publishes. */
  readonly id: string;
  /** Settles once the subscription is in place; while Redis is unreachable it waits (the client retries). */
  readonly ready: Promise<void>;
  readonly #local = new LocalBus();
  readonly #client: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #channel: string;
  readonly #relayChannel: string;
  readonly #relays = new Set<(message: string) => void>();
  readonly #shareLists: boolean;
  readonly #health: Health;
  #closed = false;
  #subscribed = false;
  #subscribing: Promise<void> | undefined;
  #connecting: Promise<void> | undefined;
  // one listener for the bus's life: node-redis keeps a set, so it is never added twice
  readonly #onMessage = (message: string, channel: string) =>
    channel === this.#relayChannel ? this.#relayed(message) : this.#receive(message);

  constructor(client: RedisClient, options: RedisBusOptions = {}) {
    this.#client = client;
    this.#channel = options.channel ?? "picomcp:changes";
    this.#relayChannel = `${this.#channel}:relay`;
    this.#shareLists = (options.share ?? "updates") === "all";
    this.#health = new Health(
      options.log,
      "change events reach this instance's clients only",
      "change events cross instances again",
    );
    const bytes = crypto.getRandomValues(new Uint8Array(9));
    this.id = btoa(String.fromCharCode(...bytes));
    // a client without an error listener crashes the process on the first lost connection
    const failed = (error: Error) => this.#failed(error);
    client.on("error", failed);
    this.#subscriber = client.duplicate();
    this.#subscriber.on("error", failed);
    // (re)subscribe whenever the subscriber becomes ready: a first connect that failed (a
    // reconnectStrategy that gave up, Redis down at start) is retried when the client is back
    this.#subscriber.on("ready", () => {
      this.#subscribe();
      // after a reconnect node-redis has put the subscription back by the time it is ready
      this.#recovered();
    });
    client.on("ready", () => {
      if (!this.#closed) void this.#connectSubscriber();
      this.#recovered();
    });
    this.ready = this.#start();
  }

  async #start(): Promise<void> {
    try {
      if (!this.#client.isOpen) await this.#client.connect();
    } catch (error) {
      this.#failed(error);
    }
    await this.#connectSubscriber();
  }

  /** Connects the subscriber unless it is open (connecting, or retrying by itself); settles once subscribed. */
  #connectSubscriber(): Promise<void> {
    if (!this.#subscriber.isOpen) this.#connecting = this.#connectOnce();
    return this.#connecting ?? Promise.resolve();
  }

  async #connectOnce(): Promise<void> {
    try {
      await this.#subscriber.connect();
      await this.#subscribing;
    } catch (error) {
      this.#failed(error);
    }
  }

  /** Subscribes once; node-redis itself resubscribes after each reconnect. */
  #subscribe(): void {
    if (this.#subscribed || this.#subscribing || this.#closed) return;
    this.#subscribing = this.#subscriber
      .subscribe([this.#channel, this.#relayChannel], this.#onMessage)
      .then(
        () => {
          this.#subscribed = true;
          this.#recovered();
        },
        (error: unknown) => this.#failed(error),
      )
      .finally(() => {
        this.#subscribing = undefined;
      });
  }

  /** Back only when both connections are: the subscription in place, the publisher able to publish. */
  #recovered(): void {
    if (this.#subscribed && this.#client.isReady && this.#subscriber.isReady) this.#health.recovered();
  }

  /** A failure, unless the bus was closed: then the connection's end is no outage. */
  #failed(error: unknown): void {
    if (!this.#closed) this.#health.failed(error);
  }

  #receive(message: string): void {
    const m = parse(message);
    if (!m || m.from === this.id || this.#closed) return;
    if (m.event.type === "list_changed" && !this.#shareLists) return;
    this.#local.publish(m.event);
  }

  publish(event: ChangeEvent): void {
    this.#local.publish(event);
    if (this.#closed || !this.#crosses(event)) return;
    // a command sent while disconnected would wait in the client's queue and arrive late, or never;
    // after a failure on either connection, wait for both to be back (the client may not know yet)
    if (this.#health.down || !this.#client.isReady) {
      this.#failed(new Error("the client is not connected"));
      return;
    }
    const message = JSON.stringify({ from: this.id, event });
    this.#client.publish(this.#channel, message).catch((error: unknown) => this.#failed(error));
  }

  /**
   * Whether other instances take the event. A task change never crosses: the task runs in this
   * process, and its result is the caller's alone, so it is not sent where every instance drops it.
   */
  #crosses(event: ChangeEvent): boolean {
    return event.type === "resource_updated" || (event.type === "list_changed" && this.#shareLists);
  }

  subscribe(listener: (event: ChangeEvent) => void): () => void {
    return this.#local.subscribe(listener);
  }

  /**
   * Sends `message` to every instance's relay listeners (this one's too) on the channel
   * `<channel>:relay`: how `RedisSessionStore` reaches the instance that holds a session's stream.
   * Lost while Redis is down (one log line says so).
   */
  relay(message: string): void {
    if (this.#closed) return;
    if (this.#health.down || !this.#client.isReady) {
      this.#failed(new Error("the client is not connected"));
      return;
    }
    this.#client.publish(this.#relayChannel, message).catch((error: unknown) => this.#failed(error));
  }

  /** Hears the messages of {@link relay}, from every instance; returns what stops it. */
  onRelay(listener: (message: string) => void): () => void {
    this.#relays.add(listener);
    return () => this.#relays.delete(listener);
  }

  #relayed(message: string): void {
    if (this.#closed) return;
    for (const listener of [...this.#relays]) {
      try {
        listener(message);
      } catch {
        // one listener's failure is its own
      }
    }
  }

  /** Stops listening and closes the bus's own connection (the client given stays open). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscriber.destroy();
  }
}
