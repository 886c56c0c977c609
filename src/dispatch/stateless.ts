/** The stateless request path (2026-07-28): per-request `_meta`, typed results, input rounds. */
import { principalOf } from "../connection.js";
import { cacheOf, isPersonal, RequestContext } from "../context.js";
import { InputRound } from "../eras/input.js";
import { completeResult, readStatelessMeta, type StatelessMeta, statelessError } from "../eras/stateless.js";
import { type Features, STATELESS_FEATURES } from "../eras/versions.js";
import { ErrorCode, McpError } from "../errors.js";
import type { Method } from "../extension.js";
import { errorResponse } from "../jsonrpc.js";
import { type Awaitable, EMPTY, isObject, isPromiseLike, type JsonRpcResponse } from "../types.js";
import type { IncomingRequest } from "./incoming.js";
import { execute, Failure, lookup, type Outcome, toErrorObject } from "./methods.js";

/**
 * A stateless request: its revision, client and capabilities come from its own `_meta`, it leaves
 * no trace on the connection, and its answer says what kind of result it is. `m.now` (a transport's
 * `handleNow`): a method that may ask for input opens its round at once when there is no sealed
 * `requestState`, so a synchronous handler is answered synchronously; otherwise the round opens after
 * a tick, and a connection closed meanwhile runs nothing.
 */
export function statelessRequest(m: IncomingRequest): Awaitable<JsonRpcResponse | undefined> {
  let meta: StatelessMeta;
  try {
    meta = readStatelessMeta(m.params._meta);
  } catch (error) {
    return failure(m, error, STATELESS_FEATURES);
  }
  const f = meta.features;
  const declared = m.core.declared(f);
  // a server without the logging capability sends no log messages, whatever level the client asks for
  if (meta.logLevel !== undefined && !declared.capabilities.logging) meta = { ...meta, logLevel: undefined };
  // ping, initialize, logging/setLevel and resources/(un)subscribe do not exist in this revision
  const method = lookup(m.core, m.method, declared, "stateless");
  if (!method)
    return errorResponse(
      m.id,
      { code: ErrorCode.MethodNotFound, message: `Method not found: ${m.method}` },
      f,
    );
  const served = declared.extensions;
  if (!method.input) return run(m, method, meta, served, undefined);
  let round: Awaitable<InputRound>;
  try {
    round = openRound(m);
  } catch (error) {
    return failure(m, error, f);
  }
  if (isPromiseLike(round))
    return round.then(
      (r) => run(m, method, meta, served, r),
      (error) => failure(m, error, f),
    );
  return run(m, method, meta, served, round);
}

function failure(m: IncomingRequest, error: unknown, f: Features): JsonRpcResponse {
  return errorResponse(m.id, statelessError(toErrorObject(m.core, error, m.method, m.id)), f);
}

/**
 * Runs the request once its round is open, as `meta` describes its client, among the extensions
 * `served` to its revision now.
 */
function run(
  m: IncomingRequest,
  method: Method,
  meta: StatelessMeta,
  served: ReadonlySet<string>,
  round: InputRound | undefined,
): Awaitable<JsonRpcResponse | undefined> {
  const { conn, id, options } = m;
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
  if (options.signal?.aborted) return undefined;
  const ctx = new RequestContext({
    connection: conn,
    id,
    method: m.method,
    params: m.params,
    send: options.send,
    timeoutMs: m.core.requestTimeoutMs,
    client: Object.freeze({ protocolVersion: f.version, capabilities: meta.capabilities, info: meta.info }),
    features: f,
    auth: options.auth,
    stateless: { logLevel: meta.logLevel, input: round, complete: m.core.complete },
  });
  const outcome = execute(m.core, options, method, ctx, served);
  return isPromiseLike(outcome)
    ? outcome.then((o) => answer(m, round, ctx, o))
    : answer(m, round, ctx, outcome);
}

function answer(
  m: IncomingRequest,
  round: InputRound | undefined,
  ctx: RequestContext,
  outcome: Outcome | undefined,
): Awaitable<JsonRpcResponse | undefined> {
  if (outcome === undefined) return undefined;
  if (round?.incomplete) return inputRequired(m, round, ctx);
  if (outcome instanceof Failure) return errorResponse(m.id, statelessError(outcome.error), ctx.features);
  return {
    jsonrpc: "2.0",
    id: m.id,
    result: completeResult(outcome, m.core.serverMeta, cacheOf(ctx), isPersonal(ctx)),
  };
}

/** The handler asked the client: what it asked, with the answers so far sealed for the retry. */
async function inputRequired(
  m: IncomingRequest,
  round: InputRound,
  ctx: RequestContext,
): Promise<JsonRpcResponse> {
  try {
    const requestState = await m.core.requestState.seal(
      { answers: round.used, state: round.state },
      m.method,
      m.params,
      principalOf(ctx.auth), // the request's own credentials, else its connection's
    );
    const result = {
      resultType: "input_required",
      inputRequests: round.asked,
      requestState,
      _meta: m.core.serverMeta,
    };
    return { jsonrpc: "2.0", id: m.id, result };
  } catch (error) {
    return failure(m, error, ctx.features);
  }
}

/**
 * The answers a retry brings: sealed ones from `requestState`, fresh ones from `inputResponses`.
 * Throws for a malformed `inputResponses`; a promise when a state is sealed, or unless `m.now`.
 */
function openRound(m: IncomingRequest): Awaitable<InputRound> {
  const params = m.params;
  const responses = params.inputResponses;
  if (responses !== undefined && responses !== null && !isObject(responses))
    throw new McpError(ErrorCode.InvalidParams, "Invalid params: inputResponses must be an object");
  const fresh = isObject(responses) ? responses : EMPTY;
  if (params.requestState === undefined) {
    const round = new InputRound(EMPTY, fresh, undefined);
    return m.now ? round : Promise.resolve(round);
  }
  return m.core.requestState
    .open(params.requestState, m.method, params, principalOf(m.options.auth ?? m.conn.auth))
    .then((opened) => new InputRound(opened.answers, fresh, opened.state));
}
