/** A session's GET: its stream of messages tied to no request, or a stream resumed from `Last-Event-ID`. */
import { featuresOf } from "../eras/versions.js";
import type { Governor } from "../limits/governor.js";
import { httpError, limitReply, SERVER_ERROR } from "./answers.js";
import type { EventStore } from "./event-store.js";
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
  /** Opens an SSE body: `onGone` when its client goes away, `onEnd` once it ends in any way. */
  open(onGone: () => void, onEnd: () => void): SseWriter;
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
  if (resumed !== undefined) {
    const dot = resumed.lastIndexOf(".");
    const named = session.streams.get(resumed.slice(0, dot));
    seq = Number(resumed.slice(dot + 1));
    if (!named || dot < 0 || !Number.isInteger(seq) || seq < 0 || seq > named.seq) {
      return httpError(400, SERVER_ERROR, "Bad Request: unknown Last-Event-ID", features);
    }
    stream = named;
  } else if (stream.sink?.open) {
    return httpError(409, SERVER_ERROR, "Conflict: this session already has a GET stream open", features);
  }
  const release = o.governor.claim("sseStreams", session.caller);
  if (typeof release !== "function") return limitReply(release, features);
  const sink = o.open(() => {
    if (stream.sink === sink) stream.sink = undefined;
    session.lastActive = Date.now();
  }, release);
  if (resumed !== undefined) {
    void stream.resume(seq, sink).then(() => {
      if (stream.done && stream !== session.standalone && !stream.sink) session.forget(stream);
    });
  } else {
    // messages sent while no GET stream was open come first
    void stream.resume(stream.sent, sink, features.ssePriming, o.retryMs);
  }
  return new Reply(200, headers, sink.readable);
}
