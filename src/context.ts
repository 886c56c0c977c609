/** The per-request context: the second argument of every `read`, `run`, `get` and `complete`. */
import type { AuthInfo, ClientView, Connection, SessionSlot } from "./connection.js";
import { type InputRequest, refuse, type TaskHandle } from "./eras/input.js";
import type { StatelessRequest } from "./eras/stateless.js";
import { type CacheHint, type CacheOptions, hintOf, LOG_LEVELS } from "./eras/stateless.js";
import type { Features } from "./eras/versions.js";
import type { Governor } from "./limits/governor.js";
import { callerAddress, callerKey } from "./limits/key.js";
import {
  type AskChannel,
  type ClientRequestOptions,
  elicit,
  fromRound,
  roots,
  sample,
  withMeta,
} from "./request/ask.js";
import { ofKind, type RequestSlot } from "./request/slot.js";
import {
  type ClientCapabilities,
  type ElicitFormParams,
  type ElicitResult,
  type ElicitUrlParams,
  isObject,
  type JsonRpcMessage,
  type LoggingLevel,
  type Meta,
  type Params,
  type RequestId,
  type Root,
  type SampleParams,
  type SampleResult,
} from "./types.js";

export type {
  ElicitFormParams,
  ElicitResult,
  ElicitUrlParams,
  Root,
  SampleParams,
  SampleResult,
  SamplingMessage,
} from "./types.js";
export type { ClientRequestOptions, ClientView, StatelessRequest, TaskHandle };

/** The context every handler receives second. */
export interface Context {
  /** Aborted when the client cancels the request or the connection closes. */
  readonly signal: AbortSignal;
  /** The JSON-RPC id of the request. */
  readonly requestId: RequestId;
  /** The client and its negotiated revision. */
  readonly client: ClientView;
  /** The request's `_meta`. */
  readonly meta: Meta | undefined;
  /** This request's verified credentials (frozen), over a transport with authorization. */
  readonly auth: AuthInfo | undefined;
  /** The connection's id (the HTTP session id, say). */
  readonly sessionId: string;
  /**
   * Whether the request belongs to a session that outlives it (an initialize-era session); false
   * for a 2026-07-28 request and for one served without sessions (stateless HTTP).
   */
  readonly hasSession: boolean;
  /**
   * Who is calling, as the server's limits count callers: `principal:<p>` with verified
   * credentials, `anonymous:<key>` for an anonymous caller its transport named (its address), else
   * `anonymous`. A key to keep per-caller state or shares under.
   */
  readonly caller: string;
  /**
   * The client's address, as HTTP knows it: its peer (`picomcp/node`, `withPeer`), or the client that
   * trusted proxies name (`trustProxy`); for a 2025 session, the address that opened it. Else undefined.
   */
  readonly clientAddress: string | undefined;
  /** What the request's revision carries (`stateless`, `elicitation`, …): decide by these, never by the version string. */
  readonly features: Features;
  /**
   * This session's value of an extension's `slot` (see `sessionSlot`), made on first use; a
   * 2026-07-28 request has no session and gets a value of its own.
   */
  sessionState<T>(slot: SessionSlot<T>): T;
  /** Reports progress, when the client asked for it with a `progressToken`; `progress` must increase. */
  progress(progress: number, total?: number, message?: string): void;
  /** Sends a log message to the client, if its log level lets it through. */
  log(level: LoggingLevel, data: unknown, logger?: string): void;
  /**
   * Initialize era: the lowest level of the log messages this session's requests send (what
   * `logging/setLevel` sets). Ignored for a 2026-07-28 request: its `_meta` names its own.
   */
  setLogLevel(level: LoggingLevel): void;
  /** Asks the user for input through the client. */
  elicit(params: ElicitFormParams | ElicitUrlParams, options?: ClientRequestOptions): Promise<ElicitResult>;
  /** Asks the client's model for a completion. */
  sample(params: SampleParams, options?: ClientRequestOptions): Promise<SampleResult>;
  /** Lists the client's roots. */
  roots(options?: ClientRequestOptions): Promise<Root[]>;
  /**
   * 2026-07-28: the value the handler kept with {@link setRequestState} in an earlier round of this
   * request (sealed, verified, expiring); undefined in the first round and in the initialize era.
   */
  readonly requestState: unknown;
  /** 2026-07-28: keeps a JSON value for the next round (it comes back as {@link requestState}); ignored in the initialize era. */
  setRequestState(value: unknown): void;
  /**
   * Turns this `tools/call` into a task when the tool allows it (`task`) and the client declared
   * the tasks extension: the client gets the task now, the handler's return value becomes its
   * result. Resolves with its handle, or undefined (the call stays an ordinary one). The tasks
   * extension answers it, in the context its wrapper hands the tool; any other context gives undefined.
   */
  task(options?: { statusMessage?: string }): Promise<TaskHandle | undefined>;
  /** This request's value of `slot` (see `requestSlot`): made by its `init` on first use, else what `set` put. */
  get<T>(slot: RequestSlot<T>): T;
  /** Sets this request's value of `slot`. */
  set<T>(slot: RequestSlot<T>, value: T): void;
  /**
   * 2026-07-28: how long and how widely the client may cache this result, sent as its `ttlMs` and
   * `cacheScope` (the last call counts); unset fields: 0 and `"private"`. A bad hint throws in either
   * era; the initialize era sends none. A result without a hint carries none.
   */
  cache(hint: CacheOptions | CacheHint): void;
  /** The result depends on the caller (its scopes, its identity): it is never cached as `"public"`. */
  personal(): void;
  /**
   * Sends a notification on this request's stream (a 2026-07-28 response stream, say) while the
   * request is open; dropped once it is answered or cancelled, as progress is.
   */
  notify(method: string, params?: object): void;
  /** Answers now with `result` (shaped as any result) on the request's stream and ends it (`signal` aborts): a long-lived request the server ends. */
  end(result: object): void;
}

/** The context of `resources/read`: the concrete URI that was asked for. */
export interface ResourceContext extends Context {
  /** The concrete URI requested. */
  readonly uri: string;
}

/** @internal — what the dispatcher knows of a request when it makes its context. */
export interface RequestInit {
  readonly connection: Connection;
  readonly id: RequestId;
  readonly method: string;
  readonly params: Params;
  readonly send: ((message: JsonRpcMessage) => void) | undefined; // its related messages; default: the connection's
  readonly timeoutMs: number; // the default wait for the client's answer to a request of the server
  readonly client: ClientView;
  readonly features: Features;
  readonly auth: AuthInfo | undefined; // its credentials (the transport's snapshot); default: the connection's
  readonly stateless?: StatelessRequest; // 2026-07-28: its log level and input round
}

/** What few requests use: the signal, the last progress, what `cache` and `personal` said (2026-07-28). */
interface Rare {
  abortReason?: unknown;
  controller?: AbortController;
  lastProgress?: number;
  cache?: CacheHint;
  personal?: boolean;
}

/** @internal — for the dispatcher: the hint a request's handler gave with `ctx.cache`. */
export let cacheOf: (ctx: RequestContext) => CacheHint | undefined;
/** @internal — for the dispatcher: whether a request's handler called `ctx.personal()`. */
export let isPersonal: (ctx: RequestContext) => boolean;

/** @internal — built by the dispatcher for each request: everything a method needs to know of it. */
export class RequestContext implements Context, AskChannel {
  readonly requestId: RequestId;
  /** @internal — the connection it came on. */
  readonly connection: Connection;
  /** @internal — its method and params. */
  readonly method: string;
  readonly params: Params;
  readonly client: ClientView;
  readonly features: Features;
  /** This request's credentials: the transport's snapshot for it, else the connection's. */
  auth: AuthInfo | undefined;
  /** Set once the answer is out: later progress and log messages are dropped. */
  done = false;
  /** Set when the request is cancelled; it is then never answered. */
  aborted = false;
  /** Set by the dispatcher: a 2025 request to the client counts against the caller's share. */
  governor: Governor | undefined;
  readonly #send: ((message: JsonRpcMessage) => void) | undefined;
  readonly #timeoutMs: number;
  readonly #stateless: StatelessRequest | undefined;
  #rare: Rare | undefined;
  // its request slots, and a stateless request's session slots (it has no session to keep them in)
  #slots: Map<SessionSlot<unknown> | RequestSlot<unknown>, unknown> | undefined;

  static {
    cacheOf = (ctx) => ctx.#rare?.cache;
    isPersonal = (ctx) => ctx.#rare?.personal === true;
  }

  /** `client`, `features`: the revision of this one request (its session's handshake, or its own `_meta`). */
  constructor(init: RequestInit) {
    this.connection = init.connection;
    this.requestId = init.id;
    this.method = init.method;
    this.params = init.params;
    this.#send = init.send;
    this.#timeoutMs = init.timeoutMs;
    this.features = init.features;
    this.client = init.client;
    this.auth = init.auth ?? init.connection.auth;
    this.#stateless = init.stateless;
  }

  get meta(): Meta | undefined {
    return isObject(this.params._meta) ? (this.params._meta as Meta) : undefined;
  }

  #more(): Rare {
    this.#rare ??= {};
    return this.#rare;
  }

  sessionState<T>(slot: SessionSlot<T>): T {
    if (!this.#stateless) return this.connection.slot(slot);
    this.#slots ??= new Map();
    if (!this.#slots.has(ofKind(slot, "session"))) this.#slots.set(slot, slot.init());
    return this.#slots.get(slot) as T;
  }

  get<T>(slot: RequestSlot<T>): T {
    if (ofKind(slot, "request") && this.#slots?.has(slot)) return this.#slots.get(slot) as T;
    if (slot.init === undefined) return undefined as T;
    const value = slot.init();
    this.set(slot, value);
    return value;
  }

  set<T>(slot: RequestSlot<T>, value: T): void {
    this.#slots ??= new Map();
    this.#slots.set(ofKind(slot, "request"), value);
  }

  cache(hint: CacheOptions | CacheHint): void {
    const checked = hintOf(hint); // a bad one throws in either era; the initialize era sends none
    if (this.#stateless) this.#more().cache = checked;
  }

  personal(): void {
    this.#more().personal = true;
  }

  get capabilities(): ClientCapabilities {
    return this.client.capabilities;
  }

  get signal(): AbortSignal {
    const rare = this.#more();
    if (!rare.controller) {
      rare.controller = new AbortController();
      if (this.aborted) rare.controller.abort(rare.abortReason);
    }
    return rare.controller.signal;
  }

  /** Cancels the request: aborts `signal`, and the dispatcher will not answer it. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.#more().abortReason = reason;
    this.#rare?.controller?.abort(reason);
  }

  get clientAddress(): string | undefined {
    return callerAddress(this.connection);
  }

  get sessionId(): string {
    return this.connection.id;
  }

  get hasSession(): boolean {
    return !this.#stateless && !this.connection.sessionless;
  }

  get caller(): string {
    return callerKey(this.auth, this.connection);
  }

  setLogLevel(level: LoggingLevel): void {
    if (!this.#stateless) this.connection.logLevel = level;
  }

  progress(progress: number, total?: number, message?: string): void {
    const token = this.meta?.progressToken;
    if ((typeof token !== "string" && typeof token !== "number") || this.done || this.aborted) return;
    const rare = this.#more();
    const last = rare.lastProgress ?? Number.NEGATIVE_INFINITY;
    if (!(progress > last)) throw new RangeError(`progress must increase: ${progress} after ${last}`);
    rare.lastProgress = progress;
    const params: { [key: string]: unknown } = { progressToken: token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined && this.features.progressMessage) params.message = message;
    this.#emit({ jsonrpc: "2.0", method: "notifications/progress", params });
  }

  log(level: LoggingLevel, data: unknown, logger?: string): void {
    if (this.done || this.aborted) return;
    // 2026-07-28: no level in the request's _meta, no log messages; a session, none without the logging capability
    const c = this.connection;
    const min = this.#stateless ? this.#stateless.logLevel : c.logLevel;
    if (this.#stateless ? min === undefined : c.state !== "new" && !c.declared.capabilities.logging) return;
    if (min !== undefined && LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(min)) return;
    const params: { [key: string]: unknown } = { level, data };
    if (logger !== undefined) params.logger = logger;
    this.#emit({ jsonrpc: "2.0", method: "notifications/message", params });
  }

  elicit(params: ElicitFormParams | ElicitUrlParams, options?: ClientRequestOptions): Promise<ElicitResult> {
    return elicit(this, params, options);
  }

  sample(params: SampleParams, options?: ClientRequestOptions): Promise<SampleResult> {
    return sample(this, params, options);
  }

  roots(options?: ClientRequestOptions): Promise<Root[]> {
    return roots(this, options);
  }

  get requestState(): unknown {
    return this.#stateless?.input?.state;
  }

  setRequestState(value: unknown): void {
    const round = this.#stateless?.input;
    if (round) round.state = value;
  }

  task(): Promise<TaskHandle | undefined> {
    return Promise.resolve(undefined);
  }

  end(result: object): void {
    if (this.done || this.aborted) return;
    const r =
      this.#stateless?.complete(result as Params, this.#rare?.cache, this.#rare?.personal === true) ?? result;
    this.#emit({ jsonrpc: "2.0", id: this.requestId, result: r as Params });
    this.abort(new Error("The request ended with its result"));
  }

  notify(method: string, params?: object): void {
    if (this.done || this.aborted) return;
    this.#emit(
      params === undefined
        ? { jsonrpc: "2.0", method }
        : { jsonrpc: "2.0", method, params: params as Params },
    );
  }

  /** @internal — 2026-07-28: the answer from the client's retry, or an input request that ends this run. */
  input<T>(
    method: InputRequest["method"],
    params: object,
    key: string | undefined,
    accept: (value: unknown) => T | undefined,
  ): Promise<T> {
    return fromRound(this.#stateless?.input, this.method, { method, params } as InputRequest, key, accept);
  }

  #emit(message: JsonRpcMessage): void {
    const send = this.#send;
    if (send) send(message);
    else this.connection.send(message);
  }

  /** @internal — initialize era: sends a request to the client on this request's behalf. */
  request(method: string, params: object, options: ClientRequestOptions | undefined): Promise<Params> {
    const own = options?.signal;
    const signal = own ? AbortSignal.any([this.signal, own]) : this.signal;
    const outbound = { signal, timeoutMs: options?.timeoutMs ?? this.#timeoutMs };
    // once answered (a task runs on), the request's own stream is gone: the connection's carries it
    const send = this.done ? undefined : this.#send;
    const p = withMeta(params, options?.meta) as Params;
    const release = this.governor?.claim("inputRounds", this.caller);
    if (release !== undefined && typeof release !== "function") return refuse<Params>(release);
    const asked = this.connection.request(method, p, send ? { ...outbound, send } : outbound);
    return release ? asked.finally(release) : asked;
  }
}

/** Completes one argument: the values that fit `value`, at most 100 are sent. */
export type Completer = (
  value: string,
  ctx: Context & { readonly arguments: { [key: string]: string } },
) => CompletionAnswer | Promise<CompletionAnswer>;
/** A completer's answer: the values, or the values with the total and whether there are more. */
export type CompletionAnswer =
  | readonly string[]
  | { values: readonly string[]; total?: number; hasMore?: boolean };
