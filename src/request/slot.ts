/** Per-request state an extension owns: a slot is declared once, each request holds its own value. */
/**
 * A piece of per-request state that an extension owns (see `requestSlot`): each request holds its
 * own value, for a wrapper and the method it wraps to share.
 */
export interface RequestSlot<T> {
  /** For error messages and debugging. */
  readonly name: string;
  /** Makes the value on first `ctx.get`; undefined: `ctx.get` gives undefined until `ctx.set`. */
  readonly init: (() => T) | undefined;
}

/**
 * Declares a per-request slot: `ctx.get(slot)` gives this request's value (made by `init` on first
 * use), `ctx.set(slot, value)` replaces it. A request that uses no slot pays nothing for them.
 * @example const started = requestSlot("started-at", () => Date.now());
 */
export function requestSlot<T>(name: string, init: () => T): RequestSlot<T>;
export function requestSlot<T>(name: string): RequestSlot<T | undefined>;
export function requestSlot<T>(name: string, init?: () => T): RequestSlot<T> {
  return Object.freeze({ name, init });
}
