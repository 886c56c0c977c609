/** One client's connection to the server: a stdio process, an HTTP session, an in-memory pair. */

import type { Features, ProtocolVersion } from "./eras/versions.js";
import { DEFAULT_FEATURES } from "./eras/versions.js";
import { ErrorCode } from "./errors.js";
import { ofKind } from "./request/slot.js";
import type {
  ClientCapabilities,
  Implementation,
  JsonRpcMessage,
  JsonRpcResponse,
  LoggingLevel,
  RequestId,
  ServerCapabilities,
} from "./types.js";

export { type Principal, principalFrom, principalOf } from "./types.js";

/** Verified credentials of the caller, frozen before a handler sees them; see `principalFrom` for whose. */
export interface AuthInfo {
  /** The access token (never logged by picomcp). */
  token?: string;
  /** The user the token stands for (a JWT's `sub`); the principal when present. */
  subject?: string;
  /** The client the token was issued to; the principal when there is no `subject`. */
  clientId?: string;
  /** The token's issuer (a JWT's `iss`): part of the principal, so two issuers' `alice`s stay two. Default: none. */
  issuer?: string;
  /** Granted scopes. */
  scopes?: string[];
  /** The token's claims or any extra data the verifier attaches. */
  extra?: { [key: string]: unknown };
  [key: string]: unknown;
}

/**
 * A piece of per-session state that an extension owns (see `sessionSlot`): each connection holds its
 * own value, made by `init` on first use and handed to `close` when the connection closes.
 */
export interface SessionSlot<T> {
  /** A session slot, never a request slot (`ctx.sessionState` takes only this kind). */
  readonly kind: "session";
  /** For error messages and debugging. */
  readonly name: string;
  init(): T;
  close?(value: T): void;
}

/**
 * Declares a per-session slot: `ctx.sessionState(slot)` gives this session's value (a 2026-07-28
 * request, which has no session, gets a value of its own).
 * @example const seen = sessionSlot("deprecation-warned", () => new Set<string>());
 */
export function sessionSlot<T>(name: string, init: () => T, close?: (value: T) => void): SessionSlot<T> {
  return Object.freeze(close ? { kind: "session", name, init, close } : { kind: "session", name, init });
}

/** What a connection of one revision is told: the capabilities and the ids of the extensions served. */
export interface Declared {
  readonly capabilities: ServerCapabilities;
  readonly extensions: ReadonlySet<string>;
}

/** The client behind a request, whichever revision it speaks. */
export interface ClientView {
  /** The protocol revision of this request. */
  readonly protocolVersion: ProtocolVersion;
  /** What the client declared it can do. */
  readonly capabilities: ClientCapabilities;
  /** The client's name and version, when it gave them. */
  readonly info: Implementation | undefined;
}

/** What a transport gives the server when it opens a connection. */
export interface ConnectionOptions {
  /** Delivers a server-initiated message (notification or request) to the client. */
  send(message: JsonRpcMessage): void | Promise<void>;
  /** Called once when the server side closes the connection. */
  onClose?: () => void;
  /** A stable identifier, e.g. the HTTP session id. Default: a random UUID. */
  id?: string;
  /** Credentials of the caller, exposed to handlers as `ctx.auth`. */
  auth?: AuthInfo;
  /**
   * Opens the connection already initialized, as if the client had sent `initialize` with these
   * (stateless HTTP, where every request stands alone). Default: the client must send `initialize`.
   */
  initialized?: { protocolVersion: string; capabilities?: ClientCapabilities; clientInfo?: Implementation };
  /** With `initialized`: a session another instance initialized (a session, not one stateless request). Default: false. */
  resumed?: boolean;
}

/** Options of one request that the server sends to the client. */
export interface OutboundOptions {
  /** Where to send it (the originating request's stream); default: the connection's `send`. */
  send?: (message: JsonRpcMessage) => void | Promise<void>;
  /** Aborts the wait (and tells the client with `notifications/cancelled`). */
  signal?: AbortSignal;
  /** Milliseconds to wait for the answer. */
  timeoutMs: number;
}

/** The client answered a request of the server with an error. */
export class ClientRequestError extends Error {
  /** The client's error code. */
  readonly code: number;
  /** The client's error data. */
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "ClientRequestError";
    this.code = code;
    this.data = data;
  }
}

/** The client did not answer a request of the server in time (a local error, never a peer's). */
export class RequestTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RequestTimeoutError";
  }
}

interface Pending {
  resolve(result: { [key: string]: unknown }): void;
  reject(error: Error): void;
}

type State = "new" | "ready" | "closed";

/** What a connection knows of its client before the handshake. */
const NO_CLIENT: ClientView = Object.freeze({
  protocolVersion: DEFAULT_FEATURES.version,
  capabilities: Object.freeze({}),
  info: undefined,
});
const NOTHING_DECLARED: Declared = Object.freeze({
  capabilities: Object.freeze({}),
  extensions: new Set<string>(),
});

/**
 * The state of one connection: the negotiated revision and client, in-flight requests, the log
 * level, the session slots of extensions, and requests the server sent and awaits. Transports
 * create it with `server.connect(...)` and feed it messages with `server.handle(message, connection)`.
 */
export class Connection {
  /** Credentials of the peer that opened the connection, if verified; never changed (each request has its own `ctx.auth`). */
  readonly auth: AuthInfo | undefined;
  /** @internal — opened initialized: one stateless request, no session */ readonly sessionless: boolean;
  /** @internal */ state: State = "new";
  /** @internal */ features: Features = DEFAULT_FEATURES;
  /** @internal — the client as the handshake described it; shared by every request of the connection. */
  client: ClientView = NO_CLIENT;
  /** @internal */ logLevel: LoggingLevel | undefined;
  /** @internal — what the server declared to this client at initialize (nothing before). */
  declared: Declared = NOTHING_DECLARED;
  /** @internal — requests being handled, by id; `abort` cancels one. */
  readonly inflight = new InflightRequests();
  /** @internal — what its transport told of its caller: the key an anonymous one counts under, its address (limits/key.ts). */
  callerKey: string | undefined;
  /** @internal */ callerAddress: string | undefined;
  readonly #options: ConnectionOptions;
  readonly #onClosed: (c: Connection) => void;
  // made when first needed: a stateless HTTP request's connection lives for one request and most
  // never use them
  #id: string | undefined;
  #slots: Map<SessionSlot<unknown>, unknown> | undefined;
  #pending: Map<RequestId, Pending> | undefined;

  /** @internal — use `server.connect(...)`. */
  constructor(options: ConnectionOptions, onClosed: (c: Connection) => void) {
    this.#options = options;
    this.#onClosed = onClosed;
    this.#id = options.id;
    this.auth = options.auth;
    this.sessionless = options.initialized !== undefined && options.resumed !== true;
  }

  /** The connection's identifier (the HTTP session id, say); a random UUID unless the transport gave one. */
  get id(): string {
    this.#id ??= crypto.randomUUID();
    return this.#id;
  }

  /** This connection's value of `slot`, made on first use. */
  slot<T>(slot: SessionSlot<T>): T {
    this.#slots ??= new Map();
    if (this.#slots.has(ofKind(slot, "session"))) return this.#slots.get(slot) as T;
    const value = slot.init();
    this.#slots.set(slot, value);
    return value;
  }

  /** This connection's value of `slot`, or undefined when it was never made (nothing is made). */
  peek<T>(slot: SessionSlot<T>): T | undefined {
    return this.#slots?.get(slot) as T | undefined;
  }

  /** @internal — the capabilities declared to this client at initialize. */
  get serverCapabilities(): ServerCapabilities {
    return this.declared.capabilities;
  }

  /** The negotiated protocol revision, once `initialize` succeeded. */
  get protocolVersion(): ProtocolVersion | undefined {
    return this.state === "new" ? undefined : this.features.version;
  }

  /** Whether the connection has been closed. */
  get closed(): boolean {
    return this.state === "closed";
  }

  /** Sends a server-initiated message; errors of the transport are swallowed (the peer is gone). */
  send(message: JsonRpcMessage): void {
    if (this.state === "closed") return;
    try {
      const p = this.#options.send(message);
      if (p && typeof p.catch === "function") p.catch(() => {});
    } catch {
      // a transport that cannot deliver has lost its peer; the close path cleans up
    }
  }

  /** Sends a request to the client and resolves with its result. */
  request(
    method: string,
    params: { [key: string]: unknown },
    options: OutboundOptions,
  ): Promise<{ [key: string]: unknown }> {
    if (this.state === "closed") return Promise.reject(new Error("The connection is closed"));
    const signal = options.signal;
    // never sent, so nothing to cancel on the client's side
    if (signal?.aborted)
      return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error("Cancelled"));
    // unguessable: only the peer that received the request can answer it
    const id = crypto.randomUUID();
    const send = options.send ?? ((m: JsonRpcMessage) => this.send(m));
    this.#pending ??= new Map();
    const pending = this.#pending;
    return new Promise((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        pending.delete(id);
      };
      const cancel = (reason: string) => {
        send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } });
      };
      const onAbort = () => {
        finish();
        cancel("The request that asked was cancelled");
        reject(signal?.reason instanceof Error ? signal.reason : new Error("Cancelled"));
      };
      const timer = setTimeout(() => {
        finish();
        cancel(`Timed out after ${options.timeoutMs} ms`);
        reject(new RequestTimeoutError(`The client did not answer ${method} within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      pending.set(id, {
        resolve: (r) => {
          finish();
          resolve(r);
        },
        reject: (e) => {
          finish();
          reject(e);
        },
      });
      try {
        const p = send({ jsonrpc: "2.0", id, method, params });
        if (p && typeof p.catch === "function") p.catch((e: unknown) => pending.get(id)?.reject(toError(e)));
      } catch (e) {
        pending.get(id)?.reject(toError(e));
      }
    });
  }

  /** @internal — routes a client's answer to the request the server sent; unknown ids are ignored. */
  settle(response: JsonRpcResponse): void {
    if (response.id == null) return;
    const pending = this.#pending?.get(response.id);
    if (!pending) return;
    if ("error" in response) {
      const e = response.error;
      const valid = e && typeof e === "object" && typeof e.code === "number";
      pending.reject(
        valid
          ? new ClientRequestError(e.code, String(e.message ?? "Error"), e.data)
          : new ClientRequestError(ErrorCode.InternalError, "The client answered with a malformed error"),
      );
    } else if (
      typeof response.result === "object" &&
      response.result !== null &&
      !Array.isArray(response.result)
    ) {
      pending.resolve(response.result);
    } else {
      pending.reject(
        new ClientRequestError(ErrorCode.InternalError, "The client answered with a malformed result"),
      );
    }
  }

  /** Closes the connection: aborts in-flight requests, fails pending outbound requests, closes its slots. */
  close(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.inflight.abortAll(() => new Error("The connection is closed"));
    if (this.#pending)
      for (const pending of [...this.#pending.values()])
        pending.reject(new Error("The connection is closed"));
    this.callerKey = this.callerAddress = undefined;
    if (this.#slots) {
      const slots = this.#slots;
      this.#slots = undefined;
      for (const [slot, value] of slots) {
        try {
          slot.close?.(value);
        } catch {
          // one extension's cleanup must not stop the others'
        }
      }
    }
    this.#onClosed(this);
    this.#options.onClose?.();
  }
}

/** A request being handled: `abort` cancels it. */
interface Abortable {
  abort(reason: unknown): void;
}

const KEEP = Symbol("kept");
const NOTHING: Abortable = { abort() {} };

/**
 * @internal — the requests being handled, by id. The Map keeps one entry of its own: V8 shrinks an
 * emptied Map on each delete, reallocating its table in the old generation (the table of a long-lived
 * Map lives there), which under steady one-at-a-time traffic was most of the server's old-generation
 * garbage.
 */
export class InflightRequests {
  // made on the first request that runs past its synchronous part: most connections of stateless
  // HTTP never have one
  #map: Map<RequestId | typeof KEEP, Abortable> | undefined;

  get(id: RequestId): Abortable | undefined {
    return this.#map?.get(id);
  }
  has(id: RequestId): boolean {
    return this.#map?.has(id) === true;
  }
  set(id: RequestId, request: Abortable): void {
    if (!this.#map) {
      this.#map = new Map();
      this.#map.set(KEEP, NOTHING);
    }
    this.#map.set(id, request);
  }
  delete(id: RequestId): void {
    this.#map?.delete(id);
  }
  /** Aborts every request with `reason`; each forgets itself when its handler is done. */
  abortEach(reason: unknown): void {
    if (!this.#map || this.#map.size === 1) return;
    for (const request of [...this.#map.values()]) if (request !== NOTHING) request.abort(reason);
  }
  /** Aborts every request, each with its own `reason()`, and forgets them. */
  abortAll(reason: () => unknown): void {
    if (!this.#map || this.#map.size === 1) return;
    for (const request of this.#map.values()) if (request !== NOTHING) request.abort(reason());
    this.#map.clear();
    this.#map.set(KEEP, NOTHING);
  }
}

function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
