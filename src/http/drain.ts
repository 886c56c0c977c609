/**
 * Draining a handler before its process goes away: refusing new requests so that their clients retry
 * on another instance, counting the requests in flight, and waiting until they are over or the grace
 * period has passed.
 */
import { httpError, SERVER_ERROR } from "./answers.js";
import { type Answer, Reply } from "./reply.js";

/** The seconds a client refused during a drain waits before it retries (on another instance). */
const RETRY_AFTER_S = "1";

/** What a request that arrives during a drain is answered: 503, `Retry-After`, `Connection: close`. */
export function drainingReply(): Reply {
  return httpError(
    503,
    SERVER_ERROR,
    "Service Unavailable: this server is shutting down; retry the request (another instance serves it)",
    undefined,
    { "retry-after": RETRY_AFTER_S, connection: "close" },
  );
}

/** An answer given during a drain, told to close its connection: the client's next request goes elsewhere. */
export function closing(answer: Answer): Answer {
  if (!(answer instanceof Reply) || answer.headers.connection === "close") return answer;
  return new Reply(answer.status, { ...answer.headers, connection: "close" }, answer.body);
}

/** The drain state of one handler: whether it drains, and how many requests it is answering. */
export class Drain {
  #draining = false;
  #inflight = 0;
  #wake: (() => void) | undefined;

  /** Whether the drain has begun (readiness is off from then on). */
  get draining(): boolean {
    return this.#draining;
  }

  /** A request is being answered. */
  enter(): void {
    this.#inflight++;
  }

  /** A request has its answer (a stream it opened is counted by the streams). */
  leave(): void {
    this.#inflight--;
    this.changed();
  }

  /** Something that a drain waits for has ended. */
  changed(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /**
   * Drains: `begin` ends what does not wait (streams that a client resumes elsewhere), then the drain
   * waits until no request is being answered and `idle` holds (the grace period at most) while `tasks`
   * waits for the tasks of this process; then `end`.
   */
  async run(
    graceMs: number,
    steps: {
      begin(): void;
      idle(): boolean;
      tasks(signal: AbortSignal): Promise<void>;
      end(): void;
    },
  ): Promise<void> {
    this.#draining = true;
    steps.begin();
    const grace = new AbortController();
    const timer = setTimeout(() => grace.abort(), graceMs);
    const tasks = steps.tasks(grace.signal);
    await this.settled(steps.idle, grace.signal);
    await tasks;
    clearTimeout(timer);
    steps.end();
  }

  /** Resolves once no request is being answered and `idle()` holds, or once `signal` aborts. */
  async settled(idle: () => boolean, signal: AbortSignal): Promise<void> {
    const aborted = new Promise<void>((resolve) =>
      signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    while (!signal.aborted && (this.#inflight > 0 || !idle())) {
      await Promise.race([new Promise<void>((resolve) => (this.#wake = resolve)), aborted]);
    }
  }
}
