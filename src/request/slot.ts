/** Per-request state an extension owns: a slot is declared once, each request holds its own value. */
/**
 * A piece of per-request state that an extension owns (see `requestSlot`): each request holds its
 * own value, for a wrapper and the method it wraps to share.
 */
export interface RequestSlot<T> {
  /** A request slot, never a session slot (`ctx.get` and `ctx.set` take only this kind). */
  readonly kind: "request";
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
  return Object.freeze({ kind: "request", name, init });
}

/**
 * `slot`, when it is of `kind`; else a TypeError naming it (a session slot given to `ctx.get` from
 * untyped code, say), where the types would have refused it.
 */
export function ofKind<S extends { readonly kind: string }>(slot: S, kind: S["kind"]): S {
  if (slot?.kind === kind) return slot;
  const name = (slot as { name?: unknown } | undefined)?.name;
  throw new TypeError(
    `${name === undefined ? String(slot) : `Slot ${String(name)}`} is not a ${kind} slot: ${
      kind === "request" ? "ctx.get and ctx.set take a requestSlot" : "ctx.sessionState takes a sessionSlot"
    }`,
  );
}
