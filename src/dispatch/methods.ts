/** The method table, shared by both eras, and running one method with its context in flight. */
import type { Connection } from "../connection.js";
import type { RequestContext } from "../context.js";
import type { ServerCore } from "../core.js";
import { InputRequiredSignal } from "../eras/input.js";
import type { Features } from "../eras/versions.js";
import { ErrorCode, McpError } from "../errors.js";
import {
  type Awaitable,
  isPromiseLike,
  type JsonRpcErrorObject,
  type RequestId,
  type ServerCapabilities,
} from "../types.js";

/** A request's params. */
export type Params = { [key: string]: unknown };
type Capability = keyof ServerCapabilities | "subscribe" | "listen";
/** One entry of the method table. */
export interface Method {
  /** The server capability the method belongs to: without it the method does not exist (-32601). */
  readonly capability?: Capability;
  /** Only in this era; the other answers -32601. Default: both. */
  readonly era?: "legacy" | "modern";
  /** 2026-07-28: the method may answer `input_required` (its handler may ask the client). */
  readonly input?: true;
  run(core: ServerCore, params: Params, ctx: RequestContext, conn: Connection): unknown;
}

/** The empty result (and empty params). */
export const EMPTY = Object.freeze({});

/** The method table of both eras; a Map, so that a name from the wire ("constructor") never reaches Object.prototype. */
export const methods = new Map<string, Method>([
  ["tools/list", { capability: "tools", run: (c, p, ctx) => c.listTools(p, ctx) }],
  ["tools/call", { capability: "tools", input: true, run: (c, p, ctx) => c.callTool(p, ctx) }],
  ["prompts/list", { capability: "prompts", run: (c, p, ctx) => c.listPrompts(p, ctx) }],
  ["prompts/get", { capability: "prompts", input: true, run: (c, p, ctx) => c.getPrompt(p, ctx) }],
  ["resources/list", { capability: "resources", run: (c, p, ctx) => c.listResources(p, ctx) }],
  [
    "resources/templates/list",
    { capability: "resources", run: (c, p, ctx) => c.listResourceTemplates(p, ctx) },
  ],
  ["resources/read", { capability: "resources", input: true, run: (c, p, ctx) => c.readResource(p, ctx) }],
  [
    "resources/subscribe",
    { capability: "subscribe", era: "legacy", run: (c, p, ctx, conn) => c.subscribe(p, ctx, conn) },
  ],
  [
    "resources/unsubscribe",
    { capability: "subscribe", era: "legacy", run: (c, p, _ctx, conn) => c.unsubscribe(p, conn) },
  ],
  ["completion/complete", { capability: "completions", run: (c, p, ctx) => c.complete(p, ctx) }],
  [
    "logging/setLevel",
    { capability: "logging", era: "legacy", run: (c, p, _ctx, conn) => c.setLevel(p, conn) },
  ],
  ["server/discover", { era: "modern", run: (c, _p, ctx) => c.discover(ctx) }],
  [
    "subscriptions/listen",
    { capability: "listen", era: "modern", run: (c, p, ctx, conn) => c.listen(p, ctx, conn) },
  ],
]);

/** The method `name` for revision `f`: the core table's, else an extension's (to a session: one it was `told` of). */
export function lookup(
  core: ServerCore,
  name: string,
  f: Features,
  told?: ReadonlySet<string>,
): Method | undefined {
  const own = methods.get(name);
  if (own) return own;
  const ext = core.extensions.method(name, f, told);
  if (!ext) return undefined;
  const run: Method["run"] = (_c, p, ctx) => ext.run(p, ctx);
  return ext.era ? { era: ext.era, run } : { run };
}

/** Whether `v` is a JSON object. */
/** What running a method gave: its result or its error. */
export type Outcome = { result: Result } | { error: JsonRpcErrorObject };
type Result = { [key: string]: unknown };

/**
 * Runs a method with `ctx` registered as in flight; undefined when the request was cancelled (never
 * answered). A method that answers synchronously is done synchronously: no promise, no microtask.
 */
export function execute(
  core: ServerCore,
  method: Method,
  name: string,
  params: Params,
  ctx: RequestContext,
  conn: Connection,
  outer: AbortSignal | undefined,
): Awaitable<Outcome | undefined> {
  const id = ctx.requestId;
  const onOuterAbort = outer && (() => ctx.abort(outer.reason));
  if (onOuterAbort) outer!.addEventListener("abort", onOuterAbort, { once: true });
  let result: unknown;
  try {
    // a method no served extension wraps is called directly: no closure for the mechanism
    const told = ctx.features.modern ? undefined : conn.servedExtensions;
    result = core.extensions.wraps(name, ctx.features, told)
      ? core.extensions.run(name, params, ctx, () => method.run(core, params, ctx, conn), told)
      : method.run(core, params, ctx, conn);
  } catch (error) {
    return settle(ctx, conn, outer, onOuterAbort, failed(core, error, name, id));
  }
  if (!isPromiseLike(result)) return settle(ctx, conn, outer, onOuterAbort, { result: result as Result });
  // in flight from here: nothing could cancel the synchronous part, and a request that ends in it is
  // never written into the connection's table (whose churn is old-generation garbage)
  if (conn.closed) ctx.abort(new Error("The connection is closed"));
  else conn.inflight.set(id, ctx);
  return Promise.resolve(result).then(
    (r) => settle(ctx, conn, outer, onOuterAbort, { result: r as Result }),
    (error) => settle(ctx, conn, outer, onOuterAbort, failed(core, error, name, id)),
  );
}

/** The request is done: out of flight, and answered unless it was cancelled. */
function settle(
  ctx: RequestContext,
  conn: Connection,
  outer: AbortSignal | undefined,
  onOuterAbort: (() => void) | undefined,
  outcome: Outcome,
): Outcome | undefined {
  ctx.done = true;
  if (onOuterAbort) outer!.removeEventListener("abort", onOuterAbort);
  if (conn.inflight.get(ctx.requestId) === ctx) conn.inflight.delete(ctx.requestId);
  // a handler that closed the connection in its synchronous part is not answered, as one in flight
  else if (conn.closed) ctx.abort(new Error("The connection is closed"));
  return ctx.aborted ? undefined : outcome;
}

/** A method that threw: a call that waits for the client's input ends the run, not a failure of the handler. */
function failed(core: ServerCore, error: unknown, name: string, id: RequestId): Outcome {
  return {
    error:
      error instanceof InputRequiredSignal
        ? { code: ErrorCode.InternalError, message: error.message }
        : toErrorObject(core, error, name, id),
  };
}

/** Whether `caps` holds the capability a method belongs to. */
export function hasCapability(caps: ServerCapabilities, capability: Capability | undefined): boolean {
  if (capability === undefined) return true;
  if (capability === "subscribe") return caps.resources?.subscribe === true;
  if (capability === "listen")
    return !!(
      caps.tools?.listChanged ||
      caps.prompts?.listChanged ||
      caps.resources?.listChanged ||
      caps.resources?.subscribe
    );
  return caps[capability] !== undefined;
}

/** What the client gets for a thrown value: an `McpError` as it is; anything else a generic -32603. */
export function toErrorObject(
  core: ServerCore,
  error: unknown,
  method: string,
  requestId: RequestId,
): JsonRpcErrorObject {
  if (error instanceof McpError) {
    const out: JsonRpcErrorObject = { code: error.code, message: error.message };
    if (error.data !== undefined) out.data = error.data;
    return out;
  }
  core.reportError(error, { method, requestId });
  return { code: ErrorCode.InternalError, message: "Internal error" };
}
