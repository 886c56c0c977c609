/**
 * One message on its way down dispatch: what came, on which connection, with which of the transport's
 * options, as one record made once per message and handed from the envelope to the method's run.
 */
import type { AuthInfo, Connection } from "../connection.js";
import type { ServerCore } from "../core.js";
import type { Carrier } from "../extension.js";
import type { JsonRpcMessage, RequestId } from "../types.js";

/** Per-message options a transport may give `handle`. */
export interface HandleOptions {
  /** Where messages related to this request go (progress, logs, requests to the client, a listen's stream); default: the connection's `send`. */
  send?: (message: JsonRpcMessage) => void;
  /** Aborting it cancels the request (an HTTP stream the client closed, say). */
  signal?: AbortSignal;
  /** This message's verified credentials, frozen (`ctx.auth`); default: the connection's. */
  auth?: AuthInfo;
  /**
   * Serves the message as a 2026-07-28 request (the transport saw that revision in its headers): a
   * missing `_meta` is then -32602. Default: the message's own `_meta` decides.
   */
  stateless?: boolean;
  /** What carried the message, for an observer (telemetry): `"pipe"` or the HTTP request. Default: unknown. */
  carrier?: Carrier;
}

/** A message whose envelope is valid: a request (with an id) or a notification, not yet routed. */
export interface Incoming {
  readonly core: ServerCore;
  readonly conn: Connection;
  /** Undefined for a notification. */
  readonly id: RequestId | undefined;
  readonly method: string;
  /** As sent (`{}` when absent); routing refuses anything but an object. */
  readonly params: unknown;
  readonly options: HandleOptions;
  /**
   * A transport's `handleNow`: a 2026-07-28 request that may ask for input opens its round at once
   * (when no sealed `requestState` must be opened), so a synchronous handler answers synchronously.
   */
  readonly now: boolean;
}

/** An {@link Incoming} whose params routing found to be an object: a request, its id known. */
export interface IncomingRequest extends Incoming {
  readonly id: RequestId;
  readonly params: { [key: string]: unknown };
}
