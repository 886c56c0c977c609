/**
 * `RedisBus`: a {@link ChangeBus} shared by every instance through one Redis pub/sub channel. An
 * event reaches this instance's own listeners at once, and the other instances through Redis; an
 * instance ignores its own messages when they come back, so nothing is delivered twice.
 */
import { type ChangeBus, type ChangeEvent, LocalBus } from "../bus.js";
import type { RedisClient, RedisLog } from "./client.js";
import { DEFAULT_TIMEOUT_MS, instanceId, Link, type RedisStats } from "./link.js";
import { DEFAULT_PROBE_MS, Subscriber } from "./subscriber.js";

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
  /** The deadline of each publish, and of each probe of the subscription, in milliseconds. Default: 1000. */
  timeoutMs?: number;
  /** How often a silent channel is probed (a message to itself), in milliseconds. Default: 5000. */
  probeMs?: number;
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
 * A change bus across instances on Redis pub/sub. Give it a node-redis client as it is: `createClient()`,
 * `createCluster()` or `createSentinel()`, connected or not (the bus connects it). It publishes on it,
 * and listens on a duplicate of its own: on a cluster on sharded channels (SPUBLISH, SSUBSCRIBE: the
 * shard of each channel carries it to every instance), elsewhere on classic ones.
 *
 * Its health is told by what its calls do, never by the client's events: each publish has a deadline
 * (`timeoutMs`, default {@link DEFAULT_TIMEOUT_MS}); a channel silent for `probeMs` (default
 * {@link DEFAULT_PROBE_MS}) gets a probe of the bus's own, and a probe not heard within the deadline
 * subscribes the channel again (on a fresh connection if need be), so the bus comes back after a
 * failover, a restart of everything or a lost subscription, whatever the client emitted. While Redis
 * is down, events still reach this instance's clients; one log line says so, one more when events
 * cross again, and {@link stats} counts it all. On a cluster, node-redis sends a failed-over master's
 * slots to its replica once it refreshes its view of the cluster, 5 s after a node's connection
 * started failing by default: `createCluster({ rootNodes, topologyRefreshOnReconnectionAttemptStrategy: 1000 })`
 * brings events across sooner.
 * @example
 * const bus = new RedisBus(createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }));
 * const server = new McpServer({ name: "notes", version: "1.0.0", bus });
 */
export class RedisBus implements ChangeBus {
  /** This instance's id in the messages it publishes. */
  readonly id: string;
  /** Settles once both channels are subscribed; while Redis is unreachable it waits (the bus retries). */
  readonly ready: Promise<void>;
  readonly #local = new LocalBus();
  readonly #client: RedisClient;
  readonly #link: Link;
  readonly #subscriber: Subscriber;
  readonly #channel: string;
  readonly #relayChannel: string;
  readonly #relays = new Set<(message: string) => void>();
  readonly #shareLists: boolean;
  #closed = false;

  constructor(client: RedisClient, options: RedisBusOptions = {}) {
    this.#client = client;
    this.#channel = options.channel ?? "picomcp:changes";
    this.#relayChannel = `${this.#channel}:relay`;
    this.#shareLists = (options.share ?? "updates") === "all";
    this.#link = new Link(client, {
      ...options,
      down: "change events reach this instance's clients only",
      back: "change events cross instances again",
    });
    this.id = instanceId();
    this.#subscriber = new Subscriber(client, { link: this.#link, probeMs: options.probeMs });
    this.#subscriber.add(this.#channel, (message) => this.#receive(message), true);
    this.#subscriber.add(this.#relayChannel, (message) => this.#relayed(message), true);
    this.ready = this.#start();
  }

  /** What the bus's calls to Redis have done: publishes and probes, their failures, the outages. */
  get stats(): RedisStats {
    return this.#link.stats;
  }

  async #start(): Promise<void> {
    try {
      if (!this.#client.isOpen) await this.#client.connect();
    } catch (error) {
      // the client retries by itself, or publishes are refused (and counted) until it does
      if (!this.#closed) this.#link.failed(error);
    }
    await this.#subscriber.ready;
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
    // within the deadline, or refused at once while the client is not connected: the Link counts
    // and tells the failure, and the event has reached this instance's clients
    this.#publish(this.#channel, JSON.stringify({ from: this.id, event }));
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
   * `<channel>:relay` (sharded on a cluster): how `RedisSessionStore` reaches the instance that holds
   * a session's stream. Lost while Redis is down (one log line says so).
   */
  relay(message: string): void {
    if (this.#closed) return;
    this.#publish(this.#relayChannel, message);
  }

  /**
   * Publishes within the deadline (sharded on a cluster): a message the client has not yet written when
   * the deadline passes is dropped, not sent once Redis is back (one already written to a Redis that
   * stalls is published when it resumes). A failure is the Link's to count and tell.
   */
  #publish(channel: string, message: string): void {
    this.#link.publish(channel, message, true).catch(() => {});
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
    this.#subscriber.close();
  }
}
