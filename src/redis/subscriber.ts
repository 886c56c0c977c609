/** A stand-in for the probing subscriber (the pubsub branch writes the real one): the same API, no probes. */
import type { RedisClient } from "./client.js";
import type { Link } from "./link.js";

export interface SubscriberOptions {
  link: Link;
  probeMs?: number;
}

export class Subscriber {
  readonly #client: RedisClient;
  readonly #link: Link;
  readonly #resubscribed: (() => void)[] = [];
  #ready: Promise<void> = Promise.resolve();
  #connected: Promise<void> | undefined;

  constructor(client: RedisClient, options: SubscriberOptions) {
    this.#client = client.duplicate();
    this.#link = options.link;
    this.#client.on("error", () => {});
    let first = true;
    this.#client.on("ready", () => {
      if (first) first = false;
      else for (const l of this.#resubscribed) l();
    });
  }

  add(channel: string, listener: (message: string) => void, sharded = false): void {
    this.#connected ??= this.#client.connect().then(() => {});
    const c = this.#client;
    const wrapped = (m: string) => {
      if (m.startsWith('{"picomcp-probe"')) return;
      listener(m);
    };
    const prev = this.#ready;
    this.#ready = prev.then(async () => {
      await this.#connected;
      if (sharded && this.#link.cluster) await c.sSubscribe(channel, wrapped);
      else await c.subscribe(channel, wrapped);
    });
  }

  get ready(): Promise<void> {
    return this.#ready;
  }

  get listening(): boolean {
    return this.#client.isReady;
  }

  onResubscribed(listener: () => void): void {
    this.#resubscribed.push(listener);
  }

  close(): void {
    if (this.#client.isOpen) this.#client.destroy();
  }
}
