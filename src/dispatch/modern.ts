/** The 2026-07-28 request path: stateless, per-request `_meta`, typed results, input rounds. */
import { type AuthInfo, type Connection, principalOf } from "../connection.js";
import { RequestContext } from "../context.js";
import type { ServerCore } from "../core.js";
import { InputRound } from "../eras/input.js";
import { completeResult, type ModernMeta, modernError, readModernMeta } from "../eras/modern.js";
import { featuresOf, MODERN_VERSION } from "../eras/versions.js";
import { ErrorCode, McpError } from "../errors.js";
import { errorResponse } from "../jsonrpc.js";
import {
  type Awaitable,
  isObject,
  isPromiseLike,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type RequestId,
} from "../types.js";
import {
  EMPTY,
  execute,
  hasCapability,
  lookup,
  type Method,
  type Outcome,
  type Params,
  toErrorObject,
} from "./methods.js";

const MODERN = featuresOf(MODERN_VERSION);

type Options = { send?: (message: JsonRpcMessage) => void; signal?: AbortSignal; auth?: AuthInfo };

/**
 * A 2026-07-28 request: its revision, client and capabilities come from its own `_meta`, it leaves
 * no trace on the connection, and its answer says what kind of result it is. `now` (a transport's
 * `handleNow`): a method that may ask for input opens its round at once when there is no sealed
 * `requestState`, so a synchronous handler is answered synchronously; otherwise the round opens after
 * a tick, and a connection closed meanwhile runs nothing.
 */
export function modernRequest(
  core: ServerCore,
  id: RequestId,
  name: string,
  params: Params,
  conn: Connection,
  options: Options,
  now = false,
): Awaitable<JsonRpcResponse | undefined> {
  let meta: ModernMeta;
  try {
    meta = readModernMeta(params._meta);
  } catch (error) {
    return failure(core, id, name, error);
  }
  const method = lookup(core, name, MODERN);
  // ping, initialize, logging/setLevel and resources/(un)subscribe do not exist in this revision
  if (!method || method.era === "legacy" || !hasCapability(core.modernCapabilities, method.capability)) {
    return errorResponse(
      id,
      { code: ErrorCode.MethodNotFound, message: `Method not found: ${name}` },
      MODERN,
    );
  }
  const auth = options.auth ?? conn.auth;
  if (!method.input) return run(core, id, name, params, conn, options, method, meta, auth, undefined);
  let round: Awaitable<InputRound>;
  try {
    round = openRound(core, name, params, auth, now);
  } catch (error) {
    return failure(core, id, name, error);
  }
  if (isPromiseLike(round))
    return round.then(
      (r) => run(core, id, name, params, conn, options, method, meta, auth, r),
      (error) => failure(core, id, name, error),
    );
  return run(core, id, name, params, conn, options, method, meta, auth, round);
}

function failure(core: ServerCore, id: RequestId, name: string, error: unknown): JsonRpcResponse {
  return errorResponse(id, modernError(toErrorObject(core, error, name, id)), MODERN);
}

function run(
  core: ServerCore,
  id: RequestId,
  name: string,
  params: Params,
  conn: Connection,
  options: Options,
  method: Method,
  meta: ModernMeta,
  auth: AuthInfo | undefined,
  round: InputRound | undefined,
): Awaitable<JsonRpcResponse | undefined> {
  // checked once the round is open, with none until `execute` registers this request: a twin sent
  // meanwhile is refused, and a connection closed meanwhile runs nothing
  const refused = conn.closed
    ? "the connection is closed"
    : conn.inflight.has(id)
      ? "a request with this id is still in flight"
      : undefined;
  if (refused !== undefined)
    return errorResponse(
      id,
      { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${refused}` },
      MODERN,
    );
  if (options.signal?.aborted) return undefined;
  const client = Object.freeze({
    protocolVersion: MODERN_VERSION,
    capabilities: meta.capabilities,
    info: meta.info,
  });
  const ctx = new RequestContext(
    conn,
    id,
    params._meta as Params,
    options.send,
    core.requestTimeoutMs,
    client,
    MODERN,
    {
      logLevel: meta.logLevel,
      input: round,
    },
  );
  ctx.auth = auth;
  const outcome = execute(core, method, name, params, ctx, conn, options.signal);
  return isPromiseLike(outcome)
    ? outcome.then((o) => answer(core, id, name, params, auth, round, ctx, o))
    : answer(core, id, name, params, auth, round, ctx, outcome);
}

function answer(
  core: ServerCore,
  id: RequestId,
  name: string,
  params: Params,
  auth: AuthInfo | undefined,
  round: InputRound | undefined,
  ctx: RequestContext,
  outcome: Outcome | undefined,
): Awaitable<JsonRpcResponse | undefined> {
  if (outcome === undefined) return undefined;
  if (round?.incomplete) return inputRequired(core, id, name, params, principalOf(auth), round);
  if ("error" in outcome) return errorResponse(id, modernError(outcome.error), MODERN);
  return {
    jsonrpc: "2.0",
    id,
    result: completeResult(outcome.result, core.serverMeta, ctx.cacheHint, ctx.personal),
  };
}

/** The handler asked the client: what it asked, with the answers so far sealed for the retry. */
async function inputRequired(
  core: ServerCore,
  id: RequestId,
  name: string,
  params: Params,
  principal: string | undefined,
  round: InputRound,
): Promise<JsonRpcResponse> {
  try {
    const requestState = await core.requestState.seal(
      { answers: round.used, state: round.state },
      name,
      params,
      principal,
    );
    const result = {
      resultType: "input_required",
      inputRequests: round.asked,
      requestState,
      _meta: core.serverMeta,
    };
    return { jsonrpc: "2.0", id, result };
  } catch (error) {
    return failure(core, id, name, error);
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
