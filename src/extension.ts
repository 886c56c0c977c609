/**
 * The one seam every method family goes through: an extension declares capabilities (per revision),
 * adds methods and notifications, and may wrap a method of another extension. Tools, resources,
 * prompts, completion, logging, listen, discover, tasks and skills are extensions like any an
 * application adds with `server.use(...)`; the dispatcher knows no method by name.
 */
import type { ChangeEvent } from "./bus.js";
import type { SessionSlot } from "./connection.js";
import type { Context } from "./context.js";
import { missingCapability } from "./eras/stateless.js";
import type { Features } from "./eras/versions.js";
import { composeObservers, guardObserver, type Observer, type ObserverFailed } from "./observe/observers.js";
import { isPromiseLike, type Params, type ServerCapabilities } from "./types.js";
import type { ExtensionHost, SessionHandle } from "./views/host.js";

export type { Carrier, MessageObservation, MessageStart, Observer } from "./observe/observers.js";

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
   * otherwise). Only an extension with `settings` is declared there, so only one with `settings` can
   * ask this: for it the default is true (false lets any client call the method); for one without
   * `settings` the option has no effect (its methods are never refused for it).
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

/**
 * A notification handler an extension adds; its errors (a throw, or the rejection of an async
 * handler) are reported to `onError`, never answered.
 */
export type NotificationHandler = (params: Params, ctx: NotificationContext) => void | Promise<void>;

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

/** Type-only (no value): the brand of a built-in entry of `defaultExtensions`. */
declare const BUILT_IN: unique symbol;

/** A built-in's brand: what has it never passes for an {@link Extension} (`server.use` refuses it). */
export interface BuiltInBrand {
  readonly [BUILT_IN]: true;
}

/** What one extension brings. */
export interface Extension {
  /** Never set: keeps a built-in entry of `defaultExtensions` from passing for an extension. */
  readonly [BUILT_IN]?: never;
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
  /**
   * The ids of the extensions it needs (`["picomcp/tools"]`): adding it without one of them throws,
   * naming the missing one, and removing one of them while it is added throws too.
   */
  readonly requires?: readonly string[];
  /**
   * Watches every message, session and change (telemetry, an audit log). Several extensions may each
   * bring one: each sees everything, in the order they were added (the first outermost).
   */
  readonly observer?: Observer;
  /**
   * A change event reached this server from its bus (published by this process or by another
   * instance on the same bus): a list changed, a resource was updated, a task changed. The server
   * calls the hook of every added extension for every event; a throw (or an async hook's rejection)
   * goes to `onError`.
   */
  readonly change?: (event: ChangeEvent) => void | Promise<void>;
  /**
   * The server ends `session` gracefully, exactly once whatever path ends it: `server.close()`, the
   * HTTP handler's `close()` or a drain (as it begins), a session's DELETE or idle expiry, the end of
   * stdio input. Its slots are still there (`session.peek(slot)`). Give each long-lived request of
   * that session its final result now (`ctx.end(result)`); those still running when the session
   * closes are cancelled. A throw (or an async hook's rejection) goes to `onError`.
   */
  readonly sessionEnd?: (session: SessionHandle) => void | Promise<void>;
  /**
   * Called once, when the extension is added, with the server's {@link ExtensionHost}: the open
   * sessions (to notify them, or read their slots, outside a request), `onError` and the caller
   * limits. Keep it to reach the server later; the built-ins are given nothing more.
   */
  readonly attach?: (host: ExtensionHost) => void;
}

/** A hook whose throw goes to `onError`, named as its method. */
export type Hook = "change" | "sessionEnd";

/** Whether the request's client declared the extension `id` (`capabilities.extensions[id]`). */
export function clientDeclares(ctx: Context, id: string): boolean {
  const ext = ctx.client.capabilities.extensions;
  return typeof ext === "object" && ext !== null && Object.hasOwn(ext, id);
}

/**
 * Calls a hook or handler whose outcome nobody awaits: a throw, or a rejection of the promise it
 * returns (an async one), goes to `failed` and never becomes an unhandled rejection.
 */
export function guarded(call: () => unknown, failed: (error: unknown) => void): void {
  try {
    const result = call();
    if (isPromiseLike(result)) result.then(undefined, failed);
  } catch (error) {
    failed(error);
  }
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
  /**
   * The wrappers of each wrapped method, in the order their extensions were added (made when one comes
   * or goes): a request reads one list, never every extension's `wrap`, whose objects are each of a
   * shape of their own; a method with none pays one lookup.
   */
  readonly #wrapped = new Map<string, { readonly ext: Extension; readonly wrap: MethodWrapper }[]>();
  /** The observers the added extensions brought, in the order they were added. */
  readonly #observers: Observer[] = [];
  /**
   * What the dispatcher calls: undefined with no observer, the one itself, or several composed (made
   * when an extension comes or goes, never per message).
   */
  observer: Observer | undefined;
  /** The extensions with a `change` hook, and those with a `sessionEnd` hook: none costs nothing per event. */
  readonly #changes: Extension[] = [];
  readonly #ends: Extension[] = [];
  readonly #observerFailed: ObserverFailed;

  /** `observerFailed`: where an observer's hook that throws is reported (the server goes on as without it). */
  constructor(observerFailed: ObserverFailed = () => {}) {
    this.#observerFailed = observerFailed;
  }

  /** The ids of the extensions added now. */
  ids(): ReadonlySet<string> {
    return new Set(this.#all.map((e) => e.id));
  }

  /** Throws when an extension of `list` requires an id that neither this table nor `list` has. */
  checkRequires(list: readonly Extension[]): void {
    const ids = new Set([...this.#all, ...list].map((e) => e?.id));
    for (const ext of list) {
      const requires = ext?.requires ?? [];
      if (!Array.isArray(requires) || requires.some((id) => typeof id !== "string"))
        throw new TypeError(`${ext.id}: requires must be an array of extension ids`);
      for (const id of requires)
        if (!ids.has(id)) throw new Error(`${ext.id} requires ${id}, which this server does not have`);
    }
  }

  /**
   * Adds `ext` and returns what removes it; throws when its id or a method or notification of it is
   * taken, or (unless `checked` says {@link checkRequires} ran) when an id it requires is missing.
   * What removes it throws while another added extension requires it.
   */
  add(ext: Extension, checked = false): () => void {
    if (typeof ext?.id !== "string" || ext.id === "") throw new TypeError("An extension needs an id string");
    if (this.#all.some((e) => e.id === ext.id)) throw new Error(`Extension ${ext.id} is already added`);
    if (!checked) this.checkRequires([ext]);
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
    for (const hook of ["change", "sessionEnd", "attach"] as const)
      if (ext[hook] !== undefined && typeof ext[hook] !== "function")
        throw new TypeError(`The ${hook} hook of ${ext.id} must be a function`);
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
    const observer = ext.observer && guardObserver(ext.observer, ext.id, this.#observerFailed);
    if (observer !== undefined) {
      this.#observers.push(observer);
      this.observer = composeObservers(this.#observers);
    }
    if (ext.change !== undefined) this.#changes.push(ext);
    if (ext.sessionEnd !== undefined) this.#ends.push(ext);
    for (const [name, wrap] of Object.entries(ext.wrap ?? {})) {
      const list = this.#wrapped.get(name) ?? [];
      list.push({ ext, wrap });
      this.#wrapped.set(name, list);
    }
    let removed = false;
    return () => {
      if (removed) return;
      const dependent = this.#all.find((e) => e !== ext && e.requires?.includes(ext.id));
      if (dependent)
        throw new Error(`Cannot remove ${ext.id}: ${dependent.id} requires it (remove that first)`);
      removed = true;
      this.#all.splice(this.#all.indexOf(ext), 1);
      for (const [name] of methods) this.#methods.delete(name);
      for (const [name] of notifications) this.#notifications.delete(name);
      if (observer !== undefined) {
        this.#observers.splice(this.#observers.indexOf(observer), 1);
        this.observer = composeObservers(this.#observers);
      }
      if (ext.change !== undefined) this.#changes.splice(this.#changes.indexOf(ext), 1);
      if (ext.sessionEnd !== undefined) this.#ends.splice(this.#ends.indexOf(ext), 1);
      for (const name of Object.keys(ext.wrap ?? {})) {
        const list = this.#wrapped.get(name)!.filter((w) => w.ext !== ext);
        if (list.length === 0) this.#wrapped.delete(name);
        else this.#wrapped.set(name, list);
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

  /** Hands `event` to the `change` hook of every extension that has one; a throw or rejection goes to `failed`. */
  change(event: ChangeEvent, failed: (error: unknown, ext: Extension, hook: Hook) => void): void {
    for (const ext of this.#changes)
      guarded(
        () => ext.change!(event),
        (error) => failed(error, ext, "change"),
      );
  }

  /**
   * Calls the `sessionEnd` hook of every extension that has one for `session()` (asked only when one
   * has); a throw or rejection goes to `failed`.
   */
  end(session: () => SessionHandle, failed: (error: unknown, ext: Extension, hook: Hook) => void): void {
    if (this.#ends.length === 0) return;
    const handle = session();
    for (const ext of this.#ends)
      guarded(
        () => ext.sessionEnd!(handle),
        (error) => failed(error, ext, "sessionEnd"),
      );
  }

  /** Whether an extension among `served` wraps method `name`. */
  wraps(name: string, served: ReadonlySet<string>): boolean {
    const list = this.#wrapped.get(name);
    if (list === undefined) return false;
    for (const { ext } of list) if (served.has(ext.id)) return true;
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
    const list = this.#wrapped.get(name) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const { ext, wrap } = list[i]!;
      if (!served.has(ext.id)) continue;
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
