/** The handler's 2025 sessions as one interface, whatever keeps them (none, this instance, a shared store), and the kind without any. */
import type { AuthInfo, Connection } from "../connection.js";
import { HEADERLESS_VERSION } from "../eras/versions.js";
import type { McpServer } from "../server.js";
import type { Awaitable, RequestId } from "../types.js";
import { httpError, SERVER_ERROR } from "./answers.js";
import type { Drain } from "./drain.js";
import type { EventStore } from "./event-store.js";
import { connectStateless } from "./exchange.js";
import type { HttpGovernor } from "./limits.js";
import type { HttpHandlerOptions } from "./options.js";
import type { Answer, Reply } from "./reply.js";
import type { Session, SessionLimits } from "./session.js";
import type { LiveStreams } from "./sse.js";

/**
 * Where the handler's 2025 sessions live: nowhere (`sessions: false`, every POST on its own), in
 * this instance's memory, or in a store every instance serves from. The handler routes a request
 * by method, era and headers, checks what every request must pass, and leaves the rest to this:
 * opening a session at `initialize`, finding the one a request names (or refusing it), its GET
 * stream and DELETE, the beat, a drain and the end.
 */
export interface SessionBackend {
  /** The methods the endpoint serves, as an `Allow` header lists them (a 405's, a preflight's). */
  readonly methods: string;
  /** `maxBatchSize` when the option is not given: without sessions batches are off (they cost it the most for the least). */
  readonly maxBatch: number;
  /** Where the events of the sessions' streams are kept for resumption (none: not resumable). */
  readonly events: EventStore | undefined;
  /** Live sessions held here: `sessionCount`, and what the governor counts for their callers. */
  readonly size: number;
  /** Whether `sid` is a live session here that `auth` may use: its requests stay 2025 requests whatever their version header. */
  owns(sid: string, auth: AuthInfo | undefined): boolean;
  /** Whether session `sid` has POSTs in flight here: a drain still serves its POSTs (they may carry a client's answers). */
  busy(sid: string): boolean;
  /**
   * The session a POST names with `Mcp-Session-Id` (`version`: its `MCP-Protocol-Version`), marked
   * as used; or the refusal: 404 unknown, expired or another principal's, 401 without the
   * credentials it was opened with, 503 when its store is unreachable. Undefined: sessions are
   * off, and the id means nothing.
   */
  find(
    request: Request,
    sid: string,
    auth: AuthInfo | undefined,
    version: string | null,
  ): Session | Reply | undefined | Promise<Session | Reply>;
  /** Serves a POST of `session` (its headers and body checked) on its connection. */
  serve(request: Request, session: Session, message: unknown, auth: AuthInfo | undefined): Awaitable<Answer>;
  /**
   * A POST that names no session (its headers and body checked; `init`: an `initialize`): served
   * on its own without sessions; else an `initialize` opens one (429/503 when its caller or the
   * server has no room), and anything else is 400.
   */
  begin(
    request: Request,
    message: unknown,
    init: boolean,
    version: string | null,
    auth: AuthInfo | undefined,
  ): Awaitable<Answer>;
  /** A GET: the named session's stream, or one resumed from `Last-Event-ID`; 405 without sessions. */
  get(request: Request, auth: AuthInfo | undefined): Awaitable<Reply>;
  /** A DELETE: ends the named session (everywhere, when shared); 405 without sessions. */
  delete(request: Request, auth: AuthInfo | undefined): Awaitable<Reply>;
  /** One beat of the handler's timer (`now`): idle sessions end, busy shared ones stay alive. True while a session is left. */
  beat(now: number): boolean;
  /** `closeSseStream`: closes the SSE connection of a request in flight of session `sid`, with a `retry:` hint. */
  disconnect(sid: string, requestId: RequestId): boolean;
  /** `closeStandaloneStream`: closes the connection of session `sid`'s GET stream, with a `retry:` hint. */
  detachGet(sid: string): boolean;
  /**
   * A drain began (each session ends gracefully: `server.endGracefully`; the GET streams close with a `retry:`
   * hint), or with `all` its grace is over (every stream's).
   */
  detach(all: boolean): void;
  /** Ends every session held here (a shared one lives on in its store) and stops hearing other instances. */
  close(): void;
}

/** What a backend borrows from its handler. */
export interface BackendParts {
  readonly server: McpServer;
  readonly o: HttpHandlerOptions;
  readonly limits: HttpGovernor;
  readonly idleMs: number;
  /** Sessions without a principal that may open per minute: by each caller, and by all. */
  readonly anonymousPerMinute: SessionLimits["anonymousPerMinute"];
  readonly retryMs: number;
  /** The handler's SSE streams and its one timer. */
  readonly streams: LiveStreams;
  readonly drain: Drain;
  /** Serves one POST's messages on a session's connection, or on one of its own (`on`): JSON, or SSE. Without a session the drain tracks it. */
  exchange(
    request: Request,
    on: Session | Connection,
    message: unknown,
    auth: AuthInfo | undefined,
  ): Awaitable<Answer>;
}

/** 405 naming the methods served. */
export function notAllowed(methods: string): Reply {
  return httpError(405, SERVER_ERROR, `Method not allowed: use ${methods}`, undefined, { allow: methods });
}

/** No sessions (`sessions: false`): every POST gets a connection of its own, initialized at its revision; GET and DELETE are 405. */
export class NoSessions implements SessionBackend {
  readonly methods = "POST";
  readonly maxBatch = 0;
  readonly events = undefined;
  readonly size = 0;
  readonly #parts: BackendParts;

  constructor(parts: BackendParts) {
    this.#parts = parts;
  }

  owns(): boolean {
    return false;
  }

  busy(): boolean {
    return false;
  }

  find(): undefined {
    return undefined;
  }

  serve(): never {
    throw new Error("no session is ever found without sessions");
  }

  begin(
    request: Request,
    message: unknown,
    init: boolean,
    version: string | null,
    auth: AuthInfo | undefined,
  ): Awaitable<Answer> {
    const p = this.#parts;
    // an initialize is answered and starts nothing: its connection opens uninitialized
    const connection = connectStateless(p.server, init ? undefined : (version ?? HEADERLESS_VERSION), auth);
    p.limits.bind(connection, request, auth);
    return p.exchange(request, connection, message, auth);
  }

  get(): Reply {
    return notAllowed(this.methods);
  }

  delete(): Reply {
    return notAllowed(this.methods);
  }

  beat(): boolean {
    return false;
  }

  disconnect(): boolean {
    return false;
  }

  detachGet(): boolean {
    return false;
  }

  detach(): void {}

  close(): void {}
}
