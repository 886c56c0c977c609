/**
 * The HTTP handler's own answers, beside `reply.ts`: refusals with JSON-RPC error bodies (each
 * status with its code), JSON answers, and what the `errorStatus` option makes of an error.
 */
import type { Connection } from "../connection.js";
import {
  BATCHING_VERSIONS,
  DEFAULT_FEATURES,
  type Features,
  featuresOf,
  isSessionVersion,
  revision,
  SESSION_VERSIONS,
} from "../eras/versions.js";
import { ErrorCode, type McpError } from "../errors.js";
import { encodeMessage, errorResponse, parseErrorResponse } from "../jsonrpc.js";
import { limitStatus } from "../limits/shares.js";
import type { JsonRpcErrorObject, JsonRpcResponse } from "../types.js";
import type { ErrorStatus } from "./options.js";
import { type Answer, Reply, toResponse } from "./reply.js";
import type { BodyResult } from "./request.js";

/** The JSON-RPC code of transport-level refusals (406, 415, 413, 409, 405, 403, 400 without a session). */
export const SERVER_ERROR = -32000;

/** The JSON-RPC code of a 404 for an unknown or ended session. */
export const SESSION_NOT_FOUND = -32001;

/** A JSON-RPC error body (no id) with an HTTP status. */
export function httpError(
  status: number,
  code: number,
  message: string,
  features?: Features,
  headers?: { [name: string]: string },
): Reply {
  return errorReply(status, { code, message }, features, headers);
}

/** The JSON-RPC error `error` (its `data` too) as a body with no id, with an HTTP status. */
export function errorReply(
  status: number,
  error: JsonRpcErrorObject,
  features?: Features,
  headers?: { [name: string]: string },
): Reply {
  const body = encodeMessage(errorResponse(undefined, error, features));
  return new Reply(status, headers ? { "content-type": "application/json", ...headers } : JSON_TYPE, body);
}

/** An `McpError` as a JSON-RPC error object: its code, message and (when it has some) data. */
function errorObject(error: McpError): JsonRpcErrorObject {
  const { code, message, data } = error;
  return data === undefined ? { code, message } : { code, message, data };
}

/** The headers of a JSON answer that has no others (shared: a reply's headers are never changed). */
export const JSON_TYPE: { readonly [name: string]: string } = Object.freeze({
  "content-type": "application/json",
});

/** No headers (shared: a reply's headers are never changed). */
export const NONE: { readonly [name: string]: string } = Object.freeze({});

/** 404 for an unknown, expired or ended session. */
export function sessionNotFound(features?: Features): Reply {
  return httpError(404, SESSION_NOT_FOUND, "Session not found", features);
}

/** A refusal of the governor: 429 at the caller's share, 503 at the total, with `Retry-After` and the error's `data`. */
export function limitReply(error: McpError, features?: Features): Reply {
  const status = limitStatus(error)!;
  return errorReply(status.status, errorObject(error), features, status.headers);
}

/** A body the governor refused while it was still to come: {@link limitReply}, and its connection closes (the rest is never read). */
export function bodyRefused(error: McpError, features?: Features): Reply {
  const status = limitStatus(error)!;
  const headers = { ...status.headers, connection: "close" };
  return errorReply(status.status, errorObject(error), features, headers);
}

/** 401 for a request without credentials on a session that was opened with them. */
export function unauthorized(features?: Features): Reply {
  return httpError(
    401,
    SERVER_ERROR,
    "Unauthorized: this session was opened with credentials; send them with every request",
    features,
    { "www-authenticate": "Bearer" },
  );
}

/** 429 when anonymous sessions are created faster than allowed, or a principal is at its cap. */
export function tooManyRequests(message: string, retryAfterMs: number): Reply {
  return httpError(429, SERVER_ERROR, `Too Many Requests: ${message}`, undefined, {
    "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
  });
}

/** A `Response` of the `authenticate` hook, with a JSON-RPC error body if it is an error without one. */
export function withErrorBody(response: Response): Response {
  if (response.status < 400 || response.body !== null) return response;
  const headers = new Headers(response.headers);
  headers.set("content-type", "application/json");
  const message =
    response.statusText ||
    (response.status === 401 ? "Unauthorized" : response.status === 403 ? "Forbidden" : "Refused");
  const body = encodeMessage(errorResponse(undefined, { code: SERVER_ERROR, message }));
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

export function versionFeatures(version: string | null): Features {
  return isSessionVersion(version) ? featuresOf(version) : DEFAULT_FEATURES;
}

/** 400 -32022 naming `supported`: a session's revisions by default (outside one, the endpoint's). */
export function unsupportedVersion(
  requested: string,
  supported: readonly string[] = SESSION_VERSIONS,
): Reply {
  return errorReply(400, {
    code: ErrorCode.UnsupportedProtocolVersion,
    message: `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(requested)}; supported: ${supported.join(", ")}`,
    data: { supported: [...supported], requested },
  });
}

/** A JSON answer: 400 when it is a lone error tied to no request (the input was not a request), else 200. */
export function json(
  answer: JsonRpcResponse | JsonRpcResponse[],
  headers?: { readonly [name: string]: string },
  status?: number,
): Reply {
  const orphan = !Array.isArray(answer) && "error" in answer && answer.id == null;
  return new Reply(
    status ?? (orphan ? 400 : 200),
    headers ? { "content-type": "application/json", ...headers } : JSON_TYPE,
    encodeMessage(answer),
  );
}

/** What the `errorStatus` option makes of a single error answer: its status and headers, or nothing. */
export function mapError(
  map: ErrorStatus | undefined,
  answer: JsonRpcResponse | JsonRpcResponse[] | undefined,
  request: Request,
): ReturnType<ErrorStatus> {
  if (answer === undefined || Array.isArray(answer) || !("error" in answer)) return undefined;
  // a refusal of the governor is 429 or 503 with Retry-After, unless the hook says otherwise
  const limited = limitStatus(answer.error);
  if (!map) return limited;
  let mapped: ReturnType<ErrorStatus>;
  try {
    mapped = map(answer.error, request);
    // headers a Response would refuse (a newline in a value, say) are found here, not while answering
    if (mapped?.headers) new Headers(mapped.headers);
  } catch {
    // a hook that throws, or gives headers no Response can carry, must not cost the request its answer
    return limited;
  }
  // a hook's bad status would make the Response constructor throw: keep the default instead
  return mapped && Number.isInteger(mapped.status) && mapped.status >= 200 && mapped.status <= 599
    ? mapped
    : limited;
}

/** The answer to a POST's requests (with what `errorStatus` made of an error), or 202/404 when there is none. */
export function answerResponse(
  answer: JsonRpcResponse | JsonRpcResponse[] | undefined,
  headers: { readonly [name: string]: string } | undefined,
  connection: Connection,
  mapped?: ReturnType<ErrorStatus>,
): Answer {
  if (answer !== undefined) {
    if (!mapped) return json(answer, headers);
    // a hook's headers (any case, any spelling) are made what a Response makes of them
    const merged = { ...headers, ...mapped.headers };
    return mapped.headers
      ? toResponse(json(answer, merged, mapped.status))
      : json(answer, merged, mapped.status);
  }
  // cancelled: by the client (nothing to say), or because the session ended
  if (connection.closed && headers?.["mcp-session-id"])
    return httpError(404, SESSION_NOT_FOUND, "Session not found");
  return new Reply(202, headers ?? NONE, null);
}

/** 400 for a batch whose `MCP-Protocol-Version` names a revision that receives none; undefined otherwise. */
export function noBatch(version: string | null): Reply | undefined {
  if (version === null || revision(version)?.batching) return undefined;
  return httpError(
    400,
    ErrorCode.InvalidRequest,
    `Invalid Request: batches are only accepted on ${BATCHING_VERSIONS.join(", ")}`,
    versionFeatures(version),
  );
}

/**
 * A session POST's body as {@link readBody} read it, parsed: its message, or the answer (413 too
 * large, 429/503 refused by the governor, a parse error).
 */
export function messageOf(body: BodyResult, max: number, features: Features): { message: unknown } | Reply {
  if (!body.ok && body.reason === "too-large")
    return httpError(413, SERVER_ERROR, `Payload Too Large: the body must not exceed ${max} bytes`, features);
  if (!body.ok && body.reason === "limit") return bodyRefused(body.error, features);
  try {
    if (!body.ok) throw new SyntaxError("not UTF-8");
    return { message: JSON.parse(body.text) };
  } catch {
    return json(parseErrorResponse(features));
  }
}

/** 400 for a body that could not be read (its connection closed before it ended). */
export function unreadable(features: Features): Reply {
  return httpError(400, SERVER_ERROR, "Bad Request: the body could not be read", features);
}
