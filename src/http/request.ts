/**
 * Reading a Streamable HTTP request: its headers and its body, and whether its client is still there,
 * each asked of the request itself when it can answer for less (the `node:http` bridge's lazy one).
 */
import { concatBytes } from "../bytes.js";
import type { McpError } from "../errors.js";
import type { Awaitable } from "../types.js";
import { AddressMemo, normalAddress } from "./client-address.js";

/** The method by which a request object can look up a header without making its `Headers` (see {@link header}). */
export const HEADER: unique symbol = Symbol.for("picomcp.header");
/** The method by which a request object can tell that its client went away without an `AbortSignal` (see {@link whenGone}). */
export const ON_GONE: unique symbol = Symbol.for("picomcp.onGone");

interface BridgedRequest {
  [HEADER]?: (name: string) => string | null;
  [ON_GONE]?: (listener: () => void) => boolean;
}

/** `request.headers.get(name)` (`name` in lower case), asked of the request itself when it can answer it for less. */
export function header(request: Request, name: string): string | null {
  const own = (request as BridgedRequest)[HEADER];
  return own === undefined ? request.headers.get(name) : own.call(request, name);
}

/**
 * Calls `listener` once when the client goes away before its answer is out (`request.signal`
 * aborts), asked of the request itself when it can do it without a signal. True when it is gone
 * already (the listener is then not called).
 */
export function whenGone(request: Request, listener: () => void): boolean {
  const own = (request as BridgedRequest)[ON_GONE];
  if (own !== undefined) return own.call(request, listener);
  const signal = request.signal;
  if (signal.aborted) return true;
  signal.addEventListener("abort", listener, { once: true });
  return false;
}

/** The method by which a bridge's request tells who sent it, and over which HTTP version (see {@link peerOf}). */
export const PEER: unique symbol = Symbol.for("picomcp.peer");

/** Who sent a request and how, as its bridge knows it (the `node:http` one does; a plain `Request` tells none). */
export interface Peer {
  readonly address: string | undefined;
  readonly port: number | undefined;
  readonly httpVersion: string | undefined;
}

/** The peer of `request`, when its bridge knows it (for telemetry: `client.address`, `network.protocol.version`). */
export function peerOf(request: Request): Peer | undefined {
  return (request as { [PEER]?: () => Peer })[PEER]?.call(request);
}

/**
 * Tells picomcp's HTTP handler which address a request came from, on a runtime that gives it beside
 * the request: Bun's `server.requestIP(request)`, Deno's `info.remoteAddr`, Workers' `CF-Connecting-IP`
 * header. Anonymous callers are then told apart by address (as `picomcp/node` does by itself), and
 * telemetry records it. Returns the request.
 * @example Bun.serve({ fetch: (r, s) => handle(withPeer(r, s.requestIP(r)?.address)) });
 */
export function withPeer(
  request: Request,
  peer: string | { address: string; port?: number } | null | undefined,
): Request {
  if (peer === null || peer === undefined) return request;
  const p: Peer =
    typeof peer === "string"
      ? { address: peer, port: undefined, httpVersion: undefined }
      : { address: peer.address, port: peer.port, httpVersion: undefined };
  Object.defineProperty(request, PEER, { value: () => p, configurable: true });
  return request;
}

/** Where the HTTP handler keeps the client it resolved behind trusted proxies (see {@link clientOf}). */
export const CLIENT: unique symbol = Symbol.for("picomcp.client");

/**
 * The client of a request: the address trusted proxies named (the handler's `trustProxy`), else its
 * peer's address and port; undefined when neither is known.
 */
export function clientOf(request: Request): { address: string; port: number | undefined } | undefined {
  const resolved = (request as { [CLIENT]?: string })[CLIENT];
  if (resolved !== undefined) return { address: resolved, port: undefined };
  const peer = peerOf(request);
  return peer?.address === undefined ? undefined : { address: normalPeer(request)!, port: peer.port };
}

/** The method by which a bridge's request tells its peer's address alone, without a {@link Peer} made for it. */
export const PEER_ADDRESS: unique symbol = Symbol.for("picomcp.peerAddress");

/** The address of `request`'s peer as its bridge knows it, undefined when unknown. */
function peerAddress(request: Request): string | undefined {
  const own = (request as { [PEER_ADDRESS]?: () => string | undefined })[PEER_ADDRESS];
  return own === undefined ? peerOf(request)?.address : own.call(request);
}

// addresses in their normal form: a connection's requests ask for the same one
const normals = new AddressMemo((address) => normalAddress(address) ?? address);

/** The address of `request`'s peer in its normal form (`::ffff:192.0.2.1` is `192.0.2.1`); undefined when unknown. */
export function normalPeer(request: Request): string | undefined {
  const address = peerAddress(request);
  return address === undefined ? undefined : normals.get(address);
}

/** The method by which a request object can read its own body for {@link readBody}, with the same rules. */
export const READ_BODY: unique symbol = Symbol.for("picomcp.readBody");

/** What counts a body's bytes as they come: the refusal when the body may not be `bytes` long in all. */
export interface BodyMeter {
  grow(bytes: number): McpError | undefined;
}

/** What {@link readBody} found: the text, or why not (`limit`: its caller may not hold that many bytes now). */
export type BodyResult =
  | { ok: true; text: string }
  | { ok: false; reason: "too-large" | "not-utf8" }
  | { ok: false; reason: "limit"; error: McpError };

/** A body refused unread, or no longer read: the client is told so and its connection closes (see http/node.ts). */
function refuse(request: Request, result: BodyResult): BodyResult {
  request.body?.cancel().catch(() => {});
  return result;
}

/**
 * Reads a body as UTF-8 text, at most `max` bytes, counted by `meter` from its first byte: a larger
 * declared `Content-Length` is refused unread, a declared one the meter refuses too, and a streamed
 * body stops being read (and is cancelled) as soon as it passes the limit or the meter refuses it.
 * A body that is there already (the `node:http` bridge's, come with its headers) is read at once.
 */
export function readBody(request: Request, max: number, meter?: BodyMeter): Awaitable<BodyResult> {
  try {
    const declared = header(request, "content-length");
    const length = declared === null ? Number.NaN : Number(declared);
    if (length > max) return refuse(request, { ok: false, reason: "too-large" });
    // the declared length is counted before a byte of it is buffered (it is the most that can come)
    const refused = length > 0 ? meter?.grow(length) : undefined;
    if (refused) return refuse(request, { ok: false, reason: "limit", error: refused });
    // a bridge's request may read its body the same way without a web stream (see http/node.ts)
    const read = (
      request as {
        [READ_BODY]?: (max: number, meter?: BodyMeter, length?: number) => Awaitable<BodyResult> | undefined;
      }
    )[READ_BODY];
    return read?.call(request, max, meter, length) ?? readStream(request, max, meter);
  } catch (error) {
    return Promise.reject(error);
  }
}

async function readStream(request: Request, max: number, meter: BodyMeter | undefined): Promise<BodyResult> {
  if (!request.body) return { ok: true, text: "" };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      reader.cancel().catch(() => {});
      return { ok: false, reason: "too-large" };
    }
    // a body without a length (chunked), or longer than it said: counted as it arrives
    const refused = meter?.grow(total);
    if (refused) {
      reader.cancel().catch(() => {});
      return { ok: false, reason: "limit", error: refused };
    }
    chunks.push(value);
  }
  const bytes = chunks.length === 1 ? chunks[0]! : concatBytes(chunks, total);
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, reason: "not-utf8" };
  }
}
