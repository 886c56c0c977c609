/**
 * The remote's resource subscriptions, as the proxy holds them: `resources/subscribe` and
 * `resources/unsubscribe` with a 2025 remote, one listen naming every URI with a 2026-07-28 one (opened
 * anew when the set changes, closed when it is empty). One change at a time, in the order asked, so the
 * remote ends as the last change left it; renewed after a reconnect.
 */

import type { Client, McpSubscription } from "@modelcontextprotocol/client";

export class RemoteSubscriptions {
  /** The URIs the remote is subscribed to for the proxy. */
  readonly uris = new Set<string>();
  /** A 2026-07-28 remote's listen for {@link uris}. */
  #listen: McpSubscription | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  /** Runs `step` after the changes asked before it. */
  #next<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(step, step);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Subscribes `client`'s remote to those of `uris` it is not subscribed to; `subscribe1` asks a 2025 remote for one. */
  add(client: Client, uris: readonly string[], subscribe1: (uri: string) => Promise<unknown>): Promise<void> {
    return this.#next(async () => {
      const fresh = [...new Set(uris)].filter((uri) => !this.uris.has(uri));
      if (fresh.length === 0) return;
      if (client.getProtocolEra() !== "modern") {
        for (const uri of fresh) {
          await subscribe1(uri);
          this.uris.add(uri);
        }
        return;
      }
      for (const uri of fresh) this.uris.add(uri);
      try {
        await this.#relisten(client);
      } catch (error) {
        for (const uri of fresh) this.uris.delete(uri);
        throw error;
      }
    });
  }

  /** Unsubscribes the remote from those of `uris` it is subscribed to (`client` undefined while it is down: forgotten only). */
  remove(client: Client | undefined, uris: readonly string[]): Promise<void> {
    return this.#next(async () => {
      const gone = uris.filter((uri) => this.uris.delete(uri));
      if (gone.length === 0 || !client) return;
      if (client.getProtocolEra() !== "modern") {
        for (const uri of gone) await client.unsubscribeResource({ uri });
        return;
      }
      await this.#relisten(client);
    });
  }

  /** After a reconnect: subscribes the new connection to every URI again. */
  renew(client: Client, onError: (error: unknown) => void): Promise<void> {
    this.#listen = undefined;
    return this.#next(async () => {
      if (client.getProtocolEra() === "modern") {
        if (this.uris.size > 0) await this.#relisten(client).catch(onError);
        return;
      }
      for (const uri of this.uris) await client.subscribeResource({ uri }).catch(onError);
    });
  }

  async close(): Promise<void> {
    await this.#listen?.close().catch(() => {});
  }

  /** Opens a listen for every URI (none when empty), then closes the one it replaces. */
  async #relisten(client: Client): Promise<void> {
    const before = this.#listen;
    this.#listen =
      this.uris.size > 0 ? await client.listen({ resourceSubscriptions: [...this.uris] }) : undefined;
    await before?.close().catch(() => {});
  }
}
