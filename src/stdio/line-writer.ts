/** Writing answers to a byte stream: in order, a few lines per write, and waiting for `drain` when it is full. */

/** The writable side of stdio: Node's `process.stdout` or anything with `write` and a `drain` event. */
export interface StdioWritable {
  write(chunk: string, callback?: (error?: Error | null) => void): boolean;
  once(event: "drain", listener: () => void): unknown;
  on?(event: "error", listener: (error: Error) => void): unknown;
}

/** Runs `f` on the next turn of the event loop. */
export const later: (f: () => void) => void =
  (globalThis as { setImmediate?: (f: () => void) => void }).setImmediate ?? ((f) => setTimeout(f, 0));

/** Answers queued before they are written without waiting for the end of the turn. */
const WRITE_EVERY = 32;

/** Writes lines in order, waiting for `drain` when the stream says its buffer is full. */
export class LineWriter {
  readonly #out: StdioWritable;
  #queue: string[] = [];
  #waiting = false;
  #scheduled = false;
  #closed = false;
  #idle: (() => void)[] = [];
  #drained: (() => void)[] = [];

  constructor(out: StdioWritable) {
    this.#out = out;
  }

  write(line: string): void {
    if (this.#closed) return;
    this.#queue.push(line + "\n");
    if (this.#waiting) return;
    // answers go out a few at a time, so that the client reads the first while the server makes
    // the next; the rest of one turn of the event loop in one write (a write is a system call)
    if (this.#queue.length >= WRITE_EVERY) this.#pump();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      later(this.#pumpLater);
    }
  }

  /** Writes what waits for the next turn of the event loop now. */
  writeNow(): void {
    if (this.#scheduled) this.#pumpLater();
  }

  readonly #pumpLater = () => {
    this.#scheduled = false;
    if (!this.#waiting && !this.#closed) this.#pump();
  };

  #pump(): void {
    while (this.#queue.length > 0) {
      const chunk = this.#queue.length === 1 ? this.#queue[0]! : this.#queue.join("");
      this.#queue = [];
      let ok: boolean;
      try {
        ok = this.#out.write(chunk);
      } catch {
        this.close();
        return;
      }
      if (!ok) {
        this.#waiting = true;
        this.#out.once("drain", () => {
          this.#waiting = false;
          this.#pump();
          if (!this.#waiting) for (const f of this.#drained.splice(0)) f();
        });
        return;
      }
    }
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Whether the stream said its buffer is full and has not drained since. */
  get congested(): boolean {
    return this.#waiting && !this.#closed;
  }

  /** Calls `f` once the stream has drained (or the writer closed). */
  whenDrained(f: () => void): void {
    if (this.congested) this.#drained.push(f);
    else f();
  }

  /** Resolves once everything queued has been handed to the stream and the stream has taken it. */
  flush(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const queued = this.#queue.length > 0 || this.#waiting;
    const drained = queued ? new Promise<void>((r) => this.#idle.push(r)) : Promise.resolve();
    return drained.then(
      () =>
        new Promise<void>((resolve) => {
          try {
            this.#out.write("", () => resolve());
          } catch {
            resolve();
          }
        }),
    );
  }

  close(): void {
    // what was answered before the close still goes out, as when each answer was written at once
    if (!this.#closed && !this.#waiting && this.#queue.length > 0) this.#pump();
    this.#closed = true;
    this.#queue = [];
    for (const resolve of this.#idle.splice(0)) resolve();
    for (const f of this.#drained.splice(0)) f();
  }
}
