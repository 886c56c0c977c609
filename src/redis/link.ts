/**
 * `Link`: one store's calls to Redis, each with a deadline of its own, and the store's health told from
 * what those calls do (never from the client's events, which differ between a client, a cluster and
 * Sentinel): a failure takes it down, a call that answers after failures have stopped brings it back.
 */
import { toBase64Url } from "../bytes.js";
import type { RedisClient, RedisLog } from "./client.js";
import type { Script } from "./script.js";

/** The default deadline of one Redis call, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 1000;

/** What a store's calls to Redis have done since it was made: `RedisBus.stats`, `RedisSessionStore.stats`, … */
export interface RedisStats {
  /**
   * False from a failure to reach Redis (any failure but an error reply) until a call answers after
   * such failures have stopped for a deadline.
   */
  readonly ready: boolean;
  /** Calls sent to Redis. */
  readonly calls: number;
  /**
   * Calls that failed, and failures heard outside a call (a subscription lost): the deadline passed,
   * the call was refused, the connection broke, Redis could not serve it (CLUSTERDOWN, LOADING, …), or
   * Redis answered with an error (ERR, WRONGTYPE, CROSSSLOT, …; that one leaves `ready` as it is).
   */
  readonly failures: number;
  /** The failures that were a deadline passing. */
  readonly timeouts: number;
  /** Calls not sent at all: the client was not connected. */
  readonly refused: number;
  /** Times the store went from ready to not. */
  readonly outages: number;
}

/** Options of a {@link Link}. */
export interface LinkOptions {
  /** The deadline of each call, in milliseconds. Default: {@link DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Where the line of each change of state goes. Default: `console.warn`. */
  log?: RedisLog;
  /** What the store does while calls fail (the outage line), and what works again (the recovery line). */
  down: string;
  back: string;
}

/**
 * Replies that show Redis answering: the call was wrong, Redis is not down. Every other failure (a
 * broken connection, a deadline, CLUSTERDOWN, TRYAGAIN, LOADING, MASTERDOWN, READONLY, OOM, …) is one.
 */
const ANSWERED = /^(ERR|WRONGTYPE|CROSSSLOT|NOSCRIPT|NOPERM|EXECABORT)\b/;

/** Whether an error says Redis could not be reached or could not serve. */
export function isOutage(error: unknown): boolean {
  return !(error instanceof Error && ANSWERED.test(error.message));
}

/** Checks a positive integer option, naming it. */
export function positive(n: number, name: string): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer`);
  return n;
}

/** A random id for an instance's messages, channels and keys (16 URL-safe characters). */
export function instanceId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(12)));
}

/** `timer`, which no longer keeps a process alive (where the runtime has `unref`). */
export function unref<T extends ReturnType<typeof setTimeout> | ReturnType<typeof setInterval>>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

/** Rejects once `ms` pass, unless `promise` settled first (its late failure is then ignored). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = unref(setTimeout(() => reject(new Error(`picomcp/redis: ${what} took more than ${ms} ms`)), ms));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A deadline that passed: the call's answer, if it comes, is ignored. */
export class RedisTimeoutError extends Error {
  constructor(ms: number) {
    super(`picomcp/redis: Redis did not answer within ${ms} ms`);
    this.name = "RedisTimeoutError";
  }
}

/** A store's calls to one Redis client (a client, a cluster or Sentinel). */
export class Link {
  readonly client: RedisClient;
  /** Whether the client is a cluster client: keys of one script must then share a slot. */
  readonly cluster: boolean;
  readonly timeoutMs: number;
  readonly #log: RedisLog;
  readonly #down: string;
  readonly #back: string;
  #ready = true;
  /** When the last failure was heard (performance.now()); calls that started before it prove nothing. */
  #lastFailure = Number.NEGATIVE_INFINITY;
  #calls = 0;
  #failures = 0;
  #timeouts = 0;
  #refused = 0;
  #outages = 0;

  constructor(client: RedisClient, options: LinkOptions) {
    this.client = client;
    this.cluster = Array.isArray((client as { masters?: unknown }).masters);
    this.timeoutMs = positive(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, "timeoutMs");
    this.#log = options.log ?? ((line) => console.warn(line));
    this.#down = options.down;
    this.#back = options.back;
    // a client without an error listener ends the process at its first lost connection; the events
    // themselves say nothing of health here (calls do)
    client.on("error", () => {});
  }

  /** Whether the last calls answered. */
  get ready(): boolean {
    return this.#ready;
  }

  get stats(): RedisStats {
    return {
      ready: this.#ready,
      calls: this.#calls,
      failures: this.#failures,
      timeouts: this.#timeouts,
      refused: this.#refused,
      outages: this.#outages,
    };
  }

  /**
   * Sends one call, and settles within the deadline: its answer, or a rejection (the client is not
   * connected: at once; no answer: when the deadline passes; a failure: as Redis or the client said).
   * `send` gets the client bound to the deadline: a command it has not written by then (queued while
   * it reconnects, or to be sent again after a failover) is dropped, never sent late; one already
   * written to a Redis that stalls still runs when it resumes, and its answer is ignored.
   */
  call<T>(send: (client: RedisClient) => Promise<T>): Promise<T> {
    // a single client that lost its connection would queue the call until it is back
    if (!this.client.isReady) {
      this.#refused++;
      const error = new Error("picomcp/redis: the Redis client is not connected");
      this.failed(error);
      return Promise.reject(error);
    }
    this.#calls++;
    const started = performance.now();
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const abort = new AbortController();
      const timer = setTimeout(() => {
        settled = true;
        abort.abort();
        this.#timeouts++;
        const error = new RedisTimeoutError(this.timeoutMs);
        this.#failed(error);
        reject(error);
      }, this.timeoutMs);
      let sent: Promise<T>;
      try {
        sent = send(this.client.withCommandOptions({ abortSignal: abort.signal }));
      } catch (error) {
        sent = Promise.reject(error);
      }
      sent.then(
        (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.#answered(started);
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (isOutage(error)) this.#failed(error);
          else {
            // Redis answered, with an error: a failure of the call, not of Redis
            this.#failures++;
            this.#answered(started);
          }
          reject(error);
        },
      );
    });
  }

  /** Runs a script on the node of its keys. */
  run(script: Script, keys: string[], args: string[]): Promise<unknown> {
    return this.call((client) => script.send(client, keys, args));
  }

  /**
   * Publishes `message`; resolves with how many subscribers heard it. `sharded` on a cluster: SPUBLISH,
   * whose count is every subscriber of the channel (a classic PUBLISH counts those of one node).
   */
  publish(channel: string, message: string, sharded = false): Promise<number> {
    return this.call(async (client) =>
      Number(
        await (sharded && this.cluster
          ? client.sPublish(channel, message)
          : client.publish(channel, message)),
      ),
    );
  }

  /** A failure heard outside a call (a subscription lost, a probe not heard): the store is down. */
  failed(reason: unknown): void {
    this.#failed(reason);
  }

  /** Something outside a call worked (a probe heard): as a call that answered now. */
  succeeded(): void {
    this.#answered(performance.now());
  }

  #failed(reason: unknown): void {
    this.#failures++;
    this.#lastFailure = performance.now();
    if (!this.#ready) return;
    this.#ready = false;
    this.#outages++;
    const why = reason instanceof Error ? reason.message || reason.name : String(reason);
    this.#log(`picomcp/redis: Redis is unreachable (${why}); ${this.#down} until it is back`);
  }

  /**
   * A call that started at `started` answered. Back only when it started after the last failure and
   * that failure is a deadline old: while part of a cluster is down, calls to the rest answer between
   * failures, and the state stays down (one line) until the failures stop.
   */
  #answered(started: number): void {
    if (this.#ready) return;
    const now = performance.now();
    if (started < this.#lastFailure || now - this.#lastFailure < this.timeoutMs) return;
    this.#ready = true;
    this.#log(`picomcp/redis: Redis is back; ${this.#back}`);
  }
}

/** The CRC16 (XMODEM) table of Redis Cluster's key slots. */
const CRC16 = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let b = 0; b < 8; b++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    table[i] = c;
  }
  return table;
})();

const UTF8 = new TextEncoder();

/**
 * The hash tag of `key` as Redis Cluster reads it: what lies between the first `{` and the first `}`
 * after it, when that is not empty; undefined when it has none.
 */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf("{");
  if (open === -1) return undefined;
  const close = key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/** The cluster slot of `key`, as Redis computes it: the CRC16 of its hash tag, else of the whole key, modulo 16384. */
export function slotOf(key: string): number {
  let crc = 0;
  for (const byte of UTF8.encode(hashTag(key) ?? key))
    crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ byte) & 0xff]!;
  return crc & 16383;
}
