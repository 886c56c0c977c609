/**
 * The few commands picomcp/redis uses, as a structural type: a node-redis client (`createClient()`
 * of the `redis` package, v6) fits it as it is, and the subpath never imports the package.
 */

/** A connected Redis client: what the bus, the event store and the rate store call on it. */
export interface RedisClient {
  /** True once the socket is open (connecting or connected). */
  readonly isOpen: boolean;
  /** True while commands can be sent (connected, and resubscribed after a reconnect). */
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  /** A new client with the same options (the bus subscribes on a connection of its own). */
  duplicate(): RedisClient;
  /** Closes the connection at once, without waiting for pending replies. */
  destroy(): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "ready", listener: () => void): unknown;
  publish(channel: string, message: string): Promise<unknown>;
  subscribe(
    channel: string | string[],
    listener: (message: string, channel: string) => void,
  ): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  rPush(key: string, element: string): Promise<unknown>;
  lTrim(key: string, start: number, stop: number): Promise<unknown>;
  pExpire(key: string, ms: number): Promise<unknown>;
  lRange(key: string, start: number, stop: number): Promise<string[]>;
  del(key: string): Promise<unknown>;
  /** Loads a Lua script; resolves with its SHA1 digest. */
  scriptLoad(script: string): Promise<unknown>;
  /** Runs a loaded script by its digest (a `NOSCRIPT` error when Redis forgot it). */
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Where picomcp/redis writes its one line per outage and per recovery. Default: `console.warn`. */
export type RedisLog = (line: string) => void;

/** Tells one outage once: the first failure, then nothing until Redis is ready again. */
export class Health {
  readonly #log: RedisLog;
  readonly #down: string;
  readonly #back: string;
  #failed = false;

  /** `down`: what happens meanwhile; `back`: what works again. */
  constructor(log: RedisLog | undefined, down: string, back: string) {
    this.#log = log ?? ((line) => console.warn(line));
    this.#down = down;
    this.#back = back;
  }

  /** Whether the last thing heard was a failure. */
  get down(): boolean {
    return this.#failed;
  }

  failed(reason: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    const why = reason instanceof Error ? reason.message || reason.name : String(reason);
    this.#log(`picomcp/redis: Redis is unreachable (${why}); ${this.#down} until it is back`);
  }

  recovered(): void {
    if (!this.#failed) return;
    this.#failed = false;
    this.#log(`picomcp/redis: Redis is back; ${this.#back}`);
  }
}
