/** Finding a method for a request, and running it with its context in flight; errors → wire. */
import type { RequestContext } from "../context.js";
import type { Declared, ServerCore } from "../core.js";
import { InputRequiredSignal } from "../eras/input.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Era, Method } from "../extension.js";
import { callerKey } from "../limits/key.js";
import {
  type Awaitable,
  isObject,
  isPromiseLike,
  type JsonRpcErrorObject,
  type RequestId,
} from "../types.js";
import type { HandleOptions } from "./incoming.js";

/**
 * What running a method gave: its result itself (an object of the method's; no record around it, one
 * less per request), or its error in a `Failure`, which no method returns.
 */
export type Outcome = Result | Failure;
type Result = { [key: string]: unknown };

/** A method's error, as the client gets it. */
export class Failure {
  readonly error: JsonRpcErrorObject;
  constructor(error: JsonRpcErrorObject) {
    this.error = error;
  }
}

/**
 * Runs `method` for the request of `ctx` with `ctx` registered as in flight (the signal of its
 * transport's `options` aborting it), once the governor admits it (its caller's share of requests in
 * flight, its rates);
 * undefined when it was cancelled (never answered). A method that answers synchronously is done
 * synchronously: no promise, no microtask.
 */
export function execute(
  core: ServerCore,
  options: HandleOptions,
  method: Method,
  ctx: RequestContext,
  served: ReadonlySet<string>,
): Awaitable<Outcome | undefined> {
  const key = callerKey(ctx.auth, ctx.connection);
  ctx.governor = core.governor;
  const refused = core.governor.admit(key, ctx.method, ctx.params);
  if (refused === undefined) return start(core, options, method, ctx, served);
  if (!isPromiseLike(refused)) return new Failure(toErrorObject(core, refused, ctx.method, ctx.requestId));
  return refused.then((r) =>
    r === undefined
      ? start(core, options, method, ctx, served)
      : new Failure(toErrorObject(core, r, ctx.method, ctx.requestId)),
  );
}

function start(
  core: ServerCore,
  options: HandleOptions,
  method: Method,
  ctx: RequestContext,
  served: ReadonlySet<string>,
): Awaitable<Outcome | undefined> {
  const outer = options.signal;
  const id = ctx.requestId;
  const conn = ctx.connection;
  const { method: name, params } = ctx;
  const onOuterAbort = outer && (() => ctx.abort(outer.reason));
  if (onOuterAbort) outer!.addEventListener("abort", onOuterAbort, { once: true });
  let result: unknown;
  try {
    // a method no served extension wraps is called directly: no closure for the mechanism
    result = core.extensions.wraps(name, served)
      ? core.extensions.run(name, params, ctx, served, (c) => method.run(params, c))
      : method.run(params, ctx);
  } catch (error) {
    return settle(ctx, outer, onOuterAbort, failed(core, error, ctx));
  }
  if (!isPromiseLike(result)) return settle(ctx, outer, onOuterAbort, resulting(core, result, ctx));
  // in flight from here: nothing could cancel the synchronous part, and a request that ends in it is
  // never written into the connection's table (whose churn is old-generation garbage)
  if (conn.closed) ctx.abort(new Error("The connection is closed"));
  else conn.inflight.set(id, ctx);
  // counted from here too: a synchronous request is over before any other could be admitted
  const governor = core.governor;
  const key = callerKey(ctx.auth, ctx.connection); // again: the synchronous path needs it no further than admission
  governor.add("requests", key, 1);
  const over = (outcome: Outcome) => {
    governor.give("requests", key);
    return settle(ctx, outer, onOuterAbort, outcome);
  };
  return Promise.resolve(result).then(
    (r) => over(resulting(core, r, ctx)),
    (error) => over(failed(core, error, ctx)),
  );
}

/** The request is done: out of flight, and answered unless it was cancelled. */
function settle(
  ctx: RequestContext,
  outer: AbortSignal | undefined,
  onOuterAbort: (() => void) | undefined,
  outcome: Outcome,
): Outcome | undefined {
  ctx.done = true;
  const conn = ctx.connection;
  if (onOuterAbort) outer!.removeEventListener("abort", onOuterAbort);
  if (conn.inflight.get(ctx.requestId) === ctx) conn.inflight.delete(ctx.requestId);
  // a handler that closed the connection in its synchronous part is not answered, as one in flight
  else if (conn.closed) ctx.abort(new Error("The connection is closed"));
  return ctx.aborted ? undefined : outcome;
}

/**
 * What a method gave, as the client gets it: an object (not an array) is its result; anything else
 * (`undefined`, a string, an array) is a mistake of the method, -32603 to the client and reported to
 * `onError` with what it was. A request that ended otherwise (cancelled, or `ctx.end` answered it)
 * is never answered again, so what its method returns then is not looked at.
 */
function resulting(core: ServerCore, result: unknown, ctx: RequestContext): Outcome {
  if (isObject(result) || ctx.aborted) return result as Result;
  const what = result === null ? "null" : Array.isArray(result) ? "an array" : typeof result;
  const error = new TypeError(`${ctx.method} returned ${what}: a method's result must be an object`);
  return new Failure(toErrorObject(core, error, ctx.method, ctx.requestId));
}

/** A method that threw: a call that waits for the client's input ends the run, not a failure of the handler. */
function failed(core: ServerCore, error: unknown, ctx: RequestContext): Outcome {
  if (error instanceof InputRequiredSignal)
    return new Failure({ code: ErrorCode.InternalError, message: error.message });
  if (error instanceof McpError) return new Failure(toErrorObject(core, error, ctx.method, ctx.requestId));
  // what the request was about, for onError: the URI it names (a read), or the tool or prompt
  const about: { uri?: string; name?: string } = {};
  if (typeof ctx.params.uri === "string") about.uri = ctx.params.uri;
  else if (typeof ctx.params.name === "string") about.name = ctx.params.name;
  return new Failure(toErrorObject(core, error, ctx.method, ctx.requestId, about));
}

/**
 * The method `name` as `declared` serves it in `era`: undefined when no served extension adds it,
 * when it belongs to the other era, or when the capabilities declared lack what it needs (-32601).
 */
export function lookup(
  core: ServerCore,
  name: string,
  declared: Declared,
  era: Exclude<Era, "both">,
): Method | undefined {
  const method = core.extensions.method(name, declared.extensions);
  if (!method || (method.era !== "both" && method.era !== era)) return undefined;
  return method.when === undefined || method.when(declared.capabilities) ? method : undefined;
}

/** What the client gets for a thrown value: an `McpError` as it is; anything else a generic -32603. */
export function toErrorObject(
  core: ServerCore,
  error: unknown,
  method: string,
  requestId: RequestId,
  about?: { uri?: string; name?: string },
): JsonRpcErrorObject {
  if (error instanceof McpError) {
    const out: JsonRpcErrorObject = { code: error.code, message: error.message };
    if (error.data !== undefined) out.data = error.data;
    return out;
  }
  core.reportError(error, { method, requestId, ...about });
  return { code: ErrorCode.InternalError, message: "Internal error" };
}
