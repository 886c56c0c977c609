/**
 * The one seam every method family goes through: an extension declares capabilities (per revision),
 * adds methods and notifications, and may wrap a method of another extension. Tools, resources,
 * prompts, completion, logging, listen, discover, tasks and skills are extensions like any an
 * application adds with `server.use(...)`; the dispatcher knows no method by name.
 */
import type { ChangeEvent } from "./bus.js";
import type { Connection, ConnectionOptions, SessionSlot } from "./connection.js";
import type { Context } from "./context.js";
import { missingCapability } from "./eras/stateless.js";
import type { Features } from "./eras/versions.js";
import type { JsonRpcMessage, JsonRpcResponse, Params, RequestId, ServerCapabilities } from "./types.js";

/** Where a method exists: in the `initialize` era's sessions, in stateless (2026-07-28) requests, or both. */
export type Era = "session" | "stateless" | "both";

/** A request method an extension adds. */
export interface ExtensionMethod {
  /** The era it exists in; elsewhere it answers -32601. Default: `"both"`. */
  readonly era?: Era;
  /**
   * Whether it exists given the capabilities declared to this client (those of the request's
   * revision); -32601 otherwise. Default: it exists while its extension is served.
   */
  readonly when?: (capabilities: ServerCapabilities) => boolean;
  /**
   * 2026-07-28: the client must declare the extension under `capabilities.extensions` (-32021
   * otherwise). Default: true for an extension that has `settings`, false for one that has not.
   */
  readonly clientMustDeclare?: boolean;
  /** 2026-07-28: its handler may ask the client (elicit, sample, roots) and so answer `input_required`. */
  readonly input?: boolean;
  /**
   * Its result (or a promise of it); a thrown `McpError` is the client's error, anything else -32603.
   * A property, not a method: a `run` that declares more of `ctx` than `Context` does not compile.
   */
  readonly run: (params: Params, ctx: Context) => unknown;
}

/** A notification handler an extension adds; its errors are reported to `onError`, never answered. */
export type NotificationHandler = (params: Params, ctx: NotificationContext) => void;

/** What a notification handler is told of the peer. */
export interface NotificationContext {
  /** The notification's method. */
  readonly method: string;
  /** The revision of the connection (a session's, else the newest handshake revision). */
  readonly features: Features;
  /** The connection's id. */
  readonly sessionId: string;
  /** This session's value of `slot` (see `Context.sessionState`). */
  sessionState<T>(slot: SessionSlot<T>): T;
}

/**
 * Runs around a method of any extension: `next()` runs it (and the wrappers below), at most once;
 * `next(context)` runs them with a context of the wrapper's own instead of `ctx` (one made with
 * `extendContext(ctx, { … })`, say: a task's, whose calls to the client wait for the task's client).
 * What `next()` resolves with may be frozen (a cached page of a list is shared by every caller):
 * return a new object (`{ ...result, _meta }`) rather than change it.
 */
export type MethodWrapper = (
  params: Params,
  ctx: Context,
  next: (ctx?: Context) => Promise<unknown>,
) => unknown;

/** What one extension brings. */
export interface Extension {
  /**
   * Its identifier: the key under `capabilities.extensions` when it has `settings`
   * (`io.modelcontextprotocol/tasks`), otherwise a name for errors (`picomcp/tools`).
   */
  readonly id: string;
  /** What to declare under `capabilities.extensions[id]` for revision `f`; undefined: not there. */
  readonly settings?: (f: Features) => object | undefined;
  /** Capabilities outside `extensions` for revision `f` (`{ tools: { listChanged: true } }`); undefined: none. */
  readonly capabilities?: (f: Features) => { readonly [key: string]: object } | undefined;
  /** Request methods it adds, by name. */
  readonly methods?: { readonly [name: string]: ExtensionMethod };
  /** Notification handlers it adds, by name. */
  readonly notifications?: { readonly [name: string]: NotificationHandler };
  /** Wrappers around methods (its own or another extension's), by method name. */
  readonly wrap?: { readonly [name: string]: MethodWrapper };
  /** Watches every message, session and change (telemetry, see `observer.ts`); one extension at a time may bring one. */
  readonly observer?: Observer;
}

// An observer (telemetry, `picomcp/otel`) watches every message a client sends (protocol errors
// included), what the server sends and the answers it gets back, connections opening, the change
// events this process publishes and transports' refusals. With none added, the core reads one
// property per message and allocates nothing for it.

/** What carried a message: `"pipe"` (stdio) or the HTTP request; undefined in memory. */
export type Carrier = "pipe" | Request;

/** A message from the client, as it arrives. */
export interface MessageStart {
  readonly method: string;
  /** Its id; undefined for a notification. */
  readonly id: RequestId | undefined;
  /** Its params (an empty object when it had none, or malformed ones). */
  readonly params: Params;
  readonly connection: Connection;
  readonly carrier: Carrier | undefined;
}

/** One message under observation, from its arrival to its answer. */
export interface MessageObservation {
  /** Runs the message's handling (in the observer's context, say) and returns what `run` returns. */
  readonly run: <T>(run: () => T) => T;
  /** Where the request's related messages go (progress, logs, requests to the client), given where they went. */
  readonly send?: (send: (message: JsonRpcMessage) => void) => (message: JsonRpcMessage) => void;
  /** The handling is over: its answer (undefined for a notification, a cancelled request, or a throw) → the answer to send. */
  readonly end: (answer: JsonRpcResponse | undefined) => JsonRpcResponse | undefined;
}

/** What an observer watches; every hook is optional. */
export interface Observer {
  /** A request or notification arrived; undefined leaves it unobserved. */
  readonly message?: (start: MessageStart) => MessageObservation | undefined;
  /** The client answered a request of the server (before the waiting call resolves). */
  readonly response?: (message: JsonRpcResponse, connection: Connection) => void;
  /** A transport opens a connection: the options it is made with (its `send` wrapped, say). */
  readonly connect?: (options: ConnectionOptions) => ConnectionOptions;
  /** This process published a change event (a list changed, a resource was updated, a task changed). */
  readonly change?: (event: ChangeEvent) => void;
  /** A transport refused a message at one of its limits (`reason`: low-cardinality, such as `payload_too_large`). */
  readonly refused?: (reason: string, network: "pipe" | "tcp") => void;
}

/** Whether the request's client declared the extension `id` (`capabilities.extensions[id]`). */
export function clientDeclares(ctx: Context, id: string): boolean {
  const ext = ctx.client.capabilities.extensions;
  return typeof ext === "object" && ext !== null && Object.hasOwn(ext, id);
}

/** A method as the dispatcher runs it. */
export interface Method {
  readonly era: Era;
  readonly input: boolean;
  readonly when: ((capabilities: ServerCapabilities) => boolean) | undefined;
  readonly ext: Extension;
  readonly run: (params: Params, ctx: Context) => unknown;
}

/**
 * The extensions of one server and the methods they add. The caller passes the ids served to the
 * request's client (see {@link served}): what a session was told at `initialize`, or what a
 * stateless request's revision is served now.
 */
export class Extensions {
  readonly #all: Extension[] = [];
  readonly #methods = new Map<string, Method>();
  readonly #notifications = new Map<string, { ext: Extension; handler: NotificationHandler }>();
  /** How many wrappers each wrapped method has: a method with none pays nothing for the mechanism. */
  readonly #wrapped = new Map<string, number>();
  /** The observer of an added extension, if one brought it: the dispatcher calls it only when set. */
  observer: Observer | undefined;

  /** Adds `ext` and returns what removes it; throws when its id or a method or notification of it is taken. */
  add(ext: Extension): () => void {
    if (typeof ext?.id !== "string" || ext.id === "") throw new TypeError("An extension needs an id string");
    if (this.#all.some((e) => e.id === ext.id)) throw new Error(`Extension ${ext.id} is already added`);
    const methods = Object.entries(ext.methods ?? {});
    const notifications = Object.entries(ext.notifications ?? {});
    for (const [name, m] of methods) {
      if (this.#methods.has(name))
        throw new Error(`Method ${name} is already added (by ${this.#methods.get(name)!.ext.id})`);
      if (typeof m?.run !== "function")
        throw new TypeError(`Method ${name} of ${ext.id} needs a run function`);
    }
    for (const [name, handler] of notifications) {
      if (this.#notifications.has(name)) throw new Error(`Notification ${name} is already handled`);
      if (typeof handler !== "function")
        throw new TypeError(`Notification ${name} of ${ext.id} needs a handler function`);
    }
    for (const [name, wrap] of Object.entries(ext.wrap ?? {}))
      if (typeof wrap !== "function")
        throw new TypeError(`Wrapper of ${name} in ${ext.id} must be a function`);
    if (ext.observer !== undefined && this.observer !== undefined)
      throw new Error(`${ext.id}: an observer is already added (a server has one at a time)`);
    this.#all.push(ext);
    const declared = typeof ext.settings === "function";
    for (const [name, m] of methods) {
      const mustDeclare = m.clientMustDeclare ?? declared;
      const run =
        mustDeclare && declared
          ? (params: Params, ctx: Context) => {
              if (ctx.features.stateless && !clientDeclares(ctx, ext.id))
                throw missingCapability({ extensions: { [ext.id]: {} } });
              return m.run(params, ctx);
            }
          : m.run.bind(m);
      this.#methods.set(name, { era: m.era ?? "both", input: m.input === true, when: m.when, ext, run });
    }
    for (const [name, handler] of notifications) this.#notifications.set(name, { ext, handler });
    if (ext.observer !== undefined) this.observer = ext.observer;
    for (const name of Object.keys(ext.wrap ?? {}))
      this.#wrapped.set(name, (this.#wrapped.get(name) ?? 0) + 1);
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.#all.splice(this.#all.indexOf(ext), 1);
      for (const [name] of methods) this.#methods.delete(name);
      for (const [name] of notifications) this.#notifications.delete(name);
      if (ext.observer !== undefined) this.observer = undefined;
      for (const name of Object.keys(ext.wrap ?? {})) {
        const n = this.#wrapped.get(name)! - 1;
        if (n === 0) this.#wrapped.delete(name);
        else this.#wrapped.set(name, n);
      }
    };
  }

  /** Copies each extension's capabilities for revision `f` into `caps`, in the order they were added; settings go under `caps.extensions`. */
  declare(f: Features, caps: { [key: string]: unknown }): void {
    let extensions: { [id: string]: object } | undefined;
    for (const ext of this.#all) {
      const own = ext.capabilities?.(f);
      if (own) Object.assign(caps, own);
      const settings = ext.settings?.(f);
      if (settings === undefined) continue;
      extensions ??= {};
      extensions[ext.id] = settings;
    }
    if (extensions) caps.extensions = extensions;
  }

  /**
   * The ids of the extensions served in revision `f` now: one with neither `settings` nor
   * `capabilities` always is, any other while one of them gives something.
   */
  served(f: Features): ReadonlySet<string> {
    const ids = new Set<string>();
    for (const ext of this.#all) {
      const always = ext.settings === undefined && ext.capabilities === undefined;
      if (always || ext.settings?.(f) !== undefined || ext.capabilities?.(f) !== undefined) ids.add(ext.id);
    }
    return ids;
  }

  /** The method `name` when its extension is among `served`. */
  method(name: string, served: ReadonlySet<string>): Method | undefined {
    const m = this.#methods.get(name);
    return m && served.has(m.ext.id) ? m : undefined;
  }

  /** Whether an extension added a method (or, with `notification`, a notification handler) named `name`. */
  has(name: string, notification: boolean): boolean {
    return notification ? this.#notifications.has(name) : this.#methods.has(name);
  }

  /** The handler of notification `name` when its extension is among `served`. */
  notification(name: string, served: ReadonlySet<string>): NotificationHandler | undefined {
    const n = this.#notifications.get(name);
    return n && served.has(n.ext.id) ? n.handler : undefined;
  }

  /** Whether an extension among `served` wraps method `name`. */
  wraps(name: string, served: ReadonlySet<string>): boolean {
    if (!this.#wrapped.has(name)) return false;
    for (const ext of this.#all) if (ext.wrap?.[name] !== undefined && served.has(ext.id)) return true;
    return false;
  }

  /**
   * Runs method `name` through the wrappers of the extensions among `served`, the first added
   * outermost; a wrapper whose `next()` is called twice gets an error (the method runs once).
   */
  run(
    name: string,
    params: Params,
    ctx: Context,
    served: ReadonlySet<string>,
    run: (ctx: Context) => unknown,
  ): unknown {
    let next: (ctx: Context) => unknown = run;
    for (let i = this.#all.length - 1; i >= 0; i--) {
      const ext = this.#all[i]!;
      const wrap = ext.wrap?.[name];
      if (wrap === undefined || !served.has(ext.id)) continue;
      const inner = next;
      next = (c) => {
        let called = false;
        return wrap(params, c, async (own) => {
          if (called) throw new Error(`${ext.id}: next() called twice in its wrapper of ${name}`);
          called = true;
          return inner(own ?? c);
        });
      };
    }
    return next(ctx);
  }
}
