/** A Lua script run by its digest: loaded on first use, and again when Redis forgot it (a restart, `SCRIPT FLUSH`). */
import type { RedisClient } from "./client.js";

/** One Lua script of picomcp/redis; one round trip a run, two when Redis must learn it first. */
export class Script {
  readonly #source: string;
  #sha: string | undefined;

  constructor(source: string) {
    this.#source = source;
  }

  /** Runs the script on `client` with `keys` and `args`. */
  async run(client: RedisClient, keys: string[], args: string[]): Promise<unknown> {
    const options = { keys, arguments: args };
    if (this.#sha !== undefined) {
      try {
        return await client.evalSha(this.#sha, options);
      } catch (error) {
        if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
      }
    }
    this.#sha = String(await client.scriptLoad(this.#source));
    return await client.evalSha(this.#sha, options);
  }
}
