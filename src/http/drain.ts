/**
 * Draining a handler before its process goes away: refusing new requests so that their clients retry
 * on another instance, counting the requests in flight, and waiting until they are over or the grace
 * period has passed.
 */
import type { Connection } from "../connection.js";
import type { Features } from "../eras/versions.js";
import { ErrorCode } from "../errors.js";
import { encodeMessage, errorResponse } from "../jsonrpc.js";
import type { RequestId } from "../types.js";
import { httpError, SERVER_ERROR } from "./answers.js";
import { type Answer, Reply } from "./reply.js";

/** Milliseconds past the grace that the failures of the tasks left may take to reach the store. */
const LATE_MS = 1000;

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

/**
 * What a request the drain cancelled past its grace is answered (it had no answer yet): 503 without
 * `Retry-After` (it may have had effects: not one to retry blindly), and the request's id; a batch
 * (`ids` an array) gets one error for each of its requests.
 */
export function cutReply(ids: RequestId | undefined | readonly RequestId[], features?: Features): Reply {
  const body = Array.isArray(ids)
    ? `[${ids.map((id) => cutError(id, features)).join(",")}]`
    : cutError(ids as RequestId | undefined, features);
  return new Reply(503, CUT_HEADERS, body);
}

/** The JSON-RPC error a request the drain cut short is answered, encoded: the last event of its stream, when it had one. */
export function cutError(id: RequestId | undefined, features?: Features): string {
  return encodeMessage(errorResponse(id, { code: ErrorCode.InternalError, message: CUT }, features));
}

const CUT = "Service Unavailable: the server shut down before the request finished";
const CUT_HEADERS = Object.freeze({ "content-type": "application/json", connection: "close" });

/** An answer given during a drain, told to close its connection: the client's next request goes elsewhere. */
export function closing(answer: Answer): Answer {
  if (answer instanceof Reply) {
    if (answer.headers.connection === "close") return answer;
    return new Reply(answer.status, { ...answer.headers, connection: "close" }, answer.body);
  }
  const headers = new Headers(answer.headers);
  headers.set("connection", "close");
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
}

/**
 * A request in flight that a drain can cut short past its grace: it then answers at once with the cut
 * error. `connection` is its own connection when it belongs to no session (2026-07-28, `sessions:
 * false`): a drain ends it gracefully when it begins, and closes it past the grace.
 */
export interface Running {
  readonly connection: Connection | undefined;
  cut(): void;
  /** Where the drain keeps it (-1: not kept); the drain's alone. */
  slot: number;
}

/** The drain state of one handler: whether it drains, and how many requests it is answering. */
export class Drain {
  // the requests in flight, in slots reused as they end: a request costs the list no allocation
  readonly #running: (Running | undefined)[] = [];
  readonly #free: number[] = [];
  /** Whether the grace is over and the requests still running were cancelled. */
  cut = false;
  #draining = false;
  #inflight = 0;
  #wake: (() => void) | undefined;

  /** Keeps a request in flight until {@link untrack}: cut short past the grace. */
  track(running: Running): void {
    const slot = this.#free.pop() ?? this.#running.length;
    running.slot = slot;
    this.#running[slot] = running;
  }

  /** The request is over (or was cut): no longer kept. */
  untrack(running: Running): void {
    const slot = running.slot;
    if (slot < 0 || this.#running[slot] !== running) return;
    this.#running[slot] = undefined;
    this.#free.push(slot);
    running.slot = -1;
  }

  /** The requests in flight now. */
  running(): Running[] {
    const out: Running[] = [];
    for (const r of this.#running) if (r !== undefined) out.push(r);
    return out;
  }

  /** The connections of their own of the requests in flight now (those of no session). */
  connections(): Connection[] {
    const out: Connection[] = [];
    for (const r of this.#running) if (r?.connection !== undefined) out.push(r.connection);
    return out;
  }

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
    // the tasks end, or once the grace is over they are failed in the store: a store that cannot be
    // reached within a second more leaves them to their lease
    let late: ReturnType<typeof setTimeout> | undefined;
    const over = new Promise<void>((resolve) => {
      const wait = () => (late = setTimeout(resolve, LATE_MS));
      if (grace.signal.aborted) wait();
      else grace.signal.addEventListener("abort", wait, { once: true });
    });
    await Promise.race([tasks, over]);
    clearTimeout(timer);
    clearTimeout(late);
    this.cut = true;
    for (const r of this.running()) r.cut();
    for (const connection of this.connections()) connection.close();
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
