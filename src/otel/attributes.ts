/**
 * The names the MCP semantic conventions give spans, attributes and metrics, and what one message
 * says of itself: its span name and attributes, the outcome its answer records.
 */
import type { Attributes } from "@opentelemetry/api";
import type { Connection } from "../connection.js";
import { META } from "../eras/stateless.js";
import { isStatelessVersion } from "../eras/versions.js";
import type { Carrier } from "../extension.js";
import { peerOf } from "../http/request.js";
import { isObject, type JsonRpcResponse, type Params } from "../types.js";

/** Attribute names (the MCP, GenAI, JSON-RPC, RPC, network and error conventions). */
export const A = {
  method: "mcp.method.name",
  protocolVersion: "mcp.protocol.version",
  sessionId: "mcp.session.id",
  resourceUri: "mcp.resource.uri",
  requestId: "jsonrpc.request.id",
  statusCode: "rpc.response.status_code",
  errorType: "error.type",
  toolName: "gen_ai.tool.name",
  promptName: "gen_ai.prompt.name",
  operation: "gen_ai.operation.name",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  transport: "network.transport",
  protocolName: "network.protocol.name",
  networkVersion: "network.protocol.version",
  clientAddress: "client.address",
  clientPort: "client.port",
  /** picomcp's own: the status of a task (`working`, `input_required`, `completed`, …). */
  taskStatus: "mcp.task.status",
  /** picomcp's own: a task's id, on its span. */
  taskId: "mcp.task.id",
} as const;

/** A value in `_meta` (or a name) longer than this is not looked at: no header of W3C trace context is. */
export const MAX_VALUE = 8192;

/** The string `value`, if it is one of at most {@link MAX_VALUE} characters. */
export function shortString(value: unknown): string | undefined {
  return typeof value === "string" && value.length <= MAX_VALUE ? value : undefined;
}

/** The `_meta` of `params`, when it is an object. */
export function metaOf(params: Params): Params | undefined {
  const meta = params._meta;
  return isObject(meta) ? meta : undefined;
}

/** The tool or prompt a message is about: the `target` of its span name. */
export function targetOf(method: string, params: Params): { key: string; name: string } | undefined {
  if (method !== "tools/call" && method !== "prompts/get") return undefined;
  const name = shortString(params.name);
  if (name === undefined) return undefined;
  return { key: method === "tools/call" ? A.toolName : A.promptName, name };
}

/** The span name: `{mcp.method.name} {target}`, or the method alone. */
export function spanName(method: string, target: { name: string } | undefined): string {
  return target ? `${method} ${target.name}` : method;
}

/** The revision a message is served at, as far as it is known before it is handled. */
export function versionOf(conn: Connection, params: Params): string | undefined {
  if (conn.state === "ready") return conn.protocolVersion;
  const v = metaOf(params)?.[META.protocolVersion];
  return isStatelessVersion(v) ? (v as string) : undefined;
}

/** `network.*` and `client.*` of what carried a message (none in memory). */
export function carrierAttributes(carrier: Carrier | undefined, into: Attributes): void {
  if (carrier === undefined) return;
  if (carrier === "pipe") {
    into[A.transport] = "pipe";
    return;
  }
  into[A.transport] = "tcp";
  into[A.protocolName] = "http";
  const peer = peerOf(carrier);
  if (peer?.httpVersion !== undefined) into[A.networkVersion] = peer.httpVersion;
  if (peer?.address !== undefined) {
    into[A.clientAddress] = peer.address;
    if (peer.port !== undefined) into[A.clientPort] = peer.port;
  }
}

/** What an answer says of the outcome. */
export interface Outcome {
  /** `error.type`: the JSON-RPC code, or `tool_error` for a tool result with `isError`. */
  readonly errorType: string | undefined;
  /** The JSON-RPC code, as a string, when the answer is an error. */
  readonly code: string | undefined;
  /** The error's message (the span status's description). */
  readonly message: string | undefined;
  /** The result, when it is one. */
  readonly result: Params | undefined;
}

const NOTHING: Outcome = Object.freeze({
  errorType: undefined,
  code: undefined,
  message: undefined,
  result: undefined,
});

/** The outcome of `answer` (nothing for a notification or a cancelled request). */
export function outcomeOf(answer: JsonRpcResponse | undefined): Outcome {
  if (answer === undefined) return NOTHING;
  if ("error" in answer) {
    const code = String(answer.error.code);
    return { errorType: code, code, message: shortString(answer.error.message), result: undefined };
  }
  const result = isObject(answer.result) ? answer.result : undefined;
  const toolError = result?.isError === true;
  return { errorType: toolError ? "tool_error" : undefined, code: undefined, message: undefined, result };
}

/** A value as a span attribute: its JSON, or undefined when it has none (or a cycle). */
export function json(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** The task a result created: its id (2026-07-28 `resultType: "task"`, 2025-11-25 `task`). */
export function createdTask(result: Params | undefined): string | undefined {
  if (result === undefined) return undefined;
  if (result.resultType === "task") return shortString(result.taskId);
  return isObject(result.task) ? shortString(result.task.taskId) : undefined;
}
