/** What both exchanges share: the message run on its connection, its one answer, and a cancel. */
import type { Connection } from "../connection.js";
import type { HandleOptions } from "../dispatch/envelope.js";
import type { McpServer } from "../server.js";
import { type Awaitable, isPromiseLike, type JsonRpcMessage, type JsonRpcResponse } from "../types.js";
import type { Running } from "./drain.js";
import type { Answer } from "./reply.js";
import { whenGone } from "./request.js";

/**
 * Cancels what a connection of its own runs for a client that went away, as aborting a signal
 * given with `options` would (an `AbortError`), without a signal made for the many that stay: the
 * requests running are aborted, and one still on its way to its handler (past an await, not yet
 * registered) finds the aborted signal that dispatch looks at before it starts.
 */
function cancelRequests(connection: Connection, options: HandleOptions): void {
  const reason = new DOMException("This operation was aborted", "AbortError");
  options.signal = AbortSignal.abort(reason);
  connection.inflight.abortEach(reason);
}

/**
 * What both exchanges (a POST of the 2025 revisions, a 2026-07-28 request) share: the message run on
 * its connection, the one answer it gets (the first one given, returned as it is when it came at once),
 * and a cancel that aborts what it runs.
 */
export abstract class OneExchange implements Running {
  /** Its own connection (closed with it), or undefined on a session's. */
  readonly connection: Connection | undefined;
  slot = -1;
  /** Its answer was given: nothing more is sent. */
  protected over = false;
  protected cancelled = false;
  protected readonly options: HandleOptions;
  /** The connection it runs on: its own, or its session's. */
  protected readonly runsOn: Connection;
  #answered: Answer | undefined;
  #late: ((answer: Answer) => void) | undefined;

  protected constructor(connection: Connection, own: boolean, stateless: boolean) {
    this.runsOn = connection;
    this.connection = own ? connection : undefined;
    const send = (m: JsonRpcMessage) => this.send(m);
    this.options = stateless ? { send, stateless: true } : { send };
  }

  /** Past a drain's grace: answered at once (its handler's end comes after). */
  abstract cut(): void;

  /** A message related to the request (progress, a log, a question): it turns the answer to SSE. */
  protected abstract send(message: JsonRpcMessage): void;

  /** The handler's answer; undefined when there is none (it failed, or was cancelled). */
  protected abstract finish(answer: JsonRpcResponse | JsonRpcResponse[] | undefined): void;

  /**
   * Runs `message`, carried by `request` (for telemetry; `watch`: a client gone cancels it), and gives
   * its answer: at once when the handler gave it at once, else a promise of it.
   */
  protected start(server: McpServer, message: unknown, request: Request, watch: boolean): Awaitable<Answer> {
    const options = this.options;
    if (server.observer) options.carrier = request;
    // a client already gone: nothing runs, as for an aborted signal
    if (watch && whenGone(request, () => this.cancel())) options.signal = AbortSignal.abort();
    let out: ReturnType<McpServer["handleNow"]>;
    try {
      out = server.handleNow(message, this.runsOn, options);
    } catch {
      out = undefined;
    }
    if (isPromiseLike(out))
      out.then(
        (answer) => this.finish(answer),
        () => this.finish(undefined),
      );
    else this.finish(out);
    return this.#answered ?? new Promise<Answer>((resolve) => (this.#late = resolve));
  }

  /** Gives the answer; only the first counts. */
  protected reply(answer: Answer): void {
    if (this.#answered) return;
    this.#answered = answer;
    this.#late?.(answer);
  }

  /** Aborts what it runs (the client went away); once, and not after its answer. */
  protected cancel(): void {
    if (this.cancelled || this.over) return;
    this.cancelled = true;
    cancelRequests(this.runsOn, this.options);
  }
}
