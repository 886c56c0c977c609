/** The lazy `Request` the `node:http` bridge hands the web handler, and the request body as a web stream. */
import type { IncomingMessage } from "node:http";
import type { Awaitable } from "../types.js";
import {
  type BodyMeter,
  type BodyResult,
  HEADER,
  ON_GONE,
  PEER,
  PEER_ADDRESS,
  type Peer,
  READ_BODY,
} from "./request.js";

/** Bytes of an unread body read and dropped to keep its connection alive; past it, the connection closes. */
export const DRAIN_BYTES = 1024 * 1024;

/** Whether a raw header name is `name` (in lower case), ignoring case, as `Headers` compares them. */
function sameName(key: string, name: string): boolean {
  if (key.length !== name.length) return false;
  if (key === name) return true;
  for (let i = 0; i < key.length; i++) {
    let c = key.charCodeAt(i);
    if (c >= 0x80) return key.toLowerCase() === name;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== name.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The first value of a header (`name` in lower case), as `req.headers` has it for the headers whose
 * repeats it drops (Host, Content-Length, …), without making `req.headers`.
 */
export function firstHeader(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!;
    if (sameName(key, name)) return raw[i + 1];
  }
  return undefined;
}

/** What a {@link lazyRequest} made so far: each web object only once something asks for it. */
export interface LazyState {
  readonly req: IncomingMessage;
  /** The URL, once made: `target` (the endpoint's path, already in its normal form) on the request's host. */
  url: string | undefined;
  readonly target: string;
  host: string | undefined;
  readonly method: string;
  headers: Headers | undefined;
  aborter: AbortController | undefined;
  closed: boolean;
  /** Who hears that the client went away without a signal (ON_GONE). */
  gone: (() => void) | undefined;
  body: ReturnType<typeof requestBody> | undefined;
  /** The body was read by READ_BODY; true when it stopped reading at the limit. */
  read: { abandoned: boolean } | undefined;
  real: Request | undefined;
}

const STATE = Symbol("state");

const append = Headers.prototype.append;

/** A request's headers as a full `Request` has them: read-only, so a change throws instead of being lost. */
class RequestHeaders extends Headers {
  override append(): never {
    throw new TypeError("immutable");
  }
  override set(): never {
    throw new TypeError("immutable");
  }
  override delete(): never {
    throw new TypeError("immutable");
  }
}
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Whether a character code is HTTP whitespace (tab, LF, CR, space). */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** A header value as `Headers` keeps it: without leading or trailing HTTP whitespace. */
function normalize(v: string): string {
  if (v.length === 0 || (!isSpace(v.charCodeAt(0)) && !isSpace(v.charCodeAt(v.length - 1)))) return v;
  let start = 0;
  let end = v.length;
  while (start < end && isSpace(v.charCodeAt(start))) start++;
  while (end > start && isSpace(v.charCodeAt(end - 1))) end--;
  return v.slice(start, end);
}

/**
 * The address of the peer a request of the Node bridge came from (undefined for a request the bridge
 * did not make). The handler already counts anonymous callers by it (an IPv6 one by its /64); as
 * `limits.key` it counts each address whole. Behind a proxy it is the proxy's: see `trustProxy`.
 * @example await serve(server, { port: 3000, limits: { key: remoteAddress } });
 */
export function remoteAddress(request: Request): string | undefined {
  return (request as unknown as { [STATE]?: LazyState })[STATE]?.req.socket?.remoteAddress;
}

/**
 * A `Request` (it is `instanceof Request`) built lazily from a `node:http` request: method, URL,
 * headers, signal and body are made when first read, the body can be read without a web stream
 * (READ_BODY), and anything else makes the full `Request` and asks it. Building every web object
 * up front costs more than the whole MCP exchange.
 */
export class NodeRequest {
  readonly [STATE]: LazyState;

  constructor(state: LazyState) {
    this[STATE] = state;
  }

  get method(): string {
    return this[STATE].method;
  }

  [PEER_ADDRESS](): string | undefined {
    return this[STATE].req.socket?.remoteAddress;
  }

  [PEER](): Peer {
    const req = this[STATE].req;
    return { address: req.socket?.remoteAddress, port: req.socket?.remotePort, httpVersion: req.httpVersion };
  }

  get url(): string {
    const s = this[STATE];
    s.url ??= new URL(s.target, `http://${s.host ?? "localhost"}`).href;
    return s.url;
  }

  get headers(): Headers {
    const s = this[STATE];
    if (!s.headers) {
      const headers = new RequestHeaders();
      const raw = s.req.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) append.call(headers, raw[i]!, raw[i + 1]!);
      s.headers = headers;
    }
    return s.headers;
  }

  /** `headers.get(name)` for a lower-case name, read from the raw headers: no `Headers` is made for it. */
  [HEADER](name: string): string | null {
    const s = this[STATE];
    if (s.headers) return s.headers.get(name);
    const raw = s.req.rawHeaders;
    let value: string | null = null;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const key = raw[i]!;
      if (!sameName(key, name)) continue;
      const v = normalize(raw[i + 1]!);
      value = value === null ? v : `${value}, ${v}`;
    }
    return value;
  }

  /** Calls `listener` once when the client goes away before the answer is out; true when it is gone already. */
  [ON_GONE](listener: () => void): boolean {
    const s = this[STATE];
    if (s.closed) return true;
    const before = s.gone;
    s.gone = before
      ? () => {
          before();
          listener();
        }
      : listener;
    return false;
  }

  get signal(): AbortSignal {
    const s = this[STATE];
    if (!s.aborter) {
      s.aborter = new AbortController();
      if (s.closed) s.aborter.abort();
    }
    return s.aborter.signal;
  }

  get body(): ReadableStream<Uint8Array> | null {
    const s = this[STATE];
    if (s.method === "GET" || s.method === "HEAD") return null;
    // the full Request owns the stream from the start: once a reader locks it, a Request could no
    // longer be made from it (bodyUsed, clone() and the rest would throw), and clone() replaces it
    return real(this).body;
  }

  /** `length`: the declared `Content-Length` as {@link readBody} read it (NaN: none). */
  [READ_BODY](max: number, meter?: BodyMeter, length = Number.NaN): Awaitable<BodyResult> | undefined {
    const s = this[STATE];
    if (s.body || s.read || s.real || s.method === "GET" || s.method === "HEAD") return undefined;
    const read = { abandoned: false };
    s.read = read;
    const req = s.req;
    // the whole body is there already (it came with its headers, and the bridge began once they were
    // parsed): read at once, without a listener or a promise
    const whole = wholeBody(s, length);
    if (whole !== undefined) return decoded(whole);
    return new Promise<BodyResult>((resolve, reject) => {
      let first: Buffer | undefined;
      let chunks: Buffer[] | undefined;
      let total = 0;
      const stop = () => {
        req.off("data", onData);
        req.off("end", onEnd);
        req.off("error", onError);
        req.socket?.off("close", onClose);
      };
      // as a cancelled stream does: stop reading, and close after answering
      const abandon = (result: BodyResult) => {
        stop();
        read.abandoned = true;
        req.pause();
        resolve(result);
      };
      const onData = (chunk: Buffer) => {
        total += chunk.length;
        if (total > max) return abandon({ ok: false, reason: "too-large" });
        // a chunked body, or one longer than it said: counted as it arrives, before it is kept
        const refused = meter?.grow(total);
        if (refused) return abandon({ ok: false, reason: "limit", error: refused });
        if (first === undefined) first = chunk;
        else if (chunks === undefined) chunks = [first, chunk];
        else chunks.push(chunk);
      };
      const onEnd = () => {
        // the request's listeners stay: no more data comes, and they go with the request
        req.socket?.off("close", onClose);
        resolve(decoded(chunks ? Buffer.concat(chunks, total) : (first ?? EMPTY)));
      };
      const onError = (error: Error) => {
        stop();
        reject(error);
      };
      // a connection that closes before the body ended ends the read: after a 408 the request itself
      // is told nothing (its answer is out), only its socket closes
      const onClose = () => onError(new Error("the connection closed before the body ended"));
      // a client gone before the read began (an awaited hook ran first) tells no listener again
      if (s.closed || req.destroyed || req.socket?.destroyed) return onClose();
      req.on("data", onData);
      req.on("end", onEnd);
      req.on("error", onError);
      req.socket?.on("close", onClose);
    });
  }
}

const EMPTY = Buffer.alloc(0);

/** A body's bytes as text: UTF-8, or refused. */
function decoded(bytes: Buffer): BodyResult {
  try {
    return { ok: true, text: utf8.decode(bytes) };
  } catch {
    return { ok: false, reason: "not-utf8" };
  }
}

/**
 * The whole body of a request when every byte its `Content-Length` (`length`) declares has arrived and
 * nobody has read any (a body that came with its headers), taken at once; else undefined.
 */
function wholeBody(s: LazyState, length: number): Buffer | undefined {
  const req = s.req;
  if (s.closed || req.readableDidRead || firstHeader(req, "transfer-encoding") !== undefined)
    return undefined;
  if (length === 0) return EMPTY;
  if (!(length > 0) || req.readableLength !== length) return undefined;
  return (req.read() as Buffer | null) ?? undefined;
}

/** The full `Request`, made once, from what the lazy one made so far. */
function real(request: NodeRequest): Request {
  const s = request[STATE];
  if (!s.real) {
    const init: RequestInit & { duplex?: "half" } = {
      method: s.method,
      headers: request.headers,
      signal: request.signal,
    };
    if (s.method !== "GET" && s.method !== "HEAD") {
      // a body READ_BODY consumed is a used one, as for a full Request: bodyUsed, reads refused
      if (s.read) init.body = new ReadableStream({ start: (c) => c.close() });
      else {
        s.body ??= requestBody(s.req);
        init.body = s.body.stream;
      }
      init.duplex = "half";
    }
    s.real = new Request(request.url, init);
    if (s.read) void s.real.body?.getReader().read();
  }
  return s.real;
}

// every other member of Request asks the full request
for (const key of Object.getOwnPropertyNames(Request.prototype)) {
  if (key === "constructor" || Object.hasOwn(NodeRequest.prototype, key)) continue;
  const full = (r: NodeRequest) => real(r) as unknown as { [k: string]: (...a: unknown[]) => unknown };
  Object.defineProperty(
    NodeRequest.prototype,
    key,
    typeof Object.getOwnPropertyDescriptor(Request.prototype, key)!.value === "function"
      ? {
          value: function (this: NodeRequest, ...args: unknown[]) {
            return full(this)[key]!(...args);
          },
        }
      : {
          get: function (this: NodeRequest) {
            return full(this)[key];
          },
        },
  );
}
Object.setPrototypeOf(NodeRequest.prototype, Request.prototype);

/** The request body as a web stream that pauses the socket while nobody reads it. */
export function requestBody(req: IncomingMessage): {
  stream: ReadableStream<Uint8Array>;
  abandoned(): boolean;
  discard(): void;
} {
  let abandoned = false;
  let dropped = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // a client gone before the read began tells no listener again
        if (req.destroyed || req.socket?.destroyed) {
          controller.error(new Error("the connection closed before the body ended"));
          return;
        }
        req.on("data", (chunk: Buffer) => {
          if (abandoned) {
            dropped += chunk.byteLength;
            // a body that lied about its length: the connection is not worth keeping
            if (dropped > DRAIN_BYTES) req.destroy();
            return;
          }
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) req.pause();
        });
        const closed = () =>
          !abandoned && controller.error(new Error("the connection closed before the body ended"));
        req.on("end", () => {
          req.socket?.off("close", closed);
          if (!abandoned) controller.close();
        });
        req.on("error", (e) => !abandoned && controller.error(e));
        // after a 408 only the socket is told (see READ_BODY)
        req.socket?.once("close", closed);
      },
      pull() {
        req.resume();
      },
      cancel() {
        // the handler stopped reading (the body is too large): stop too, and close after answering
        abandoned = true;
        req.pause();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
  const discard = () => {
    abandoned = true;
    req.resume();
  };
  return { stream, abandoned: () => abandoned, discard };
}
