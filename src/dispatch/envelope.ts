/**
 * JSON-RPC envelope checks, the `initialize` handshake, and the routing between the eras: an
 * initialized connection is served as its session, a request carrying 2026-07-28 `_meta` (and every
 * `server/discover`) statelessly.
 */
import type { Connection } from "../connection.js";
import { RequestContext } from "../context.js";
import type { ServerCore } from "../core.js";
import { shapeImplementation } from "../eras/serialize.js";
import { hasStatelessMeta } from "../eras/stateless.js";
import { type Features, featuresOf, isSessionVersion, LATEST_SESSION_VERSION } from "../eras/versions.js";
import { ErrorCode, McpError } from "../errors.js";
import { guarded, type NotificationContext } from "../extension.js";
import { errorResponse } from "../jsonrpc.js";
import { observedRun } from "../observe/observers.js";
import {
  type Awaitable,
  type ClientCapabilities,
  EMPTY,
  type Implementation,
  isObject,
  isPromiseLike,
  type JsonRpcResponse,
  type Params,
  type RequestId,
} from "../types.js";
import type { HandleOptions } from "./incoming.js";
import { execute, Failure, lookup, type Outcome } from "./methods.js";
import { statelessRequest } from "./stateless.js";

export type { HandleOptions };

/** The requests the core answers itself; every other method is an extension's. */
const CORE_METHODS = new Set(["initialize", "ping", "server/discover"]);

/** Whether `core` handles the request (or, with `notification`, the notification) `name`: its own, or an extension's. */
export function handles(core: ServerCore, name: string, notification: boolean): boolean {
  if (notification ? name === "notifications/cancelled" : CORE_METHODS.has(name)) return true;
  return core.extensions.has(name, notification);
}

function invalid(id: RequestId | undefined, message: string, conn: Connection): JsonRpcResponse {
  return errorResponse(id, { code: ErrorCode.InvalidRequest, message }, conn.features);
}

type Answer = JsonRpcResponse | JsonRpcResponse[] | undefined;

/**
 * Handles one parsed message (or batch): the answer, or nothing for notifications and responses. A
 * request whose method answers synchronously is answered synchronously (no promise); a batch always
 * gives a promise. `now` (see `handleNow`): a 2026-07-28 request is answered synchronously too when
 * it can be (see {@link statelessRequest}).
 */
export function dispatch(
  core: ServerCore,
  message: unknown,
  conn: Connection,
  options: HandleOptions = NO_OPTIONS,
  now = false,
): Awaitable<Answer> {
  return Array.isArray(message)
    ? dispatchBatch(core, message, conn, options)
    : dispatchOne(core, message, conn, options, now);
}

const NO_OPTIONS: HandleOptions = Object.freeze({});

async function dispatchBatch(
  core: ServerCore,
  message: unknown[],
  conn: Connection,
  options: HandleOptions,
): Promise<Answer> {
  if (message.length === 0) return invalid(undefined, "Invalid Request: an empty batch", conn);
  if (!conn.features.batching || conn.state !== "ready") {
    return invalid(
      undefined,
      "Invalid Request: batches are only accepted on protocol revision 2025-03-26",
      conn,
    );
  }
  // one listener for the whole batch: one per request on the same signal costs O(n²) to remove
  const { signal: outer, ...unsignalled } = options;
  const each = outer && !outer.aborted ? unsignalled : options;
  const onAbort = () => {
    for (const m of message) {
      const id = isObject(m) ? validId(m.id) : undefined;
      if (id !== undefined) conn.inflight.get(id)?.abort(outer?.reason);
    }
  };
  if (each !== options) outer!.addEventListener("abort", onAbort, { once: true });
  let answers: (JsonRpcResponse | undefined)[];
  try {
    answers = await Promise.all(
      message.map((m) =>
        isObject(m) && m.method === "initialize"
          ? invalid(validId(m.id), "Invalid Request: initialize cannot be part of a batch", conn)
          : dispatchOne(core, m, conn, each),
      ),
    );
  } finally {
    outer?.removeEventListener("abort", onAbort);
  }
  const out = answers.filter((a): a is JsonRpcResponse => a !== undefined);
  return out.length ? out : undefined;
}

function validId(id: unknown): RequestId | undefined {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : undefined;
}

function dispatchOne(
  core: ServerCore,
  message: unknown,
  conn: Connection,
  options: HandleOptions,
  now = false,
): Awaitable<JsonRpcResponse | undefined> {
  if (!isObject(message)) return invalid(undefined, "Invalid Request: a message must be a JSON object", conn);
  const hasId = "id" in message;
  const id = validId(message.id);
  if (message.jsonrpc !== "2.0") return invalid(id, 'Invalid Request: jsonrpc must be "2.0"', conn);
  const method = message.method;
  if (method === undefined && hasId && ("result" in message || "error" in message)) {
    if (id !== undefined) {
      core.extensions.observer?.response?.(message as unknown as JsonRpcResponse, conn);
      conn.settle(message as unknown as JsonRpcResponse);
    }
    return undefined;
  }
  if (typeof method !== "string") return invalid(id, "Invalid Request: method must be a string", conn);
  if (hasId && id === undefined) {
    return invalid(undefined, "Invalid Request: id must be a string or a number", conn);
  }
  const params = message.params ?? EMPTY;
  const o = core.extensions.observer?.message?.({
    method,
    id,
    params: isObject(params) ? params : EMPTY,
    connection: conn,
    carrier: options.carrier,
  });
  // the message itself goes on, read again where needed: a record of its parts is made only for the
  // stateless path (one per request otherwise)
  const checked = message as Checked;
  if (o === undefined) return route(core, conn, checked, options, now);
  // under an observer's eye, its related messages go through the observer's `send`, if it gives one
  const send = o.send?.(options.send ?? ((m) => conn.send(m)));
  const seen = send ? { ...options, send } : options;
  return observedRun(o, () => route(core, conn, checked, seen, now));
}

/** A message the envelope checks passed: its id (if any) valid, its method a string. */
type Checked = { readonly id?: RequestId; readonly method: string; readonly params?: unknown };

function route(
  core: ServerCore,
  conn: Connection,
  message: Checked,
  options: HandleOptions,
  now: boolean,
): Awaitable<JsonRpcResponse | undefined> {
  const { id, method } = message;
  const params = message.params ?? EMPTY;
  if (!isObject(params)) {
    if (id === undefined) return undefined;
    return errorResponse(
      id,
      { code: ErrorCode.InvalidParams, message: "Invalid params: params must be an object" },
      conn.features,
    );
  }
  if (id === undefined) {
    notification(core, method, params, conn);
    return undefined;
  }
  return request(core, conn, message as Checked & { readonly id: RequestId }, options, now);
}

function notification(core: ServerCore, method: string, params: Params, conn: Connection): void {
  if (method === "notifications/cancelled") {
    const target = validId(params.requestId);
    if (target !== undefined)
      conn.inflight.get(target)?.abort(new McpError(ErrorCode.InternalError, "Cancelled by the client"));
    return;
  }
  // a session's extensions are those it was told of; before (or without) one, those served now
  const declared = conn.state === "ready" ? conn.declared : core.declared(conn.features);
  const handler = core.extensions.notification(method, declared.extensions);
  if (!handler) return; // initialized, roots/list_changed, progress and unknown ones need no action
  const ctx: NotificationContext = {
    method,
    features: conn.features,
    sessionId: conn.id,
    sessionState: (slot) => conn.slot(slot),
  };
  // an async handler's rejection is reported as a throw is: nobody awaits a notification
  guarded(
    () => handler(params, ctx),
    (error) => core.reportError(error, { method, requestId: "notification" }),
  );
}

function request(
  core: ServerCore,
  conn: Connection,
  message: Checked & { readonly id: RequestId },
  options: HandleOptions,
  now: boolean,
): Awaitable<JsonRpcResponse | undefined> {
  const { id, method: name } = message;
  const params = (message.params ?? EMPTY) as Params;
  // the peer is gone: no handler runs for it (a listen would never end), and the answer says why
  if (conn.state === "closed") return invalid(id, "Invalid Request: the connection is closed", conn);
  if (
    name === "server/discover" ||
    (conn.state !== "ready" && (options.stateless || hasStatelessMeta(params._meta)))
  )
    return statelessRequest({ core, conn, id, method: name, params, options, now });
  const f = conn.features;
  if (name === "ping") return { jsonrpc: "2.0", id, result: EMPTY };
  if (name === "initialize") {
    if (conn.state !== "new")
      return invalid(id, "Invalid Request: the connection is already initialized", conn);
    return initialize(core, id, params, conn);
  }
  if (conn.state !== "ready") {
    return invalid(id, "Invalid Request: the server is not initialized; send initialize first", conn);
  }
  // a session is served what it was told of at initialize: capabilities and extensions alike
  const declared = conn.declared;
  const method = lookup(core, name, declared, "session");
  if (!method) {
    return errorResponse(id, { code: ErrorCode.MethodNotFound, message: `Method not found: ${name}` }, f);
  }
  if (conn.inflight.has(id))
    return invalid(id, "Invalid Request: a request with this id is still in flight", conn);
  if (options.signal?.aborted) return undefined;
  const ctx = new RequestContext({
    connection: conn,
    id,
    method: name,
    params,
    send: options.send,
    timeoutMs: core.requestTimeoutMs,
    client: conn.client,
    features: f,
    auth: options.auth,
  });
  const outcome = execute(core, options, method, ctx, declared.extensions);
  return isPromiseLike(outcome) ? outcome.then((o) => answerOf(id, o, f)) : answerOf(id, outcome, f);
}

function answerOf(id: RequestId, outcome: Outcome | undefined, f: Features): JsonRpcResponse | undefined {
  if (outcome === undefined) return undefined;
  return outcome instanceof Failure
    ? errorResponse(id, outcome.error, f)
    : { jsonrpc: "2.0", id, result: outcome };
}

function initialize(core: ServerCore, id: RequestId, params: Params, conn: Connection): JsonRpcResponse {
  const requested = params.protocolVersion;
  if (typeof requested !== "string") {
    return errorResponse(
      id,
      { code: ErrorCode.InvalidParams, message: "Invalid params: initialize needs a protocolVersion string" },
      conn.features,
    );
  }
  const f = establish(core, conn, requested, params.capabilities, params.clientInfo);
  const result: { [key: string]: unknown } = {
    protocolVersion: f.version,
    capabilities: conn.serverCapabilities,
    serverInfo: shapeImplementation(core.info, f),
  };
  if (core.instructions !== undefined) result.instructions = core.instructions;
  return { jsonrpc: "2.0", id, result };
}

/**
 * Makes `conn` an initialized connection of the revision negotiated from `requested` (a version
 * picomcp does not serve through the handshake becomes 2025-11-25). Used by `initialize`, and by
 * transports that open connections already initialized (stateless HTTP).
 */
export function establish(
  core: ServerCore,
  conn: Connection,
  requested: string,
  capabilities: unknown,
  clientInfo: unknown,
): Features {
  const version = isSessionVersion(requested) ? requested : LATEST_SESSION_VERSION;
  const f = featuresOf(version);
  conn.features = f;
  conn.client = Object.freeze({
    protocolVersion: version,
    capabilities: isObject(capabilities) ? (capabilities as ClientCapabilities) : {},
    info: isObject(clientInfo) ? (clientInfo as unknown as Implementation) : undefined,
  });
  conn.declared = core.declared(f);
  conn.state = "ready";
  return f;
}
