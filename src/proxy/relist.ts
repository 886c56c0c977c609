/**
 * Listing the remote's primitives again, coalesced per kind: one listing in flight, and a change heard
 * meanwhile marks it dirty so that exactly one more runs after it, however many changes came. A storm
 * of `list_changed` costs two listings per kind, and the list kept is always the newest listing's (an
 * older answer can never land after a newer one).
 */
export class Relister<K> {
  readonly #once: (kind: K) => Promise<void>;
  readonly #running = new Map<K, { done: Promise<void>; dirty: boolean }>();

  constructor(once: (kind: K) => Promise<void>) {
    this.#once = once;
  }

  /** Lists `kind` now, or once more after the listing in flight; resolves when the newest is kept. */
  run(kind: K): Promise<void> {
    const now = this.#running.get(kind);
    if (now) {
      now.dirty = true;
      return now.done;
    }
    const state = { done: Promise.resolve(), dirty: false };
    this.#running.set(kind, state);
    state.done = (async () => {
      try {
        do {
          state.dirty = false;
          await this.#once(kind);
        } while (state.dirty);
      } finally {
        this.#running.delete(kind);
      }
    })();
    return state.done;
  }
}
