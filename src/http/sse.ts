/** Server-Sent Events on a web `ReadableStream`: framing, a bounded backlog, and cancel detection. */

const encoder = new TextEncoder();
/** Bytes a client's stream holds before it counts as behind. */
const HIGH_WATER = 16 * 1024;

/** The headers of every SSE response. */
export const SSE_HEADERS: { readonly [name: string]: string } = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
});

/** Options of {@link SseWriter}. */
export interface SseWriterOptions {
  /** Bytes queued for a client that does not read before it is dropped as gone. */
  maxBufferedBytes: number;
  /** Called once when the client goes away (disconnect, or a backlog over the limit); not on `close()`. */
  onGone: () => void;
  /** Told of every change of the queue, in bytes (and whether the client is behind); false drops the client. */
  account?: ((delta: number, stalled: boolean) => boolean) | undefined;
  /** Called once when the body ends, whichever way (`close()`, the client gone, dropped). */
  onEnd?: (() => void) | undefined;
}

/**
 * One SSE response body. Writes are synchronous and never throw; once the client is gone (or
 * `close()` was called) they return false. A client that stops reading while events pile up past
 * `maxBufferedBytes` is dropped, so a slow reader cannot make the server buffer without bound.
 */
export class SseWriter {
  /** The body to put in a `Response`. */
  readonly readable: ReadableStream<Uint8Array>;
  /** When something was last written (for keep-alive comments). */
  lastWrite = Date.now();
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #open = true;
  #stalledSince: number | undefined;
  #wake: (() => void) | undefined;
  readonly #options: SseWriterOptions;
  /** Bytes queued as last told to `account`. */
  #queued = 0;

  constructor(options: SseWriterOptions) {
    this.#options = options;
    this.readable = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => {
          this.#stalledSince = undefined;
          this.#count();
          this.#wake?.();
        },
        cancel: () => this.#gone(),
      },
      { highWaterMark: HIGH_WATER, size: (chunk) => chunk.byteLength },
    );
  }

  /** Whether writes still reach the client. */
  get open(): boolean {
    return this.#open;
  }

  /** Since when the client has not taken what is queued (undefined while it keeps up). */
  get stalledSince(): number | undefined {
    return this.#stalledSince;
  }

  /** Resolves once the client has room for more (or is gone): for writing a long replay. */
  async drained(): Promise<void> {
    while (this.#open && (this.#controller.desiredSize ?? 1) <= 0) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  /** Drops the client as gone: what is queued is discarded. */
  drop(): void {
    try {
      this.#controller.error(new Error("SSE client dropped"));
    } catch {
      // already errored
    }
    this.#gone();
  }

  /** Writes one event: `id:` when given, and `data:` (a single line: JSON-RPC text has no raw newlines). */
  event(data: string, id?: string, retryMs?: number): boolean {
    let text = id === undefined ? "" : `id: ${id}\n`;
    if (retryMs !== undefined) text += `retry: ${retryMs}\n`;
    return this.#write(`${text}data: ${data}\n\n`);
  }

  /** Writes a bare `retry:` field: how long a client waits before it reconnects. */
  retry(ms: number): boolean {
    return this.#write(`retry: ${ms}\n\n`);
  }

  /** Writes a comment line (a keep-alive). */
  comment(text: string): boolean {
    return this.#write(`: ${text}\n\n`);
  }

  /** Ends the body after what is queued. */
  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#release();
    try {
      this.#controller.close();
    } catch {
      // already closed or errored
    }
  }

  /** Tells `account` what the queue holds now; false when it may not hold that much. */
  #count(): boolean {
    const account = this.#options.account;
    if (account === undefined || !this.#open) return true;
    const queued = Math.max(0, HIGH_WATER - (this.#controller.desiredSize ?? HIGH_WATER));
    const delta = queued - this.#queued;
    if (delta === 0) return true;
    if (!account(delta, queued > HIGH_WATER)) return false;
    this.#queued = queued;
    return true;
  }

  /** Gives back what the queue was counted for, and says the body ended (the client is gone, or it was closed). */
  #release(): void {
    if (this.#queued > 0) this.#options.account?.(-this.#queued, false);
    this.#queued = 0;
    this.#options.onEnd?.();
  }

  #write(text: string): boolean {
    if (!this.#open) return false;
    try {
      this.#controller.enqueue(encoder.encode(text));
    } catch {
      this.#gone();
      return false;
    }
    this.lastWrite = Date.now();
    const desired = this.#controller.desiredSize ?? 1;
    if (desired <= 0) this.#stalledSince ??= this.lastWrite;
    // a client that stopped reading: drop what is queued rather than hold it forever
    if (desired < -this.#options.maxBufferedBytes || !this.#count()) {
      this.drop();
      return false;
    }
    return true;
  }

  #gone(): void {
    if (!this.#open) return;
    this.#release();
    this.#open = false;
    this.#wake?.();
    this.#options.onGone();
  }
}

/** Options of {@link LiveStreams}. */
export interface LiveStreamsOptions {
  /** Milliseconds of silence before a keep-alive comment; a stream behind for four times as long is dropped. */
  keepAliveMs: number;
  /** Milliseconds between beats. */
  everyMs: number;
  /** Bytes queued for a client that is not reading before its stream is dropped. */
  maxBufferedBytes: number;
  /** Runs on every beat; true while the caller still needs the timer although no stream is open. */
  beat: (now: number) => boolean;
  /** Runs each time a stream ends (a drain waits for the last). */
  ended?: () => void;
}

/** The open SSE streams, and one timer for all of them that stops when nothing is left. */
export class LiveStreams {
  readonly #live = new Set<SseWriter>();
  readonly #o: LiveStreamsOptions;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: LiveStreamsOptions) {
    this.#o = options;
  }

  /** A new stream, kept alive until it closes; `onGone` runs when the client is gone; `account` hears of its queue. */
  open(onGone: () => void, account?: SseWriterOptions["account"], onEnd?: () => void): SseWriter {
    const ended = () => {
      this.#live.delete(sink);
      onEnd?.();
      this.#o.ended?.();
    };
    const sink = new SseWriter({ maxBufferedBytes: this.#o.maxBufferedBytes, onGone, account, onEnd: ended });
    this.#live.add(sink);
    this.start();
    return sink;
  }

  /** Streams open. */
  get size(): number {
    return this.#live.size;
  }

  /** Starts the timer, if it is not running. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#tick(), this.#o.everyMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #tick(): void {
    const now = Date.now();
    const busy = this.#o.beat(now);
    const keepAliveMs = this.#o.keepAliveMs;
    for (const sink of this.#live) {
      const stalled = sink.stalledSince;
      if (!sink.open) this.#live.delete(sink);
      // a client that stayed behind for a long time is gone, whatever its socket says
      else if (stalled !== undefined && now - stalled > 4 * keepAliveMs) sink.drop();
      else if (now - sink.lastWrite >= keepAliveMs) sink.comment("keepalive");
    }
    if (!busy && this.#live.size === 0) this.#stop();
  }

  #stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Closes every stream and stops the timer. */
  close(): void {
    for (const sink of this.#live) sink.close();
    this.#live.clear();
    this.#stop();
  }
}
