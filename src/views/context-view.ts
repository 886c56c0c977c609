/** A context made from another: it answers as its base does, but for what it adds or replaces. */
import type { SessionSlot } from "../connection.js";
import type { ClientRequestOptions, Context } from "../context.js";
import type { CacheHint, CacheOptions } from "../eras/stateless.js";
import type { RequestSlot } from "../request/slot.js";
import type { LoggingLevel } from "../types.js";

/**
 * A {@link Context} that passes every member to `base`; a subclass replaces some (a task's context
 * replaces `signal`, `task` and the calls to the client) or adds its own (`uri` for a read). It costs
 * one small object; the request's state (slots, hints, progress) stays the base's, so a wrapper and the
 * method it wraps share it whichever context each holds.
 */
export class ContextView implements Context {
  readonly #base: Context;

  constructor(base: Context) {
    this.#base = base;
  }

  /** The context this one was made from. */
  protected get base(): Context {
    return this.#base;
  }
  get signal() {
    return this.#base.signal;
  }
  get requestId() {
    return this.#base.requestId;
  }
  get client() {
    return this.#base.client;
  }
  get meta() {
    return this.#base.meta;
  }
  get auth() {
    return this.#base.auth;
  }
  get sessionId() {
    return this.#base.sessionId;
  }
  get hasSession() {
    return this.#base.hasSession;
  }
  get caller() {
    return this.#base.caller;
  }
  get clientAddress() {
    return this.#base.clientAddress;
  }
  get features() {
    return this.#base.features;
  }
  get requestState() {
    return this.#base.requestState;
  }
  sessionState<T>(slot: SessionSlot<T>): T {
    return this.#base.sessionState(slot);
  }
  progress(progress: number, total?: number, message?: string): void {
    this.#base.progress(progress, total, message);
  }
  log(level: LoggingLevel, data: unknown, logger?: string): void {
    this.#base.log(level, data, logger);
  }
  setLogLevel(level: LoggingLevel): void {
    this.#base.setLogLevel(level);
  }
  elicit(...args: Parameters<Context["elicit"]>) {
    return this.#base.elicit(...args);
  }
  sample(...args: Parameters<Context["sample"]>) {
    return this.#base.sample(...args);
  }
  roots(options?: ClientRequestOptions) {
    return this.#base.roots(options);
  }
  setRequestState(value: unknown): void {
    this.#base.setRequestState(value);
  }
  task(options?: { statusMessage?: string }) {
    return this.#base.task(options);
  }
  get<T>(slot: RequestSlot<T>): T {
    return this.#base.get(slot);
  }
  set<T>(slot: RequestSlot<T>, value: T): void {
    this.#base.set(slot, value);
  }
  cache(hint: CacheOptions | CacheHint): void {
    this.#base.cache(hint);
  }
  personal(): void {
    this.#base.personal();
  }
  notify(method: string, params?: object): void {
    this.#base.notify(method, params);
  }
}

/**
 * `ctx` with `extra`'s members added or put in place of its own (`{ arguments }` for a completer,
 * `{ cache() {} }` for a method whose hint must not reach the result): for a wrapper to hand
 * `next(...)`, or an extension to hand a handler of its own.
 * @example const view = extendContext(ctx, { uri: "file:///a.txt" });
 */
export function extendContext<E extends object>(ctx: Context, extra: E): Omit<Context, keyof E> & E {
  const view = new ContextView(ctx);
  for (const key of Object.keys(extra))
    Object.defineProperty(view, key, { value: (extra as { [key: string]: unknown })[key], enumerable: true });
  return view as unknown as Omit<Context, keyof E> & E;
}
