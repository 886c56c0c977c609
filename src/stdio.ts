/** `serveStdio`: newline-delimited JSON-RPC over a byte stream pair (stdin/stdout by default). */
import { Buffer, isUtf8 } from "node:buffer";
import type { Connection } from "./connection.js";
import type { HandleOptions } from "./dispatch/envelope.js";
import { ErrorCode } from "./errors.js";
import { encodeMessage, errorResponse, parseErrorResponse } from "./jsonrpc.js";
import type { McpServer } from "./server.js";
import { LineWriter, later, type StdioWritable } from "./stdio/line-writer.js";
import { isPromiseLike, type JsonRpcMessage } from "./types.js";

export type { StdioWritable };

/** The readable side: Node's `process.stdin` or any stream of byte chunks. */
export interface StdioReadable {
  on(event: "data", listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: "end" | "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  off?(event: string, listener: (...args: any[]) => void): unknown;
  pause?(): unknown;
  resume?(): unknown;
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
  /** Sends `console.log`/`info`/`debug` to stderr until the server on `process.stdout` ends (from picomcp/stdio's loading on: see docs/stdio.md); `false` gives them back to stdout now. Default: true. */
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
/** What every message of stdio is handled with: an observer (telemetry) learns it came through a pipe. */
const PIPE: HandleOptions = Object.freeze({ carrier: "pipe" });

/** A copy of `bytes[start, end)` (`Buffer#slice` would be a view). */
const copy = (bytes: Buffer, start: number, end: number): Buffer => Buffer.from(bytes.subarray(start, end));

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
  const restoreConsole = usesProcessStdout ? guardConsole(options.guardConsole !== false) : () => {};
  const onEnd = options.onEnd ?? (stdin === proc?.stdin ? () => proc?.exit(0) : () => {});

  const writer = new LineWriter(stdout);
  const connection = server.connect({
    send: (m) => writer.write(encodeMessage(m)),
    onClose: () => writer.close(),
  });
  let pieces: Buffer[] = [];
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

  /** Serves the line `bytes[start, end)`. */
  const serveLine = (bytes: Buffer, start: number, end: number) => {
    if (end > start && bytes[end - 1] === 0x0d) end--;
    // decoded without a view of the bytes; only a line showing U+FFFD may be invalid UTF-8
    // a byte order mark opening the line is dropped, as a UTF-8 decoder drops it
    if (end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf)
      start += 3;
    const text = bytes.toString("utf8", start, end);
    if (text.includes("\uFFFD") && !isUtf8(bytes.subarray(start, end))) {
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
      server.observer?.refused?.("batch_too_large", "pipe");
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
      out = server.handleNow(message, connection, PIPE);
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

  const tooLong = () => {
    server.observer?.refused?.("line_too_long", "pipe");
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
  };

  // Bytes read but not yet framed. Reading holds (stdin paused) while stdout has not drained, so a
  // client that does not read its answers cannot make the server queue them without bound.
  const queue: Buffer[] = [];
  /** Where the first chunk's unframed bytes start. */
  let at = 0;
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
      const nl = buf.indexOf(NEWLINE, at);
      const end = nl === -1 ? buf.length : nl;
      if (!skipping) {
        if (lineBytes + (end - at) > maxLine) {
          skipping = true;
          pieces = [];
          lineBytes = 0;
          tooLong();
        } else if (nl !== -1 && lineBytes === 0) {
          // the whole line in this chunk: served where it lies
          serveLine(buf, at, nl);
        } else if (end > at) {
          // copied: the stream may reuse its buffer
          pieces.push(nl === -1 ? copy(buf, at, end) : buf.subarray(at, end));
          lineBytes += end - at;
        }
      }
      if (nl === -1) {
        queue.shift();
        at = 0;
        continue;
      }
      if (!skipping && lineBytes > 0) {
        const line = Buffer.concat(pieces, lineBytes);
        pieces = [];
        lineBytes = 0;
        serveLine(line, 0, line.length);
      }
      skipping = false;
      at = nl + 1;
      if (at === buf.length) {
        queue.shift();
        at = 0;
      }
    }
    // the answers of every line this chunk held go out in one write now, not a turn of the loop later:
    // with one request in flight that turn was most of the server's time, and its tail (docs/performance.md)
    writer.writeNow();
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
    const bytes =
      typeof chunk === "string"
        ? Buffer.from(chunk, "utf8")
        : Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (bytes.length === 0) return;
    // copied when kept past this call: the stream may reuse its buffer
    if (held) {
      queue.push(copy(bytes, 0, bytes.length));
      return;
    }
    queue.push(bytes);
    frame();
    if (queue.length > 0) {
      queue[0] = copy(queue[0]!, at, queue[0]!.length);
      at = 0;
    }
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
      const line = Buffer.concat(pieces, lineBytes);
      pieces = [];
      lineBytes = 0;
      serveLine(line, 0, line.length);
    }
    ended = true;
    // a subscription lasts as long as the client listens: end of input ends it with its result
    server.endGracefully(connection);
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

/**
 * Console output meant for stdout (`log`, `info`, `debug`) goes to `console.error` while anything
 * holds the guard: from this module's loading (a program's "starting up" line, logged before it calls
 * serveStdio, would otherwise reach the client ahead of JSON-RPC) until the server serving on
 * `process.stdout` ends, or is started with `guardConsole: false`.
 */
let saved: { [method: string]: (...args: unknown[]) => void } | undefined;
let holders = 0;
let loadHold = false;

function holdConsole(): void {
  if (holders++ > 0) return;
  const c = console as unknown as { [method: string]: (...args: unknown[]) => void };
  saved = { log: c.log!, info: c.info!, debug: c.debug! };
  const toStderr = (...args: unknown[]) => console.error(...args);
  c.log = c.info = c.debug = toStderr;
}

function releaseConsole(): void {
  if (--holders > 0 || !saved) return;
  Object.assign(console, saved);
  saved = undefined;
}

/** Takes over the hold of this module's loading, or ends it (`keep` false); the release, if any. */
function guardConsole(keep: boolean): () => void {
  if (keep) holdConsole();
  if (loadHold) {
    loadHold = false;
    releaseConsole();
  }
  return keep ? releaseConsole : () => {};
}

if ((globalThis as { process?: { stdout?: unknown } }).process?.stdout) {
  holdConsole();
  loadHold = true;
}
