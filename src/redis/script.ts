/** A Lua script run by its digest: loaded on first use, and again after Redis forgot it (a restart). */
import type { RedisClient } from "./client.js";

/** One script of picomcp/redis, on one client. */
export class Script {
  readonly #client: RedisClient;
  readonly #source: string;
  #sha: string | undefined;

  constructor(client: RedisClient, source: string) {
    this.#client = client;
    this.#source = source;
  }

  /** Runs the script; rejects as the command does. */
  async run(keys: string[], args: string[]): Promise<unknown> {
    const options = { keys, arguments: args };
    if (this.#sha !== undefined) {
      try {
        return await this.#client.evalSha(this.#sha, options);
      } catch (error) {
        if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
      }
    }
    this.#sha = String(await this.#client.scriptLoad(this.#source));
    return await this.#client.evalSha(this.#sha, options);
  }
}
