/**
 * The few commands picomcp/redis uses, as a structural type: the clients of node-redis (the `redis`
 * package, v6) fit it as they are (`createClient()`, `createCluster()`, `createSentinel()`), and the
 * subpath never imports the package.
 */

/** A Redis client, a cluster client or a Sentinel client: what picomcp/redis calls on it. */
export interface RedisClient {
  /** True once the socket is open (connecting or connected). */
  readonly isOpen: boolean;
  /**
   * False while a single client is reconnecting (a call would wait in its queue); a cluster or Sentinel
   * client may say true while nodes are down, so calls have deadlines of their own as well.
   */
  readonly isReady: boolean;
  /** A cluster client's masters: their presence tells a cluster client from the others. */
  readonly masters?: readonly unknown[];
  connect(): Promise<unknown>;
  /** A new client with the same options (the bus subscribes on a connection of its own). */
  duplicate(): RedisClient;
  /**
   * The same client, its commands sent with `options`: once `abortSignal` aborts, a command not yet
   * written is dropped from the client's queue, and none is sent again after a reconnection.
   */
  withCommandOptions(options: { abortSignal: AbortSignal }): RedisClient;
  /** Closes the connection at once, without waiting for pending replies. */
  destroy(): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "ready", listener: () => void): unknown;
  publish(channel: string, message: string): Promise<unknown>;
  /** SPUBLISH (Redis 7): on a cluster, to the shard of the channel, counting all its subscribers. */
  sPublish(channel: string, message: string): Promise<unknown>;
  subscribe(
    channel: string | string[],
    listener: (message: string, channel: string) => void,
  ): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  sSubscribe(
    channel: string | string[],
    listener: (message: string, channel: string) => void,
  ): Promise<unknown>;
  sUnsubscribe(channel: string): Promise<unknown>;
  rPush(key: string, element: string): Promise<unknown>;
  lTrim(key: string, start: number, stop: number): Promise<unknown>;
  pExpire(key: string, ms: number): Promise<unknown>;
  lRange(key: string, start: number, stop: number): Promise<string[]>;
  del(key: string): Promise<unknown>;
  /** EVAL: runs a script by its source (and teaches it to the node that runs it). */
  EVAL(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** Runs a known script by its digest (a `NOSCRIPT` error where the node does not know it). */
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Where picomcp/redis writes its one line per outage and per recovery. Default: `console.warn`. */
export type RedisLog = (line: string) => void;
