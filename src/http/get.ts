/** A session's GET: its stream of messages tied to no request, or a stream resumed from `Last-Event-ID`. */
import { featuresOf } from "../eras/versions.js";
import type { Governor } from "../limits/governor.js";
import { httpError, limitReply, SERVER_ERROR } from "./answers.js";
import type { EventStore } from "./event-store.js";
import { accepts } from "./guard.js";
import { Reply } from "./reply.js";
import { header } from "./request.js";
import type { Session } from "./session.js";
import { SSE_HEADERS, type SseWriter } from "./sse.js";

/** What a GET needs from the handler. */
export interface GetOptions {
  readonly store: EventStore | undefined;
  readonly retryMs: number;
  /** Counts the stream as one of its caller's GET streams (`sseStreams`). */
  readonly governor: Governor;
  /** Opens an SSE body counted for `caller`: `onGone` when its client goes away, `onEnd` once it ends in any way. */
  open(caller: string, onGone: () => void, onEnd: () => void): SseWriter;
  /** A shared session's: resumes a stream of the session that another instance wrote (see `SharedSessions.adopt`). */
  readonly adopt?: {
    owns(streamId: string): boolean;
    resume(streamId: string, seq: number, sink: SseWriter): void;
  };
  /** Whether a drain has begun: a stream that opens from then on closes at once with its `retry:` hint. */
  readonly draining?: () => boolean;
}

/** 406 unless a GET accepts SSE. */
export function notSse(request: Request): Reply | undefined {
  if (accepts(header(request, "accept"), "text/event-stream")) return undefined;
  return httpError(406, SERVER_ERROR, "Not Acceptable: Accept must list text/event-stream");
}

/**
 * Opens the session's GET stream (409 when one is open), or with `Last-Event-ID` resumes the stream
 * it names (400 for an unknown one); 429 when the caller has its share of GET streams open.
 */
export function serveGet(request: Request, session: Session, o: GetOptions): Reply {
  const features = featuresOf(session.connection.protocolVersion!);
  const headers = { ...SSE_HEADERS, "mcp-session-id": session.id };
  const last = header(request, "last-event-id");
  const resumed = last !== null && o.store ? last : undefined;
  let stream = session.standalone;
  let seq = 0;
  let adopted: string | undefined;
  if (resumed !== undefined) {
    const dot = resumed.lastIndexOf(".");
    const name = resumed.slice(0, dot);
    const named = session.streams.get(name);
    seq = Number(resumed.slice(dot + 1));
    const valid = dot > 0 && Number.isInteger(seq) && seq >= 0;
    // a stream this instance does not hold, of this session: another instance wrote it
    if (!named && valid && o.adopt?.owns(name)) adopted = name;
    else if (!named || !valid || seq > named.seq) {
      return httpError(400, SERVER_ERROR, "Bad Request: unknown Last-Event-ID", features);
    } else stream = named;
  } else if (stream.sink?.open) {
    return httpError(409, SERVER_ERROR, "Conflict: this session already has a GET stream open", features);
  }
  const release = o.governor.claim("sseStreams", session.caller);
  if (typeof release !== "function") return limitReply(release, features);
  const sink = o.open(
    session.caller,
    () => {
      if (stream.sink === sink) stream.sink = undefined;
      session.lastActive = Date.now();
    },
    release,
  );
  if (o.draining?.()) {
    // a drain began while this GET waited (a shared session is read from its store): its client
    // resumes elsewhere (from the same Last-Event-ID), as those open when it began do
    sink.retry(o.retryMs);
    sink.close();
  } else if (adopted !== undefined) o.adopt!.resume(adopted, seq, sink);
  else if (resumed !== undefined) {
    void stream.resume(seq, sink).then(() => {
      if (stream.done && stream !== session.standalone && !stream.sink) session.forget(stream);
    });
  } else {
    // messages sent while no GET stream was open come first
    void stream.resume(stream.sent, sink, features.ssePriming, o.retryMs);
  }
  return new Reply(200, headers, sink.readable);
}
