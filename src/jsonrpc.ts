/** JSON-RPC message builders and the one place where outgoing messages become text. */
import type { Features } from "./eras/versions.js";
import { DEFAULT_FEATURES } from "./eras/versions.js";
import { ErrorCode } from "./errors.js";
import type { JsonRpcErrorObject, JsonRpcErrorResponse, JsonRpcMessage, RequestId } from "./types.js";

/** An error answer. An unreadable id is `null` for revisions up to 2025-06-18 and omitted after. */
export function errorResponse(
  id: RequestId | undefined,
  error: JsonRpcErrorObject,
  f: Features = DEFAULT_FEATURES,
): JsonRpcErrorResponse {
  if (id !== undefined) return { jsonrpc: "2.0", id, error };
  return f.nullErrorId ? { jsonrpc: "2.0", id: null, error } : { jsonrpc: "2.0", error };
}

/** The answer to a line or body that is not JSON. */
export function parseErrorResponse(f: Features = DEFAULT_FEATURES): JsonRpcErrorResponse {
  return errorResponse(
    undefined,
    { code: ErrorCode.ParseError, message: "Parse error: the message is not valid JSON" },
    f,
  );
}

/** Results whose JSON text is already known (a cached page of a list), by the result object itself. */
const encoded = new WeakMap<object, string>();

/**
 * Serializes `result` now and keeps the text, so that every answer carrying this very object writes
 * the text instead of serializing it again. The object must not change afterwards: it is frozen.
 */
export function preEncode<T extends object>(result: T): T {
  encoded.set(Object.freeze(result), JSON.stringify(result));
  return result;
}

/**
 * Serializes one outgoing message (or a batch). A result that cannot be serialized (a cycle, a
 * BigInt) becomes an internal-error answer to the same request, so every request still gets
 * exactly one well-formed answer.
 */
export function encodeMessage(message: JsonRpcMessage | JsonRpcMessage[]): string {
  const result = (message as { result?: unknown }).result;
  if (typeof result === "object" && result !== null) {
    const text = encoded.get(result);
    // exactly the text JSON.stringify would give for { jsonrpc, id, result }, and nothing else on it
    if (text !== undefined && isPlainAnswer(message)) {
      return `{"jsonrpc":"2.0","id":${JSON.stringify((message as { id: unknown }).id)},"result":${text}}`;
    }
  }
  try {
    return JSON.stringify(message);
  } catch {
    if (Array.isArray(message)) return `[${message.map((m) => encodeMessage(m)).join(",")}]`;
    if ("id" in message && message.id != null && ("result" in message || "error" in message)) {
      return JSON.stringify(
        errorResponse(message.id, {
          code: ErrorCode.InternalError,
          message: "Internal error: the result could not be serialized as JSON",
        }),
      );
    }
    throw new TypeError("picomcp: a notification or request could not be serialized as JSON");
  }
}

function isPlainAnswer(message: object): boolean {
  let keys = 0;
  for (const key in message) {
    if (key !== "jsonrpc" && key !== "id" && key !== "result") return false;
    keys++;
  }
  const m = message as { jsonrpc?: unknown; id?: unknown };
  return keys === 3 && m.jsonrpc === "2.0" && (typeof m.id === "string" || typeof m.id === "number");
}

/** Whether a parsed message is (or, for a batch, contains) a request that expects an answer. */
export function expectsAnswer(message: unknown): boolean {
  // a batch inside a batch is an invalid request (answered): no recursion, however deep it nests
  if (Array.isArray(message))
    return message.length === 0 || message.some((m) => Array.isArray(m) || expectsAnswer(m));
  if (typeof message !== "object" || message === null) return true;
  const m = message as { method?: unknown; id?: unknown; result?: unknown; error?: unknown };
  if (typeof m.method === "string") return "id" in m;
  // a response to one of our requests is never answered; anything else is invalid and is answered
  return !(("result" in m || "error" in m) && "id" in m);
}
