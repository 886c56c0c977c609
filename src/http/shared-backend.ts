/** Sessions every instance serves as a {@link SessionBackend}: the local one's table holds this instance's copies, found, opened, streamed and ended through the store (shared.ts). */
import type { AuthInfo, Connection } from "../connection.js";
import type { JsonRpcMessage } from "../types.js";
import { versionFeatures } from "./answers.js";
import type { BackendParts } from "./backend.js";
import { type GetOptions, notSse, serveGet } from "./get.js";
import { LocalSessions } from "./local.js";
import type { Reply } from "./reply.js";
import { header } from "./request.js";
import type { Session } from "./session.js";
import type { SessionStore } from "./session-store.js";
import { SharedSession, SharedSessions } from "./shared.js";

/** Sessions kept in a `SessionStore` (`sessions: store`), each served by whichever instance a request reaches. */
export class SharedBackend extends LocalSessions {
  readonly #shared: SharedSessions;

  constructor(parts: BackendParts, store: SessionStore) {
    super(parts);
    this.#shared = new SharedSessions(parts.server, store, this.table, this.events, {
      idleMs: parts.idleMs,
      limits: parts.limits,
      drop: (session) => this.end(session),
      started: () => parts.streams.start(),
    });
  }

  override find(
    request: Request,
    sid: string,
    auth: AuthInfo | undefined,
    version: string | null,
  ): Promise<Session | Reply> {
    return this.#shared.resolve(request, sid, auth, versionFeatures(version));
  }

  override serve(request: Request, session: Session, message: unknown, auth: AuthInfo | undefined) {
    return this.#shared.serve(session as SharedSession, message, () =>
      super.serve(request, session, message, auth),
    );
  }

  /** The store counts the caller's share and the total, across instances, once the session is made. */
  protected override admit(): undefined {
    return undefined;
  }

  protected override open(id: string, connection: Connection, caller: string): Promise<Session | Reply> {
    return this.#shared.open(id, connection, caller);
  }

  protected override deliver(session: Session, message: JsonRpcMessage): void {
    this.#shared.deliver(session as SharedSession, message);
  }

  override get(request: Request, auth: AuthInfo | undefined): Reply | Promise<Reply> {
    return notSse(request) ?? serveSharedGet(request, this.#shared, auth, this.getOptions);
  }

  override delete(request: Request, auth: AuthInfo | undefined): Promise<Reply> {
    return this.#shared.delete(request, auth);
  }

  override beat(now: number): boolean {
    this.table.sweep(now);
    this.#shared.beat();
    return this.table.size > 0;
  }

  override detach(all: boolean): void {
    super.detach(all);
    // streams resumed here that another instance writes: their clients resume elsewhere
    if (!all) this.#shared.detach(this.parts.retryMs);
  }

  override close(): void {
    this.#shared.close();
    super.close();
  }
}

/**
 * A shared session's GET: its GET stream opens here (the other instances send its messages here,
 * until it ends), or a stream any instance wrote resumes from `Last-Event-ID`.
 */
async function serveSharedGet(
  request: Request,
  shared: SharedSessions,
  auth: AuthInfo | undefined,
  o: GetOptions,
): Promise<Reply> {
  const sid = header(request, "mcp-session-id");
  const last = header(request, "last-event-id");
  // the GET stream comes here, unless this GET resumes a POST's stream
  const claims = sid !== null && (last === null || last.startsWith(`${sid}_g`));
  const session = await shared.named(request, auth, claims);
  if (!(session instanceof SharedSession)) return session;
  const reply = serveGet(request, session, {
    ...o,
    open: (caller, onGone, onEnd) =>
      o.open(caller, onGone, () => {
        onEnd();
        // later: a GET that replaced this one has taken its place by then
        if (claims) queueMicrotask(() => shared.homed(session, false));
      }),
    adopt: {
      owns: (streamId) => shared.owns(session, streamId),
      resume: (streamId, seq, sink) => shared.adopt(session, streamId, seq, sink),
    },
  });
  if (claims && reply.status === 200) shared.homed(session, true);
  return reply;
}
