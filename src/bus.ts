/**
 * Change events (list changed, resource updated) travel through a bus, so that several server
 * instances can reach each other's clients through a shared one (Redis, say) without any change to
 * handlers. The default bus is in-process.
 */

/** A change that clients may need to hear about. */
export type ChangeEvent =
  | { type: "list_changed"; kind: "tools" | "resources" | "prompts" }
  | { type: "resource_updated"; uri: string }
  /** A task changed (the tasks extension): its detailed task, and the principal it belongs to. */
  | { type: "task"; task: { taskId: string; [key: string]: unknown }; owner?: string };

/** Carries change events between the places that cause them and the connections that hear them. */
export interface ChangeBus {
  /** Publishes an event to every subscriber, in this process and, for a shared bus, in others. */
  publish(event: ChangeEvent): void;
  /**
   * Subscribes to events from the next one on; returns the unsubscribe function, after which the
   * listener is never called again. A listener that throws keeps the event from no other.
   */
  subscribe(listener: (event: ChangeEvent) => void): () => void;
}

/** The in-process bus. */
export class LocalBus implements ChangeBus {
  readonly #listeners = new Set<(event: ChangeEvent) => void>();

  publish(event: ChangeEvent): void {
    // a listener subscribed during this delivery hears from the next event on (iterating the live
    // set would call it now, and one that resubscribes itself each time would loop forever); one
    // unsubscribed meanwhile is skipped: once unsubscribe returns, it is never called again
    for (const listener of [...this.#listeners]) {
      if (!this.#listeners.has(listener)) continue;
      try {
        listener(event);
      } catch {
        // one failing listener must not keep the event from the others
      }
    }
  }

  subscribe(listener: (event: ChangeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
