/**
 * The server's state behind the registration API, naming no feature: the extensions (every method
 * family is one), what each revision is declared, the options every request reads, and `onError`.
 */

import type { ChangeEvent } from "./bus.js";
import { Connection, type Declared } from "./connection.js";
import type { RequestStateSeal } from "./eras/request-state.js";
import { type CacheHint, completeResult } from "./eras/stateless.js";
import type { Features } from "./eras/versions.js";
import { type Extension, Extensions, type Hook } from "./extension.js";
import type { Governor } from "./limits/governor.js";
import type { Implementation, Params, RequestId, ServerCapabilities } from "./types.js";
import { type ExtensionHost, extensionHost, sessionHandle } from "./views/host.js";

/** Where a handler's unexpected error happened, for the `onError` hook. */
export interface ErrorInfo {
  method: string;
  requestId: RequestId;
  /** `resources/read`: the URI whose `read` failed. */
  uri?: string;
  /** `tools/call`, `prompts/get`: the tool or prompt whose handler failed; an extension's `change` or `sessionEnd` hook: its id. */
  name?: string;
}

/** The default `onError`: the error on stderr, with the method and the URI, tool or prompt it was about. */
export function logError(error: unknown, where: ErrorInfo): void {
  const about = where.uri ?? where.name;
  console.error(`picomcp: ${where.method}${about === undefined ? "" : ` ${about}`} failed:`, error);
}

/**
 * What the server says of itself (`serverInfo`), from its options: the name and version it must
 * have, and the display fields it was given, none left `undefined`.
 */
export function implementationOf(options: Implementation): Implementation {
  if (typeof options?.name !== "string" || typeof options.version !== "string") {
    throw new TypeError("new McpServer({ name, version }): name and version are required strings");
  }
  const { name, version, title, description, icons, websiteUrl } = options;
  const info = { name, version, title, description, icons, websiteUrl };
  for (const key of Object.keys(info) as (keyof typeof info)[]) if (info[key] === undefined) delete info[key];
  return info as Implementation;
}

/** @internal */
export interface CoreOptions {
  info: Implementation;
  instructions: string | undefined;
  requestTimeoutMs: number;
  onError: (error: unknown, info: ErrorInfo) => void;
  requestState: RequestStateSeal;
  /** 2026-07-28: the `_meta` of every result (the server's name and version). */
  serverMeta: { readonly [key: string]: unknown };
  governor: Governor;
}

export type { Declared };

/**
 * The one closed connection every server's set keeps (see `ServerCore#connections`): emptied on every
 * stateless request, the set would otherwise reallocate its table on each (see InflightRequests).
 */
const KEPT = new Connection({ send: () => {} }, () => {});
KEPT.close();

/** @internal */
export class ServerCore {
  readonly info: Implementation;
  readonly instructions: string | undefined;
  readonly requestTimeoutMs: number;
  /** 2026-07-28: the `_meta` of every result (the server's name and version). */
  readonly serverMeta: { readonly [key: string]: unknown };
  /** 2026-07-28: `result` as a complete result of this server (its `_meta`), with its caching hint. */
  readonly complete = (result: Params, hint: CacheHint | undefined, personal: boolean): Params =>
    completeResult(result, this.serverMeta, hint, personal);
  /** 2026-07-28: seals and opens `requestState`. */
  readonly requestState: RequestStateSeal;
  /** What each caller holds, against its share and the server's totals; the rate limits. */
  readonly governor: Governor;
  /** Every extension, built-in or the application's: their capabilities, methods and wrappers. */
  /** An observer's hook that throws is reported as `{ method: hook, requestId: "observer", name: id }`. */
  readonly extensions = new Extensions((error, hook, id) =>
    this.reportError(error, { method: hook, requestId: "observer", name: id }),
  );
  /** The open connections, and one kept closed, which every loop over them passes by. */
  readonly connections = new Set<Connection>([KEPT]);
  /** What a closed connection calls: one function for every connection. */
  readonly forget = (c: Connection): void => void this.connections.delete(c);
  /** What every extension's `attach` is given: the sessions, `onError`, the caller limits. */
  readonly host: ExtensionHost;
  /** The connections ended gracefully already: each is ended once, whatever path ends it. */
  readonly #ended = new WeakSet<Connection>();
  readonly #onError: CoreOptions["onError"];
  readonly #declared = new Map<Features, Declared>();

  constructor(options: CoreOptions) {
    this.info = options.info;
    this.instructions = options.instructions;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.serverMeta = options.serverMeta;
    this.requestState = options.requestState;
    this.governor = options.governor;
    this.#onError = options.onError;
    this.host = extensionHost({
      connections: this.connections,
      governor: this.governor,
      report: (error, info) => this.reportError(error, info),
    });
  }

  /** Adds an extension; what it declares is derived anew. Returns what removes it. */
  use(ext: Extension): () => void {
    const remove = this.extensions.add(ext);
    this.changed();
    try {
      ext.attach?.(this.host);
    } catch (error) {
      remove();
      this.changed();
      throw error;
    }
    return () => {
      remove();
      this.changed();
    };
  }

  /** Adds the extensions of `list` in order, what each requires checked against the whole list first. */
  useAll(list: readonly Extension[]): void {
    this.extensions.checkRequires(list);
    for (const ext of list) this.extensions.add(ext, true);
    this.changed();
    for (const ext of list) ext.attach?.(this.host);
  }

  /** Registrations changed: what they imply is derived once per change, not once per request. */
  changed(): void {
    this.#declared.clear();
  }

  /**
   * What a connection of revision `f` is told (at its handshake; a stateless request, on each): the
   * capabilities and the ids of the extensions served. Cached until a registration changes, shared,
   * never changed.
   */
  declared(f: Features): Declared {
    let d = this.#declared.get(f);
    if (!d) {
      const capabilities: ServerCapabilities = {};
      this.extensions.declare(f, capabilities as { [key: string]: unknown });
      d = Object.freeze({ capabilities, extensions: this.extensions.served(f) });
      this.#declared.set(f, d);
    }
    return d;
  }

  /**
   * A change event from the bus: every extension's `change` hook, then a list's `list_changed` to the
   * sessions that were told at `initialize` that the list can change.
   */
  readonly deliver = (event: ChangeEvent): void => {
    this.extensions.change(event, this.#hookFailed);
    if (event.type !== "list_changed" || this.connections.size === 1) return;
    const method = `notifications/${event.kind}/list_changed`;
    for (const conn of this.connections) {
      if (
        conn.protocolVersion !== undefined &&
        !conn.closed &&
        conn.serverCapabilities[event.kind]?.listChanged
      )
        conn.send({ jsonrpc: "2.0", method });
    }
  };

  /**
   * Ends `conn` gracefully, once (a drain, then `server.close()`, ends it once): every extension's
   * `sessionEnd` hook for its session. Not a connection closed already.
   */
  endGracefully(conn: Connection): void {
    if (conn.closed || this.#ended.has(conn)) return;
    this.#ended.add(conn);
    this.extensions.end(() => sessionHandle(conn), this.#hookFailed);
  }

  /** A `change` or `sessionEnd` hook threw: `onError` hears of it, with the hook (as its method) and its extension's id. */
  readonly #hookFailed = (error: unknown, ext: Extension, hook: Hook): void => {
    this.reportError(error, { method: hook, requestId: "hook", name: ext.id });
  };

  reportError(error: unknown, info: ErrorInfo): void {
    try {
      this.#onError(error, info);
    } catch {
      // an onError hook that throws must not turn one failure into two
    }
  }
}
