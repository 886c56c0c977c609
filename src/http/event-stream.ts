/**
 * One resumable SSE stream (the answer to one POST, or a session's GET stream): its events numbered
 * and, with an event store, kept under their ids so that a client that lost the connection resumes.
 */
import type { EventStore } from "./event-store.js";
import type { SseWriter } from "./sse.js";

/** Runs a store call that may be async without letting its failure escape, thrown or rejected. */
function quietly(call: () => void | Promise<void>): void {
  try {
    const result = call();
    if (result && typeof result.catch === "function") result.catch(() => {});
  } catch {
    // a store that fails loses its events, never the answer that is being written
  }
}

/**
 * Hears the events a stream writes while no connection of its own is live (a shared session's
 * stream may have resumed on another instance); `done` once with the last.
 */
export type Orphaned = (stream: string, seq: number, data: string, done: boolean) => void;

/**
 * One logical SSE stream (the answer to one POST, or a session's GET stream). Its events are
 * numbered; with a store they carry the id `<streamId>.<seq>` and are kept, so a client that lost
 * the connection resumes with `Last-Event-ID` on a new one. At most one connection is live at a time.
 */
export class EventStream {
  readonly id: string;
  /** Number of the last event written. */
  seq = 0;
  /** The live connection, if any. */
  sink: SseWriter | undefined;
  /** The final answer has been written. */
  done = false;
  readonly #store: EventStore | undefined;
  readonly #sessionId: string | undefined;
  readonly #orphaned: Orphaned | undefined;
  #pending: { seq: number; data: string }[] | undefined;
  #sent = 0;

  constructor(id: string, store: EventStore | undefined, sessionId?: string, orphaned?: Orphaned) {
    this.id = id;
    this.#store = store;
    this.#sessionId = sessionId;
    this.#orphaned = orphaned;
  }

  /** Whether events carry ids and are kept. */
  get resumable(): boolean {
    return this.#store !== undefined;
  }

  /** The SSE id of event `seq`. */
  eventId(seq: number): string | undefined {
    return this.#store ? `${this.id}.${seq}` : undefined;
  }

  /** Writes one encoded message: kept (when resumable) and sent on the live connection, if any. */
  write(data: string): void {
    const seq = ++this.seq;
    if (this.#store) quietly(() => this.#store!.append(this.id, seq, data, this.#sessionId));
    if (this.#pending) this.#pending.push({ seq, data });
    else this.#send(seq, data);
    if (this.#orphaned && !this.sink?.open) this.#orphaned(this.id, seq, data, false);
  }

  /** Number of the last event written on a live connection. */
  get sent(): number {
    return this.#sent;
  }

  #send(seq: number, data: string): void {
    if (this.sink?.event(data, this.eventId(seq))) this.#sent = seq;
  }

  /** Makes `sink` the live connection; with `prime`, first writes an event with an id and empty data. */
  attach(sink: SseWriter, prime: boolean, retryMs: number | undefined): void {
    this.sink?.close();
    this.sink = sink;
    if (prime && this.#store) sink.event("", this.eventId(this.seq), retryMs);
  }

  /** Closes the live connection without ending the stream (the client resumes later). */
  detach(retryMs: number | undefined): void {
    const sink = this.sink;
    this.sink = undefined;
    if (!sink) return;
    if (retryMs !== undefined) sink.retry(retryMs);
    sink.close();
  }

  /** Ends the stream: the final answer is out; the live connection closes after it. */
  finish(): void {
    this.done = true;
    if (this.#orphaned && !this.sink?.open) this.#orphaned(this.id, this.seq, "", true);
    this.sink?.close();
    this.sink = undefined;
  }

  /**
   * Makes `sink` the live connection: with `prime`, first an event with the id of `afterSeq` and
   * empty data; then the kept events after `afterSeq`; then live ones.
   */
  async resume(afterSeq: number, sink: SseWriter, prime = false, retryMs?: number): Promise<void> {
    this.sink?.close();
    this.sink = sink;
    if (!this.#store) return;
    if (prime) sink.event("", this.eventId(afterSeq), retryMs);
    const pending: { seq: number; data: string }[] = [];
    this.#pending = pending;
    let last = afterSeq;
    try {
      for (const e of await this.#kept(afterSeq)) {
        await sink.drained();
        if (this.sink !== sink) return;
        this.#send(e.seq, e.data);
        last = Math.max(last, e.seq);
      }
    } finally {
      if (this.#pending === pending) this.#pending = undefined;
    }
    if (this.sink !== sink) return;
    for (const e of pending) if (e.seq > last) this.#send(e.seq, e.data);
    if (this.done) {
      sink.close();
      this.sink = undefined;
    }
  }

  /** The kept events after `afterSeq`; none when the store fails (live events still flow, nothing rejects). */
  async #kept(afterSeq: number): Promise<readonly { seq: number; data: string }[]> {
    try {
      return await this.#store!.after(this.id, afterSeq);
    } catch {
      return [];
    }
  }

  /** Forgets the kept events. */
  drop(): void {
    if (this.#store) quietly(() => this.#store!.drop(this.id));
  }
}
