/** The 2026-07-28 request path: stateless, per-request `_meta`, typed results, input rounds. */
import { type AuthInfo, type Connection, principalOf } from "../connection.js";
import { RequestContext } from "../context.js";
import type { ServerCore } from "../core.js";
import { InputRound } from "../eras/input.js";
import { completeResult, modernError, readModernMeta } from "../eras/modern.js";
import { featuresOf, MODERN_VERSION } from "../eras/versions.js";
import { ErrorCode, McpError } from "../errors.js";
import { errorResponse } from "../jsonrpc.js";
import type { JsonRpcMessage, JsonRpcResponse, RequestId } from "../types.js";
import { EMPTY, execute, hasCapability, isObject, lookup, type Params, toErrorObject } from "./methods.js";

const MODERN = featuresOf(MODERN_VERSION);

/**
 * A 2026-07-28 request: its revision, client and capabilities come from its own `_meta`, it leaves
 * no trace on the connection, and its answer says what kind of result it is.
 */
export async function modernRequest(
  core: ServerCore,
  id: RequestId,
  name: string,
  params: Params,
  conn: Connection,
  options: { send?: (message: JsonRpcMessage) => void; signal?: AbortSignal; auth?: AuthInfo },
): Promise<JsonRpcResponse | undefined> {
  const fail = (error: unknown) =>
    errorResponse(id, modernError(toErrorObject(core, error, name, id)), MODERN);
  let meta: ReturnType<typeof readModernMeta>;
  try {
    meta = readModernMeta(params._meta);
  } catch (error) {
    return fail(error);
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
  const principal = principalOf(auth);
  let round: InputRound | undefined;
  if (method.input) {
    try {
      round = await openRound(core, name, params, principal);
    } catch (error) {
      return fail(error);
    }
  }
  // checked after the await, with none until `execute` registers this request: a twin sent
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
  const outcome = await execute(core, method, name, params, ctx, conn, options.signal);
  if (outcome === undefined) return undefined;
  if (round?.incomplete) {
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
      return fail(error);
    }
  }
  if ("error" in outcome) return errorResponse(id, modernError(outcome.error), MODERN);
  return {
    jsonrpc: "2.0",
    id,
    result: completeResult(outcome.result, core.serverMeta, ctx.cacheHint, ctx.personal),
  };
}

/** The answers a retry brings: sealed ones from `requestState`, fresh ones from `inputResponses`. */
async function openRound(core: ServerCore, name: string, params: Params, principal: string | undefined) {
  const responses = params.inputResponses;
  if (responses !== undefined && responses !== null && !isObject(responses))
    throw new McpError(ErrorCode.InvalidParams, "Invalid params: inputResponses must be an object");
  const fresh = isObject(responses) ? responses : EMPTY;
  if (params.requestState === undefined) return new InputRound(EMPTY, fresh, undefined);
  const opened = await core.requestState.open(params.requestState, name, params, principal);
  return new InputRound(opened.answers, fresh, opened.state);
}
