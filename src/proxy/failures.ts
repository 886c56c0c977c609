/** How the remote's failures become picomcp's errors: a lost connection told from a failed request, a protocol error kept as it is. */

import { ErrorCode, McpError } from "../errors.js";

/** Whether `error` says the connection is gone (the network, the remote's session), not only this request. */
export function connectionLost(error: unknown): boolean {
  let e = error as { cause?: unknown; code?: unknown; data?: { status?: unknown } } | null | undefined;
  for (let depth = 0; e && depth < 4; depth++, e = e.cause as typeof e) {
    if (e instanceof TypeError || e.data?.status === 404) return true;
    if (e.code === "CONNECTION_CLOSED" || e.code === "SEND_FAILED") return true;
  }
  return false;
}

/** The remote's error as picomcp's: a protocol error keeps its code, message and data; anything else says the upstream failed. */
export function asMcpError(error: unknown, signal: AbortSignal): unknown {
  if (error instanceof McpError) return error;
  const e = error as { code?: unknown; message?: unknown; data?: unknown; name?: string } | null;
  if (e && typeof e.code === "number" && Number.isInteger(e.code) && e.name !== "SdkError")
    return new McpError(e.code, String(e.message), e.data);
  if (signal.aborted) return error;
  const message = e && typeof e.message === "string" ? e.message : String(error);
  return new McpError(ErrorCode.InternalError, `The upstream server failed: ${message}`);
}
