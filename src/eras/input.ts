/**
 * One round of a 2026-07-28 multi-round-trip request. The server may not send requests to the
 * client, so `ctx.elicit`, `ctx.sample` and `ctx.roots` look their answer up here: an answer the
 * client gave (in `inputResponses`, or sealed in `requestState` from an earlier round) resolves the
 * call; a missing one is recorded as an input request, and the handler's run ends in an
 * `InputRequiredResult` the client answers by retrying.
 */

/** An input request of an `InputRequiredResult`. */
export interface InputRequest {
  readonly method: "elicitation/create" | "sampling/createMessage" | "roots/list";
  readonly params: { readonly [key: string]: unknown };
}

/** The handle of a running task (see `ctx.task()`). */
export interface TaskHandle {
  /** The task's id, as the client sees it. */
  readonly taskId: string;
  /** Sets the task's `statusMessage` (what `tasks/get` shows while it works). */
  status(message: string): Promise<void>;
}

/** Why a call to the client did not resolve: its answer is requested from the client (not an error to catch). */
export class InputRequiredSignal extends Error {
  /** The input request's key. */
  readonly key: string;
  constructor(key: string) {
    super(`Input required (${key}): the handler runs again when the client answers`);
    this.name = "InputRequiredSignal";
    this.key = key;
  }
}

type Answers = { [key: string]: unknown };

/** The key prefix of an input request made without a key, by method (`elicitation-1`, …). */
export const AUTO_KEY: { readonly [method: string]: string } = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

/** The answers known to one run of a handler and the input requests it made. */
export class InputRound {
  /** The handler's own value for `requestState` (see `ctx.setRequestState`). */
  state: unknown;
  #askedCount = 0;
  readonly #sealed: Answers;
  readonly #responses: Answers;
  // made on the first call to the client: most runs never make one
  #used: Answers | undefined;
  #asked: { [key: string]: InputRequest } | undefined;
  #calls: Map<string, number> | undefined;

  /** `sealed`: answers of earlier rounds (from `requestState`); `responses`: this retry's `inputResponses`. */
  constructor(sealed: Answers, responses: Answers, state: unknown) {
    this.#sealed = sealed;
    this.#responses = responses;
    this.state = state;
  }

  /** Answers the handler used, by key: sealed into the next `requestState`. */
  get used(): Answers {
    this.#used ??= Object.create(null) as Answers;
    return this.#used;
  }

  /** The input requests still unanswered, by key. */
  get asked(): { [key: string]: InputRequest } {
    this.#asked ??= Object.create(null) as { [key: string]: InputRequest };
    return this.#asked;
  }

  /** Whether the run asked for anything it has no answer to. */
  get incomplete(): boolean {
    return this.#askedCount > 0;
  }

  /** The key of a call without one: the method's name and the call's position (`elicitation-1`, …). */
  autoKey(method: string): string {
    this.#calls ??= new Map();
    const n = (this.#calls.get(method) ?? 0) + 1;
    this.#calls.set(method, n);
    return `${AUTO_KEY[method] ?? method}-${n}`;
  }

  /**
   * The answer under `key` that `accept` takes, or undefined (then the request is recorded). A
   * malformed answer counts as none: the client is asked again.
   */
  answer<T>(key: string, request: InputRequest, accept: (value: unknown) => T | undefined): T | undefined {
    for (const source of [this.#sealed, this.#responses]) {
      if (!Object.hasOwn(source, key)) continue;
      const value = accept(source[key]);
      if (value !== undefined) {
        this.used[key] = source[key];
        return value;
      }
    }
    const asked = this.asked;
    if (!Object.hasOwn(asked, key)) {
      asked[key] = request;
      this.#askedCount++;
    }
    return undefined;
  }
}

/**
 * A rejection that does not count as unhandled: a handler that starts several calls and awaits the
 * first (which ends its run) leaves the others rejected, and that must not bring the process down.
 */
export function refuse<T>(error: Error): Promise<T> {
  return quiet(Promise.reject<T>(error));
}

/** `p`, its rejection not counted as unhandled (see {@link refuse}): whoever awaits it still gets it. */
export function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

type Answer = { [key: string]: unknown };

function isRecord(v: unknown): v is Answer {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `r` when it is a well-formed elicitation answer, else undefined. */
export function isElicitAnswer(r: unknown): Answer | undefined {
  if (!isRecord(r) || (r.action !== "accept" && r.action !== "decline" && r.action !== "cancel"))
    return undefined;
  return r.content === undefined || isRecord(r.content) ? r : undefined;
}

/** An initialize-era answer to `elicitation/create`: `r` when its action is one of the three, else a throw. */
export function checkElicitAnswer(r: Answer): Answer {
  if (r.action !== "accept" && r.action !== "decline" && r.action !== "cancel")
    throw new Error("The client answered elicitation/create with a malformed result");
  return r;
}

/** `r` when it is a well-formed sampling answer, else undefined. */
export function isSampleAnswer(r: unknown): Answer | undefined {
  if (!isRecord(r) || typeof r.model !== "string" || (r.role !== "assistant" && r.role !== "user"))
    return undefined;
  return r.content === undefined ? undefined : r;
}

/** The roots of a well-formed `roots/list` answer, else undefined. */
export function rootsOfAnswer(r: unknown): unknown[] | undefined {
  return isRecord(r) && Array.isArray(r.roots) ? r.roots : undefined;
}
