/**
 * The remote's questions asked of the downstream client through the calling request's context:
 * elicitation, sampling and roots, whether the remote sends them as requests (2025) or in an
 * `input_required` result (2026-07-28); and the rounds of such a result, answered and retried.
 */

import type { Client, RequestOptions } from "@modelcontextprotocol/client";
import type { Context } from "../context.js";
import { ClientCapabilityError, ErrorCode, McpError } from "../errors.js";
import type { Params } from "../types.js";

/** What asking the downstream client threw (its refusal, a 2026-07-28 input round): passed on as it is, not as the remote's. */
export class FromDownstream {
  readonly error: unknown;
  constructor(error: unknown) {
    this.error = error;
  }
}

/** Most `input_required` rounds one forwarded request may take. */
const MAX_ROUNDS = 16;

/** Asks `ctx`'s client what the remote asked with `method`; the answer, as the remote expects it. */
export async function askDownstream(
  ctx: Context,
  method: string,
  params: Params | undefined,
): Promise<Params> {
  switch (method) {
    case "elicitation/create":
      return (await ctx.elicit(params as never)) as unknown as Params;
    case "sampling/createMessage":
      return (await ctx.sample(params as never)) as unknown as Params;
    case "roots/list":
      return { roots: await ctx.roots() };
    default:
      throw new McpError(ErrorCode.MethodNotFound, `The proxy cannot pass ${method} to its client`);
  }
}

interface InputRequired {
  resultType: "input_required";
  inputRequests?: { [key: string]: { method?: unknown; params?: Params } };
  requestState?: string;
}

function inputRequired(result: unknown): result is InputRequired {
  return (result as { resultType?: unknown } | null)?.resultType === "input_required";
}

/**
 * Sends `method` to the remote for `ctx`; when a 2026-07-28 remote answers `input_required`, asks
 * `ctx`'s client each of its input requests and retries with the answers and its `requestState`.
 */
export async function requestWithRounds(
  client: Client,
  ctx: Context,
  request: { method: string; params: Params },
  options: RequestOptions,
): Promise<unknown> {
  let params = request.params;
  for (let round = 0; ; round++) {
    const result = await client.request(
      { method: request.method as "ping", params },
      { ...options, allowInputRequired: true },
    );
    if (!inputRequired(result)) return result;
    if (round === MAX_ROUNDS)
      throw new McpError(
        ErrorCode.InternalError,
        `The upstream server asked for input more than ${MAX_ROUNDS} times`,
      );
    const inputResponses: { [key: string]: Params } = {};
    for (const [key, asked] of Object.entries(result.inputRequests ?? {}))
      inputResponses[key] = await askDownstream(ctx, String(asked?.method), asked?.params).catch((e) => {
        // a client without the capability: the call fails, saying so (a 2026-07-28 round passes as it is)
        throw new FromDownstream(
          e instanceof ClientCapabilityError ? new McpError(ErrorCode.InvalidRequest, e.message) : e,
        );
      });
    const { inputResponses: _, requestState: __, ...rest } = params;
    params = {
      ...rest,
      inputResponses,
      ...(result.requestState !== undefined && { requestState: result.requestState }),
    };
  }
}
