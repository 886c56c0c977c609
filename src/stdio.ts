/** `serveStdio`: newline-delimited JSON-RPC over a byte stream pair (stdin/stdout by default). */
import { concatBytes } from "./bytes.js";
import type { Connection } from "./connection.js";
import { ErrorCode } from "./errors.js";
import { encodeMessage, errorResponse, parseErrorResponse } from "./jsonrpc.js";
import type { McpServer } from "./server.js";
import { isPromiseLike, type JsonRpcMessage } from "./types.js";

/** The readable side: Node's `process.stdin` or any stream of byte chunks. */
export interface StdioReadable {
  on(event: "data", listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: "end" | "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  off?(event: string, listener: (...args: any[]) => void): unknown;
  pause?(): unknown;
  resume?(): unknown;
}

/** The writable side: Node's `process.stdout` or anything with `write` and a `drain` event. */
export interface StdioWritable {
  write(chunk: string, callback?: (error?: Error | null) => void): boolean;
  once(event: "drain", listener: () => void): unknown;
  on?(event: "error", listener: (error: Error) => void): unknown;
}

/** Options of {@link serveStdio}. */
export interface StdioOptions {
  /** Default: `process.stdin`. */
  stdin?: StdioReadable;
  /** Default: `process.stdout`. */
  stdout?: StdioWritable;
  /** Longest accepted line in bytes; a longer one gets an error answer and is skipped. Default: 16 MiB. */
  maxLineBytes?: number;
  /** Most messages in one JSON-RPC batch (2025-03-26 only); a larger one gets -32600; 0 turns batches off. Default: 100. */
  maxBatchSize?: number;
  /** Sends `console.log`/`info`/`debug` to stderr while serving on `process.stdout`. Default: true. */
  guardConsole?: boolean;
  /** Called once stdin ended and every answer is written. Default with `process.stdin`: exit the process. */
  onEnd?: () => void;
}

/** A running stdio server. */
export interface StdioServer {
  /** The connection behind it. */
  readonly connection: Connection;
  /** Resolves once input ended, in-flight requests finished and their answers were written. */
  readonly closed: Promise<void>;
}

const NEWLINE = 0x0a;
/** Requests started before reading yields, so that their answers are written and a full stdout seen. */
const YIELD_EVERY = 64;
/** Answers queued before they are written without waiting for the end of the turn. */
const WRITE_EVERY = 32;

const later: (f: () => void) => void =
  (globalThis as { setImmediate?: (f: () => void) => void }).setImmediate ?? ((f) => setTimeout(f, 0));

/**
 * Serves `server` over newline-delimited JSON-RPC on stdin/stdout. Requests run concurrently; a bad
 * line gets its error answer and the next line is served; on end of input the server finishes
 * in-flight work, writes the answers, and (by default) exits.
 * @example await serveStdio(server);
 */
export function serveStdio(server: McpServer, options: StdioOptions = {}): StdioServer {
  const proc = (globalThis as { process?: { stdin: unknown; stdout: unknown; exit(code?: number): never } })
    .process;
  const stdin = options.stdin ?? (proc?.stdin as StdioReadable);
  const stdout = options.stdout ?? (proc?.stdout as StdioWritable);
  const maxLine = options.maxLineBytes ?? 16 * 1024 * 1024;
  const maxBatch = options.maxBatchSize ?? 100;
  if (!Number.isInteger(maxBatch) || maxBatch < 0)
    throw new RangeError("maxBatchSize must be a non-negative integer");
  const usesProcessStdout = stdout === proc?.stdout;
  const restoreConsole = options.guardConsole !== false && usesProcessStdout ? guardConsole() : () => {};
  const onEnd = options.onEnd ?? (stdin === proc?.stdin ? () => proc?.exit(0) : () => {});

  const writer = new LineWriter(stdout);
  const connection = server.connect({
    send: (m) => writer.write(encodeMessage(m)),
    onClose: () => writer.close(),
  });
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let pieces: Uint8Array[] = [];
  let lineBytes = 0;
  let skipping = false;
  let inflight = 0;
  let ended = false;
  let finished = false;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));

  const answer = (m: JsonRpcMessage | JsonRpcMessage[] | undefined) => {
    if (m !== undefined) writer.write(encodeMessage(m));
  };

  const serveLine = (bytes: Uint8Array) => {
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 0x0d) end--;
    let text: string;
    try {
      text = decoder.decode(end === bytes.length ? bytes : bytes.subarray(0, end));
    } catch {
      answer(parseErrorResponse(connection.features));
      return;
    }
    if (text.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      answer(parseErrorResponse(connection.features));
      return;
    }
    if (Array.isArray(message) && message.length > maxBatch) {
      const why = maxBatch ? `a batch may hold at most ${maxBatch} messages` : "batches are off";
      answer(
        errorResponse(
          undefined,
          { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${why}` },
          connection.features,
        ),
      );
      return;
    }
    started++;
    let out: ReturnType<McpServer["handleNow"]>;
    try {
      out = server.handleNow(message, connection);
    } catch {
      return;
    }
    // a synchronous handler's answer is queued at once, as the floor of a hand-written server would
    if (!isPromiseLike(out)) return answer(out);
    inflight++;
    out.then(answered, done);
  };

  const done = () => {
    inflight--;
    maybeFinish();
  };

  const answered = (m: JsonRpcMessage | JsonRpcMessage[] | undefined) => {
    try {
      answer(m);
    } finally {
      done();
    }
  };

  const tooLong = () =>
    answer(
      errorResponse(
        undefined,
        {
          code: ErrorCode.InvalidRequest,
          message: `Invalid Request: the message is longer than ${maxLine} bytes`,
        },
        connection.features,
      ),
    );

  // Bytes read but not yet framed. Reading holds (stdin paused) while stdout has not drained, so a
  // client that does not read its answers cannot make the server queue them without bound.
  const queue: Uint8Array[] = [];
  let held = false;
  let paused = false;
  let started = 0;
  let inputEnded = false;

  const hold = () => {
    held = true;
    if (paused) return;
    paused = true;
    stdin.pause?.();
  };

  const frame = () => {
    held = false;
    started = 0;
    while (queue.length > 0) {
      if (writer.congested) {
        hold();
        writer.whenDrained(frame);
        return;
      }
      if (started >= YIELD_EVERY) {
        hold();
        later(resume);
        return;
      }
      const buf = queue[0]!;
      const nl = buf.indexOf(NEWLINE);
      const part = nl === -1 ? buf : buf.subarray(0, nl);
      if (!skipping) {
        if (lineBytes + part.length > maxLine) {
          skipping = true;
          pieces = [];
          lineBytes = 0;
          tooLong();
        } else if (part.length > 0) {
          // copied: the stream may reuse its buffer
          pieces.push(nl === -1 ? part.slice() : part);
          lineBytes += part.length;
        }
      }
      if (nl === -1) {
        queue.shift();
        continue;
      }
      if (!skipping) {
        const line = pieces.length === 1 ? pieces[0]! : concatBytes(pieces, lineBytes);
        pieces = [];
        lineBytes = 0;
        serveLine(line);
      }
      skipping = false;
      if (nl + 1 < buf.length) queue[0] = buf.subarray(nl + 1);
      else queue.shift();
    }
    if (paused) {
      paused = false;
      stdin.resume?.();
    }
    if (inputEnded) endOfInput();
  };

  // the answers of the requests just started are written first, so that a full stdout holds reading
  const resume = () => {
    writer.writeNow();
    frame();
  };

  const onData = (chunk: Uint8Array | string) => {
    const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
    if (bytes.length === 0) return;
    // copied when kept past this call: the stream may reuse its buffer
    if (held) {
      queue.push(bytes.slice());
      return;
    }
    queue.push(bytes);
    frame();
    if (queue.length > 0) queue[0] = queue[0]!.slice();
  };

  const maybeFinish = () => {
    if (!ended || inflight > 0 || finished) return;
    finished = true;
    writer.flush().then(() => {
      connection.close();
      restoreConsole();
      resolveClosed();
      onEnd();
    });
  };

  const onEndOfInput = () => {
    inputEnded = true;
    if (!held && queue.length === 0) endOfInput();
  };

  const endOfInput = () => {
    if (ended) return;
    if (!skipping && lineBytes > 0) {
      const line = concatBytes(pieces, lineBytes);
      pieces = [];
      lineBytes = 0;
      serveLine(line);
    }
    ended = true;
    // a subscription lasts as long as the client listens: end of input ends it with its result
    connection.endListens();
    maybeFinish();
  };

  stdin.on("data", onData);
  stdin.on("end", onEndOfInput);
  stdin.on("close", onEndOfInput);
  stdin.on("error", onEndOfInput);
  stdout.on?.("error", () => connection.close());
  stdin.resume?.();
  return { connection, closed };
}

/** Writes lines in order, waiting for `drain` when the stream says its buffer is full. */
class LineWriter {
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

function guardConsole(): () => void {
  const c = console as unknown as { [key: string]: (...args: unknown[]) => void };
  const saved = { log: c.log!, info: c.info!, debug: c.debug! };
  const toStderr = (...args: unknown[]) => console.error(...args);
  c.log = c.info = c.debug = toStderr;
  return () => {
    c.log = saved.log;
    c.info = saved.info;
    c.debug = saved.debug;
  };
}
