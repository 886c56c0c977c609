/** The stateless request path (2026-07-28): per-request `_meta`, typed results, input rounds. */
import { type AuthInfo, type Connection, principalOf } from "../connection.js";
import { cacheOf, isPersonal, RequestContext } from "../context.js";
import type { ServerCore } from "../core.js";
import { InputRound } from "../eras/input.js";
import { completeResult, readStatelessMeta, type StatelessMeta, statelessError } from "../eras/stateless.js";
import { type Features, STATELESS_FEATURES } from "../eras/versions.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Method } from "../extension.js";
import { errorResponse } from "../jsonrpc.js";
import {
  type Awaitable,
  EMPTY,
  isObject,
  isPromiseLike,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type Params,
  type RequestId,
} from "../types.js";
import { execute, lookup, type Outcome, toErrorObject } from "./methods.js";

type Options = { send?: (message: JsonRpcMessage) => void; signal?: AbortSignal; auth?: AuthInfo };

/**
 * A stateless request: its revision, client and capabilities come from its own `_meta`, it leaves
 * no trace on the connection, and its answer says what kind of result it is. `now` (a transport's
 * `handleNow`): a method that may ask for input opens its round at once when there is no sealed
 * `requestState`, so a synchronous handler is answered synchronously; otherwise the round opens after
 * a tick, and a connection closed meanwhile runs nothing.
 */
export function statelessRequest(
  core: ServerCore,
  id: RequestId,
  name: string,
  params: Params,
  conn: Connection,
  options: Options,
  now = false,
): Awaitable<JsonRpcResponse | undefined> {
  let meta: StatelessMeta;
  try {
    meta = readStatelessMeta(params._meta);
  } catch (error) {
    return failure(core, id, name, error, STATELESS_FEATURES);
  }
  const f = meta.features;
  const declared = core.declared(f);
  // a server without the logging capability sends no log messages, whatever level the client asks for
  if (meta.logLevel !== undefined && !declared.capabilities.logging) meta = { ...meta, logLevel: undefined };
  // ping, initialize, logging/setLevel and resources/(un)subscribe do not exist in this revision
  const method = lookup(core, name, declared, "stateless");
  if (!method)
    return errorResponse(id, { code: ErrorCode.MethodNotFound, message: `Method not found: ${name}` }, f);
  const auth = options.auth ?? conn.auth;
  const call: Call = {
    core,
    id,
    name,
    params,
    conn,
    options,
    method,
    meta,
    served: declared.extensions,
    auth,
  };
  if (!method.input) return run(call, undefined);
  let round: Awaitable<InputRound>;
  try {
    round = openRound(core, name, params, auth, now);
  } catch (error) {
    return fail(call, error);
  }
  if (isPromiseLike(round))
    return round.then(
      (r) => run(call, r),
      (error) => fail(call, error),
    );
  return run(call, round);
}

function failure(
  core: ServerCore,
  id: RequestId,
  name: string,
  error: unknown,
  f: Features,
): JsonRpcResponse {
  return errorResponse(id, statelessError(toErrorObject(core, error, name, id)), f);
}

/** One stateless request on its way: run once its round is open, then answered. */
interface Call {
  readonly core: ServerCore;
  readonly id: RequestId;
  readonly name: string;
  readonly params: Params;
  readonly conn: Connection;
  readonly options: Options;
  readonly method: Method;
  readonly meta: StatelessMeta;
  /** The extensions served to its revision now. */
  readonly served: ReadonlySet<string>;
  readonly auth: AuthInfo | undefined;
}

function fail(call: Call, error: unknown): JsonRpcResponse {
  return failure(call.core, call.id, call.name, error, call.meta.features);
}

function run(call: Call, round: InputRound | undefined): Awaitable<JsonRpcResponse | undefined> {
  const { conn, id, meta } = call;
  const f = meta.features;
  // checked once the round is open, with none until `execute` registers this request: a twin sent
  // meanwhile is refused, and a connection closed meanwhile runs nothing
  const refused = conn.closed
    ? "the connection is closed"
    : conn.inflight.has(id)
      ? "a request with this id is still in flight"
      : undefined;
  if (refused !== undefined)
    return errorResponse(id, { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${refused}` }, f);
  if (call.options.signal?.aborted) return undefined;
  const ctx = new RequestContext({
    connection: conn,
    id,
    method: call.name,
    params: call.params,
    send: call.options.send,
    timeoutMs: call.core.requestTimeoutMs,
    client: Object.freeze({ protocolVersion: f.version, capabilities: meta.capabilities, info: meta.info }),
    features: f,
    auth: call.auth,
    stateless: { logLevel: meta.logLevel, input: round, complete: call.core.complete },
  });
  const outcome = execute(call.core, call.method, ctx, call.served, call.options.signal);
  return isPromiseLike(outcome)
    ? outcome.then((o) => answer(call, round, ctx, o))
    : answer(call, round, ctx, outcome);
}

function answer(
  call: Call,
  round: InputRound | undefined,
  ctx: RequestContext,
  outcome: Outcome | undefined,
): Awaitable<JsonRpcResponse | undefined> {
  if (outcome === undefined) return undefined;
  if (round?.incomplete) return inputRequired(call, round);
  if ("error" in outcome) return errorResponse(call.id, statelessError(outcome.error), call.meta.features);
  return {
    jsonrpc: "2.0",
    id: call.id,
    result: completeResult(outcome.result, call.core.serverMeta, cacheOf(ctx), isPersonal(ctx)),
  };
}

/** The handler asked the client: what it asked, with the answers so far sealed for the retry. */
async function inputRequired(call: Call, round: InputRound): Promise<JsonRpcResponse> {
  try {
    const requestState = await call.core.requestState.seal(
      { answers: round.used, state: round.state },
      call.name,
      call.params,
      principalOf(call.auth),
    );
    const result = {
      resultType: "input_required",
      inputRequests: round.asked,
      requestState,
      _meta: call.core.serverMeta,
    };
    return { jsonrpc: "2.0", id: call.id, result };
  } catch (error) {
    return fail(call, error);
  }
}

/**
 * The answers a retry brings: sealed ones from `requestState`, fresh ones from `inputResponses`.
 * Throws for a malformed `inputResponses`; a promise when a state is sealed, or unless `now`.
 */
function openRound(
  core: ServerCore,
  name: string,
  params: Params,
  auth: AuthInfo | undefined,
  now: boolean,
): Awaitable<InputRound> {
  const responses = params.inputResponses;
  if (responses !== undefined && responses !== null && !isObject(responses))
    throw new McpError(ErrorCode.InvalidParams, "Invalid params: inputResponses must be an object");
  const fresh = isObject(responses) ? responses : EMPTY;
  if (params.requestState === undefined) {
    const round = new InputRound(EMPTY, fresh, undefined);
    return now ? round : Promise.resolve(round);
  }
  return core.requestState
    .open(params.requestState, name, params, principalOf(auth))
    .then((opened) => new InputRound(opened.answers, fresh, opened.state));
}
