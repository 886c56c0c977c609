/** A Lua script run by its digest, and by its source on a node that does not know it yet (one that restarted, `SCRIPT FLUSH`, another node of a cluster). */
import type { RedisClient } from "./client.js";

const hex = (bytes: ArrayBuffer) =>
  Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

/**
 * One Lua script of picomcp/redis: one round trip a run, two where the node must learn it first. EVAL
 * teaches the node that runs it (the one of its keys, on a cluster), so no SCRIPT LOAD goes to a node
 * that is not the one asked.
 */
export class Script {
  readonly source: string;
  #sha: string | undefined;

  constructor(source: string) {
    this.source = source;
    // the digest EVALSHA names, computed once (Web Crypto: every runtime has it)
    void crypto.subtle.digest("SHA-1", new TextEncoder().encode(source)).then((d) => {
      this.#sha = hex(d);
    });
  }

  /** Runs the script on `client` with `keys` and `args`. */
  async send(client: RedisClient, keys: string[], args: string[]): Promise<unknown> {
    const options = { keys, arguments: args };
    if (this.#sha !== undefined) {
      try {
        return await client.evalSha(this.#sha, options);
      } catch (error) {
        if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
      }
    }
    return await client.EVAL(this.source, options);
  }
}
