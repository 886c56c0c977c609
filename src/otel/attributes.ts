/**
 * The names the MCP semantic conventions give spans, attributes and metrics, and what one message
 * says of itself: its span name and attributes, the outcome its answer records.
 */
import type { Attributes } from "@opentelemetry/api";
import type { Connection } from "../connection.js";
import { META } from "../eras/stateless.js";
import { isStatelessVersion } from "../eras/versions.js";
import type { Carrier } from "../extension.js";
import { clientOf, peerOf } from "../http/request.js";
import { isObject, type Params } from "../types.js";

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

/** The tool or prompt name a message is about: the `target` of its span name. */
export function targetOf(method: string, params: Params): string | undefined {
  return method === "tools/call" || method === "prompts/get" ? shortString(params.name) : undefined;
}

/**
 * What a method (and its target) says alone, made once per pair and shared by every message of it:
 * the span name, the attributes a sampler decides on, the options a span starts with.
 */
export interface Kind {
  readonly method: string;
  /** `{mcp.method.name} {target}`, or the method alone. */
  readonly name: string;
  /** `gen_ai.tool.name` or `gen_ai.prompt.name`, when there is a target. */
  readonly targetKey: string | undefined;
  readonly target: string | undefined;
  /** `mcp.method.name`, the target and `gen_ai.operation.name` (frozen: what every sampler is given). */
  readonly start: Attributes;
  /** The points of `mcp.server.operation.duration` it had, by revision, network and outcome (see `Points`). */
  readonly points: Map<string, Map<Network, Map<string, Attributes>>>;
}

/** The {@link Kind} of `method` about `target`. */
export function kindOf(method: string, target: string | undefined): Kind {
  const start: Attributes = { [A.method]: method };
  const targetKey = target === undefined ? undefined : method === "tools/call" ? A.toolName : A.promptName;
  if (targetKey !== undefined) start[targetKey] = target;
  if (method === "tools/call") start[A.operation] = "execute_tool";
  const name = target === undefined ? method : `${method} ${target}`;
  return { method, name, targetKey, target, start: Object.freeze(start), points: new Map() };
}

/** Kinds by method, then by target: a few hundred of each are kept (methods and names come from clients). */
export class Kinds {
  readonly #byMethod = new Map<string, Map<string | undefined, Kind>>();

  /** The kind of `method` about `target`. */
  of(method: string, target: string | undefined): Kind {
    let byTarget = this.#byMethod.get(method);
    if (byTarget === undefined) {
      byTarget = new Map();
      if (this.#byMethod.size < 256) this.#byMethod.set(method, byTarget);
    }
    let kind = byTarget.get(target);
    if (kind === undefined) {
      kind = kindOf(method, target);
      if (byTarget.size < 1024) byTarget.set(target, kind);
    }
    return kind;
  }
}

/** The revision a message is served at, as far as it is known before it is handled. */
export function versionOf(conn: Connection, params: Params): string | undefined {
  if (conn.state === "ready") return conn.protocolVersion;
  const v = metaOf(params)?.[META.protocolVersion];
  return isStatelessVersion(v) ? (v as string) : undefined;
}

/** What carried a message, as the metrics see it: `network.transport`, `network.protocol.*` (frozen). */
export interface Network {
  readonly attributes: Attributes;
}

const IN_MEMORY: Network = Object.freeze({ attributes: Object.freeze({}) });
const PIPE: Network = Object.freeze({ attributes: Object.freeze({ [A.transport]: "pipe" }) });
/** HTTP networks by `network.protocol.version` (a handful: what Node's parser accepts). */
const HTTP = new Map<string | undefined, Network>();

/** The {@link Network} of `carrier` (one object per transport and HTTP version). */
export function networkOf(carrier: Carrier | undefined): Network {
  if (carrier === undefined) return IN_MEMORY;
  if (carrier === "pipe") return PIPE;
  const version = peerOf(carrier)?.httpVersion;
  let network = HTTP.get(version);
  if (network === undefined) {
    const attributes: Attributes = { [A.transport]: "tcp", [A.protocolName]: "http" };
    if (version !== undefined) attributes[A.networkVersion] = version;
    network = Object.freeze({ attributes: Object.freeze(attributes) });
    if (HTTP.size < 16) HTTP.set(version, network);
  }
  return network;
}

/** What a request's outbound spans share with it: `mcp.protocol.version`, `mcp.session.id`, the transport. */
export function baseAttributes(
  version: string | undefined,
  sessionId: string | undefined,
  network: Network,
): Attributes {
  const base: Attributes = {};
  if (version !== undefined) base[A.protocolVersion] = version;
  if (sessionId !== undefined) base[A.sessionId] = sessionId;
  const n = network.attributes;
  if (n[A.transport] !== undefined) base[A.transport] = n[A.transport];
  if (n[A.protocolName] !== undefined) base[A.protocolName] = n[A.protocolName];
  return base;
}

/** `client.address` and `client.port` of what carried a message (HTTP only), into `into`. */
export function clientAttributes(carrier: Carrier | undefined, into: Attributes): void {
  if (carrier === undefined || carrier === "pipe") return;
  // behind trusted proxies, the client they name (the handler's `trustProxy`), without a port
  const client = clientOf(carrier);
  if (client !== undefined) {
    into[A.clientAddress] = client.address;
    if (client.port !== undefined) into[A.clientPort] = client.port;
  }
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
