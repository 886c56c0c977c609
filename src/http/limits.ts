/**
 * The HTTP handler's governor: who a request's caller is (its principal; an anonymous one by the key
 * `limits.key` gives, else by its address, behind trusted proxies the client's), and what the handler
 * counts for it: sessions, GET streams, the bytes queued for SSE clients and the bodies of requests in flight.
 */
import type { AuthInfo, Connection } from "../connection.js";
import type { McpError } from "../errors.js";
import { Governor } from "../limits/governor.js";
import { anonymousKey, principalKey, setCallerKey } from "../limits/key.js";
import { AddressMemo, addressKey, checkedPrefix, isLocalAddress, ProxyTrust } from "./client-address.js";
import type { HttpHandlerOptions } from "./options.js";
import { CLIENT, header, normalPeer, ON_GONE, peerOf, whenGone } from "./request.js";

/** Bytes of a body too small to be counted on its own (see {@link BodyCount}). */
const SMALL_BODY = 1024;

/** What an SSE stream reports of its queue: a change in bytes; false when it may not grow by that much. */
export type QueueAccount = (delta: number, stalled: boolean) => boolean;

/** The handler's shares, with `maxSessions` and `maxSessionsPerPrincipal` as the session share. */
export class HttpGovernor {
  readonly governor: Governor;
  readonly #key: ((request: Request) => string | undefined) | undefined;
  readonly #prefix: number;
  readonly #trust: ProxyTrust | undefined;
  // the keys of the addresses asked for lately: a request asks several times, and so do a client's requests
  readonly #keys: AddressMemo<string | undefined>;
  // where the line about a proxy not trusted goes, until it has been said once
  #untrusted: ((line: string) => void) | undefined;

  constructor(o: HttpHandlerOptions) {
    const limits = o.limits ?? {};
    if (limits.key !== undefined && typeof limits.key !== "function")
      throw new TypeError("limits.key must be a function of the request");
    this.#key = limits.key;
    this.#prefix = checkedPrefix(limits.ipv6Prefix);
    this.#keys = new AddressMemo((address) => addressKey(address, this.#prefix));
    this.#trust = o.trustProxy === undefined ? undefined : new ProxyTrust(o.trustProxy);
    if (this.#trust === undefined) this.#untrusted = o.log ?? console.warn;
    const sessions = {
      perPrincipal: limits.sessions?.perPrincipal ?? o.maxSessionsPerPrincipal,
      total: limits.sessions?.total ?? o.maxSessions,
    };
    for (const [name, n] of [
      ["maxSessions", o.maxSessions],
      ["maxSessionsPerPrincipal", o.maxSessionsPerPrincipal],
    ] as const)
      if (n !== undefined && !(n > 0)) throw new RangeError(`${name} must be a positive number`);
    // a fractional cap of the options before the governor still means "at most this many"
    if (sessions.perPrincipal !== undefined)
      sessions.perPrincipal = Math.max(1, Math.floor(sessions.perPrincipal));
    if (sessions.total !== undefined) sessions.total = Math.max(1, Math.floor(sessions.total));
    this.governor = new Governor({ ...limits, sessions });
  }

  /**
   * The client's address: its peer's (the Node bridge's socket, `withPeer`), or, behind trusted
   * proxies, the one they name (kept on the request for telemetry); undefined when unknown.
   */
  address(request: Request): string | undefined {
    const trust = this.#trust;
    if (trust === undefined) {
      return normalPeer(request);
    }
    const r = request as { [CLIENT]?: string };
    if (r[CLIENT] !== undefined) return r[CLIENT];
    const client = trust.client(peerOf(request)?.address, header(request, trust.header));
    if (client !== undefined) Object.defineProperty(request, CLIENT, { value: client, configurable: true });
    return client;
  }

  /**
   * Says once, without `trustProxy`, that a loopback or private peer sends `X-Forwarded-For` or
   * `Forwarded`: a proxy in front, most likely, whose clients are then all one caller (its address).
   */
  #proxied(request: Request, peer: string): void {
    const name =
      header(request, "x-forwarded-for") !== null
        ? "X-Forwarded-For"
        : header(request, "forwarded") !== null
          ? "Forwarded"
          : undefined;
    if (name === undefined || !isLocalAddress(peer)) return;
    const log = this.#untrusted!;
    this.#untrusted = undefined;
    log(
      `picomcp/http: ${peer} sends ${name} but trustProxy is not set, so every client behind it is one caller (${peer}); if it is your proxy, set the trustProxy option of the HTTP handler (or of serve) to its hops or addresses`,
    );
  }

  /**
   * The key an anonymous request's caller is counted under: what `limits.key` gives, else its
   * address (an IPv6 one by its prefix); undefined with a principal, or when neither names it (or
   * the key function fails: its caller is then the one shared anonymous caller, never an error).
   */
  anonymous(request: Request, auth: AuthInfo | undefined): string | undefined {
    if (principalKey(auth) !== undefined) return undefined;
    if (this.#key !== undefined) {
      try {
        const key = this.#key(request);
        return typeof key === "string" ? key : undefined;
      } catch {
        return undefined;
      }
    }
    const address = this.address(request);
    return address === undefined ? undefined : this.#keys.get(address);
  }

  /** The key a request's caller is counted under (see `callerKey`). */
  caller(request: Request, auth: AuthInfo | undefined): string {
    const p = principalKey(auth);
    return p === undefined ? anonymousKey(this.anonymous(request, auth)) : `principal:${p}`;
  }

  /** Tells `connection` who its anonymous caller is, so that the server's own shares and rates count it too. */
  bind(connection: Connection, request: Request, auth: AuthInfo | undefined): Connection {
    const address = this.address(request);
    // once a request (a connection is bound once), not on every lookup of its caller
    if (this.#untrusted !== undefined && this.#trust === undefined && address !== undefined)
      this.#proxied(request, address);
    setCallerKey(connection, this.anonymous(request, auth), address);
    return connection;
  }

  /**
   * The count of one request's body for its caller: its bytes are counted as they come (or as its
   * `Content-Length` declares them, before any is read), so a body still arriving holds its share.
   */
  count(request: Request, auth: AuthInfo | undefined): BodyCount {
    return new BodyCount(this, request, auth);
  }

  /**
   * The account of one SSE stream's queue for `caller`: a stream may grow past its caller's share
   * never, and past the total only while it is not stalled (a client that reads keeps its stream,
   * whatever others leave unread).
   */
  queue(caller: string): QueueAccount {
    const g = this.governor;
    return (delta, stalled) => {
      if (delta <= 0) {
        g.give("sseBytes", caller, -delta);
        return true;
      }
      const refused = g.check("sseBytes", caller, delta);
      if (refused && (stalled || (refused.data as { scope: string }).scope === "principal")) return false;
      g.add("sseBytes", caller, delta);
      return true;
    };
  }
}

/**
 * The `requestBytes` one request's body holds, from its first byte (or its declared length) until
 * it is parsed (or its answer is out, or its client gone). A body under 1 KiB is not counted: what it holds is part of what a request in
 * flight costs (the server's `requests`), and most requests are that small.
 */
export class BodyCount {
  readonly #limits: HttpGovernor;
  /** The POST, and its credentials (frozen). */
  readonly request: Request;
  readonly auth: AuthInfo | undefined;
  #caller: string | undefined;
  #held = 0;

  constructor(limits: HttpGovernor, request: Request, auth: AuthInfo | undefined) {
    this.#limits = limits;
    this.request = request;
    this.auth = auth;
  }

  /** Counts the body as `bytes` long in all (declared, or arrived so far): the refusal when its caller may not hold that many. */
  grow(bytes: number): McpError | undefined {
    if (bytes <= this.#held || bytes < SMALL_BODY) return undefined;
    // the caller is named only for a body that counts: a small request asks no `limits.key`
    this.#caller ??= this.#limits.caller(this.request, this.auth);
    const g = this.#limits.governor;
    const refused = g.check("requestBytes", this.#caller, bytes - this.#held);
    if (refused) return refused;
    g.add("requestBytes", this.#caller, bytes - this.#held);
    // a client that leaves gives its bytes back then: told for free by a bridge's request; a web stream's read fails by itself, and an abort listener a
    // body would cost the hot path
    if (this.#held === 0 && ON_GONE in this.request) whenGone(this.request, () => this.end());
    this.#held = bytes;
    return undefined;
  }

  /** Gives the bytes back (once the body is parsed, its answer is out, or its client gone); once. */
  end(): void {
    if (this.#held === 0) return;
    this.#limits.governor.give("requestBytes", this.#caller!, this.#held);
    this.#held = 0;
  }
}
