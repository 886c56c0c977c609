/** The per-request context: the second argument of every `read`, `run`, `get` and `complete`. */
import type { AuthInfo, ClientView, Connection, SessionSlot } from "./connection.js";
import {
  type Asker,
  checkElicitAnswer,
  type InputRequest,
  InputRequiredSignal,
  type InputRound,
  isElicitAnswer,
  isSampleAnswer,
  quiet,
  refuse,
  rootsOfAnswer,
  type TaskHandle,
  withRelatedTask,
} from "./eras/input.js";
import { type CacheHint, LOG_LEVELS, missingCapability } from "./eras/stateless.js";
import type { Features } from "./eras/versions.js";
import { ClientCapabilityError } from "./errors.js";
import type { Governor } from "./limits/governor.js";
import { callerAddress, callerKey } from "./limits/key.js";
import {
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

/** Options of a request to the client. */
export interface ClientRequestOptions {
  /** Milliseconds to wait for the answer. Default: the server's `requestTimeoutMs` (60 s). */
  timeoutMs?: number;
  /**
   * 2026-07-28: the key of this input request in the `InputRequiredResult`. Default: the method and
   * the call's position in the handler (`elicitation-1`, `sampling-1`, `roots-1`, …).
   */
  key?: string;
}

export type { Asker, ClientView, TaskHandle };

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
   * result. Resolves with its handle, or undefined (the call stays an ordinary one).
   */
  task(options?: { statusMessage?: string }): Promise<TaskHandle | undefined>;
}

/** The context of `resources/read`: the concrete URI that was asked for. */
export interface ResourceContext extends Context {
  /** The concrete URI requested. */
  readonly uri: string;
}

/** @internal — what a 2026-07-28 request brings: its log level and, where it may ask for input, its round. */
export interface StatelessRequest {
  readonly logLevel: LoggingLevel | undefined;
  readonly input: InputRound | undefined;
}

/** @internal — what the dispatcher knows of a request when it makes its context. */
export interface RequestInit {
  readonly connection: Connection;
  readonly id: RequestId;
  readonly method: string;
  readonly params: Params;
  /** Where its related messages go; default: the connection's `send`. */
  readonly send: ((message: JsonRpcMessage) => void) | undefined;
  /** The default wait for the client's answer to a request of the server. */
  readonly timeoutMs: number;
  readonly client: ClientView;
  readonly features: Features;
  /** Its credentials (the transport's snapshot for it); default: the connection's. */
  readonly auth: AuthInfo | undefined;
  /** 2026-07-28: its log level and input round. */
  readonly stateless?: StatelessRequest;
}

/** @internal — built by the dispatcher for each request: everything a method needs to know of it. */
export class RequestContext implements Context {
  readonly requestId: RequestId;
  /** @internal — the connection it came on. */
  readonly connection: Connection;
  /** @internal — its method and params. */
  readonly method: string;
  readonly params: Params;
  readonly client: ClientView;
  readonly meta: Meta | undefined;
  readonly features: Features;
  /** This request's credentials: the transport's snapshot for it, else the connection's. */
  auth: AuthInfo | undefined;
  uri!: string;
  /** `completion/complete` only: the arguments already chosen. */
  arguments!: { [key: string]: string };
  /** 2026-07-28: set by a cacheable method, sent as `ttlMs`/`cacheScope`. */
  cacheHint: CacheHint | undefined;
  /** Set once the answer is out: later progress and log messages are dropped. */
  done = false;
  /** Set when the request is cancelled; it is then never answered. */
  aborted = false;
  /** Set when the answer depends on the caller's scopes (a filtered list): it must never be cached as public. */
  personal = false;
  /** Set by the tasks extension: what `task()` does, where calls to the client go, the task it runs as. */
  taskStarter: ((options?: { statusMessage?: string }) => Promise<TaskHandle>) | undefined;
  asker: Asker | undefined;
  relatedTask: { taskId: string } | undefined;
  /** Set by the dispatcher: a 2025 request to the client counts against the caller's share. */
  governor: Governor | undefined;
  #abortReason: unknown;
  // created on first use: most handlers never look at their signal
  #controller: AbortController | undefined;
  readonly #send: ((message: JsonRpcMessage) => void) | undefined;
  readonly #timeoutMs: number;
  // undefined until the first report: a number here would box a heap number in every context
  #lastProgress: number | undefined;
  readonly #stateless: StatelessRequest | undefined;
  // a stateless request's slots: it has no session to keep them in
  #slots: Map<SessionSlot<unknown>, unknown> | undefined;

  /**
   * `client` and `features` describe the revision of this one request: from the connection's
   * handshake for the initialize era, from the request's own `_meta` for 2026-07-28. Handlers see the
   * same context either way.
   */
  constructor(init: RequestInit) {
    this.connection = init.connection;
    this.requestId = init.id;
    this.method = init.method;
    this.params = init.params;
    const meta = init.params._meta;
    this.meta = isObject(meta) ? (meta as Meta) : undefined;
    this.#send = init.send;
    this.#timeoutMs = init.timeoutMs;
    this.features = init.features;
    this.client = init.client;
    this.auth = init.auth ?? init.connection.auth;
    this.#stateless = init.stateless;
  }

  sessionState<T>(slot: SessionSlot<T>): T {
    if (!this.#stateless) return this.connection.slot(slot);
    this.#slots ??= new Map();
    if (!this.#slots.has(slot)) this.#slots.set(slot, slot.init());
    return this.#slots.get(slot) as T;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** Cancels the request: aborts `signal`, and the dispatcher will not answer it. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }

  get clientAddress(): string | undefined {
    return callerAddress(this.connection);
  }

  get sessionId(): string {
    return this.connection.id;
  }

  progress(progress: number, total?: number, message?: string): void {
    const token = this.meta?.progressToken;
    if ((typeof token !== "string" && typeof token !== "number") || this.done || this.aborted) return;
    const last = this.#lastProgress ?? Number.NEGATIVE_INFINITY;
    if (!(progress > last)) {
      throw new RangeError(`progress must increase: ${progress} after ${last}`);
    }
    this.#lastProgress = progress;
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
    if (this.#stateless) return this.#statelessElicit(params, options?.key);
    const caps = this.client.capabilities.elicitation as { form?: object; url?: object } | undefined;
    if (params.mode === "url") {
      if (!caps?.url || !this.features.urlElicitation) {
        return Promise.reject(new ClientCapabilityError("URL-mode elicitation", "elicitation.url"));
      }
      const wire = { ...params, elicitationId: params.elicitationId ?? crypto.randomUUID() };
      return quiet(this.#ask("elicitation/create", wire, options).then(checkElicitResult));
    }
    // a client that declares `elicitation: {}` supports form mode (2025-06-18 had no modes)
    const formOk = caps && (caps.form !== undefined || caps.url === undefined);
    if (!formOk || !this.features.elicitation) {
      return Promise.reject(new ClientCapabilityError("form elicitation", "elicitation"));
    }
    const wire: { [key: string]: unknown } = {
      message: params.message,
      requestedSchema: params.requestedSchema,
    };
    if (this.features.urlElicitation) wire.mode = "form";
    return quiet(this.#ask("elicitation/create", wire, options).then(checkElicitResult));
  }

  sample(params: SampleParams, options?: ClientRequestOptions): Promise<SampleResult> {
    const caps = this.client.capabilities.sampling as { tools?: object } | undefined;
    if (this.#stateless) {
      if (!caps) return refuse(missingCapability({ sampling: {} }));
      if ((params.tools || params.toolChoice) && !caps.tools)
        return refuse(missingCapability({ sampling: { tools: {} } }));
      return this.#input("sampling/createMessage", params, options?.key, toSampleResult);
    }
    if (!caps) return Promise.reject(new ClientCapabilityError("sampling", "sampling"));
    if ((params.tools || params.toolChoice) && !caps.tools) {
      return Promise.reject(new ClientCapabilityError("tool use in sampling", "sampling.tools"));
    }
    const asked = this.#ask("sampling/createMessage", params, options).then((r) => {
      const result = toSampleResult(r);
      if (!result) throw new Error("The client answered sampling/createMessage with a malformed result");
      return result;
    });
    return quiet(asked);
  }

  roots(options?: ClientRequestOptions): Promise<Root[]> {
    if (this.#stateless) {
      if (!this.client.capabilities.roots) return refuse(missingCapability({ roots: {} }));
      return this.#input("roots/list", {}, options?.key, toRoots);
    }
    if (!this.client.capabilities.roots) return refuse(new ClientCapabilityError("roots", "roots"));
    const asked = this.#ask("roots/list", {}, options);
    return quiet(asked.then((r) => (Array.isArray(r.roots) ? (r.roots as Root[]) : [])));
  }

  get requestState(): unknown {
    return this.#stateless?.input?.state;
  }

  setRequestState(value: unknown): void {
    const round = this.#stateless?.input;
    if (round) round.state = value;
  }

  task(options?: { statusMessage?: string }): Promise<TaskHandle | undefined> {
    return this.taskStarter ? this.taskStarter(options) : Promise.resolve(undefined);
  }

  /** @internal — sends a notification on this request's stream (a listen's acknowledgement, say). */
  notify(message: JsonRpcMessage): void {
    this.#emit(message);
  }

  #statelessElicit(
    params: ElicitFormParams | ElicitUrlParams,
    key: string | undefined,
  ): Promise<ElicitResult> {
    const caps = this.client.capabilities.elicitation as { form?: object; url?: object } | undefined;
    if (params.mode === "url") {
      if (!caps?.url) return refuse(missingCapability({ elicitation: { url: {} } }));
      // 2026-07-28 has no elicitationId: the retry itself says the interaction is done
      const wire = { mode: "url", message: params.message, url: params.url };
      return this.#input("elicitation/create", wire, key, toElicitResult);
    }
    if (!caps || (caps.form === undefined && caps.url !== undefined))
      return refuse(missingCapability({ elicitation: { form: {} } }));
    const wire = { message: params.message, requestedSchema: params.requestedSchema };
    return this.#input("elicitation/create", wire, key, toElicitResult);
  }

  /** 2026-07-28: the answer from the client's retry, or an input request that ends this run. */
  #input<T>(
    method: InputRequest["method"],
    params: object,
    key: string | undefined,
    accept: (value: unknown) => T | undefined,
  ): Promise<T> {
    if (this.asker) return this.asker(method, params, key, accept) as Promise<T>;
    const round = this.#stateless?.input;
    if (!round) {
      return refuse(
        new Error(
          `${method}: in 2026-07-28 only tools/call, prompts/get and resources/read can ask the client`,
        ),
      );
    }
    const k = key ?? round.autoKey(method);
    const value = round.answer(k, { method, params: params as InputRequest["params"] }, accept);
    return value === undefined ? refuse(new InputRequiredSignal(k)) : Promise.resolve(value);
  }

  #emit(message: JsonRpcMessage): void {
    if (this.#send) this.#send(message);
    else this.connection.send(message);
  }

  #ask(method: string, params: object, options: ClientRequestOptions | undefined) {
    const outbound = { signal: this.signal, timeoutMs: options?.timeoutMs ?? this.#timeoutMs };
    // once answered (a task runs on), the request's own stream is gone: the connection's carries it
    const send = this.done ? undefined : this.#send;
    const p = withRelatedTask(params, this.relatedTask);
    const release = this.governor?.claim("inputRounds", callerKey(this.auth, this.connection));
    if (release !== undefined && typeof release !== "function") return refuse<Params>(release);
    const asked = this.connection.request(method, p, send ? { ...outbound, send } : outbound);
    return release ? asked.finally(release) : asked;
  }
}

const toElicitResult = isElicitAnswer as (r: unknown) => ElicitResult | undefined;
const toSampleResult = isSampleAnswer as (r: unknown) => SampleResult | undefined;
const toRoots = rootsOfAnswer as (r: unknown) => Root[] | undefined;

const checkElicitResult = checkElicitAnswer as unknown as (r: { [key: string]: unknown }) => ElicitResult;

/** Completes one argument: the values that fit `value`, at most 100 are sent. */
export type Completer = (
  value: string,
  ctx: Context & { readonly arguments: { [key: string]: string } },
) => CompletionAnswer | Promise<CompletionAnswer>;
/** A completer's answer: the values, or the values with the total and whether there are more. */
export type CompletionAnswer =
  | readonly string[]
  | { values: readonly string[]; total?: number; hasMore?: boolean };
