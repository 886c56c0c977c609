/**
 * The server's state behind the registration API, naming no feature: the extensions (every method
 * family is one), what each revision is declared, the options every request reads, and `onError`.
 */

import type { Declared } from "./connection.js";
import type { RequestStateSeal } from "./eras/request-state.js";
import type { Features } from "./eras/versions.js";
import { type Extension, Extensions } from "./extension.js";
import type { Governor } from "./limits/governor.js";
import type { Implementation, RequestId, ServerCapabilities } from "./types.js";

/** Where a handler's unexpected error happened, for the `onError` hook. */
export interface ErrorInfo {
  method: string;
  requestId: RequestId;
  /** `resources/read`: the URI whose `read` failed. */
  uri?: string;
  /** `tools/call`, `prompts/get`: the tool or prompt whose handler failed. */
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

/** @internal */
export class ServerCore {
  readonly info: Implementation;
  readonly instructions: string | undefined;
  readonly requestTimeoutMs: number;
  /** 2026-07-28: the `_meta` of every result (the server's name and version). */
  readonly serverMeta: { readonly [key: string]: unknown };
  /** 2026-07-28: seals and opens `requestState`. */
  readonly requestState: RequestStateSeal;
  /** What each caller holds, against its share and the server's totals; the rate limits. */
  readonly governor: Governor;
  /** Every extension, built-in or the application's: their capabilities, methods and wrappers. */
  readonly extensions = new Extensions();
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
  }

  /** Adds an extension; what it declares is derived anew. Returns what removes it. */
  use(ext: Extension): () => void {
    const remove = this.extensions.add(ext);
    this.changed();
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

  reportError(error: unknown, info: ErrorInfo): void {
    try {
      this.#onError(error, info);
    } catch {
      // an onError hook that throws must not turn one failure into two
    }
  }
}
