/**
 * The streams of shared sessions that resumed on this instance while another instance writes them
 * (`Last-Event-ID` of a stream this one does not hold): their kept events from the event store,
 * then the live ones that instance relays, until the last.
 */
import { isObject } from "../types.js";
import type { EventStore, StoredEvent } from "./event-store.js";
import type { SseWriter } from "./sse.js";

/** Whether an event's data is a JSON-RPC answer (the last event of a POST's stream). */
function isAnswer(data: string): boolean {
  try {
    const m = JSON.parse(data) as unknown;
    return isObject(m) && m.method === undefined && ("result" in m || "error" in m);
  } catch {
    return false;
  }
}

interface Adopted {
  readonly sink: SseWriter;
  /** The number of the last event written on `sink`. */
  last: number;
}

/** The streams resumed here that another instance writes, by stream id. */
export class AdoptedStreams {
  readonly #events: EventStore | undefined;
  readonly #streams = new Map<string, Adopted>();

  constructor(events: EventStore | undefined) {
    this.#events = events;
  }

  /**
   * Writes on `sink` the kept events of `streamId` after `seq`, then (a POST's stream) what is
   * relayed until its answer. Resolves true when `sink` goes on as the session's GET stream here
   * (`standalone`: the stream was a GET stream).
   */
  async adopt(streamId: string, seq: number, sink: SseWriter, standalone: boolean): Promise<boolean> {
    // listening before reading: an event relayed meanwhile is not lost, and one read twice is skipped
    const adopted: Adopted = { sink, last: seq };
    this.#streams.set(streamId, adopted);
    let kept: readonly StoredEvent[] = [];
    try {
      kept = (await this.#events?.after(streamId, seq)) ?? [];
    } catch {
      // a store that fails loses what it kept, never the live events that follow
    }
    let answered = false;
    for (const e of kept) {
      await sink.drained();
      if (!sink.open) break;
      if (e.seq <= adopted.last) continue;
      sink.event(e.data, `${streamId}.${e.seq}`);
      adopted.last = e.seq;
      answered ||= isAnswer(e.data);
    }
    if (standalone || !sink.open || answered) {
      if (this.#streams.get(streamId) === adopted) this.#streams.delete(streamId);
      if (!standalone) sink.close();
      return standalone && sink.open;
    }
    return false;
  }

  /** An event another instance relays: written on the stream's sink here, if it resumed here; `done` ends it. */
  relayed(stream: string, seq: number, data: string, done: boolean): void {
    const adopted = this.#streams.get(stream);
    if (!adopted) return;
    if (!done && seq > adopted.last) {
      adopted.sink.event(data, `${stream}.${seq}`);
      adopted.last = seq;
    }
    if (done || !adopted.sink.open) {
      this.#streams.delete(stream);
      adopted.sink.close();
    }
  }

  /** Forgets the streams whose client went away while nothing was relayed. */
  prune(): void {
    for (const [id, a] of this.#streams) if (!a.sink.open) this.#streams.delete(id);
  }

  /** Closes every stream, with a `retry:` hint when given (its client resumes it elsewhere: a drain). */
  close(retryMs?: number): void {
    for (const a of this.#streams.values()) {
      if (retryMs !== undefined) a.sink.retry(retryMs);
      a.sink.close();
    }
    this.#streams.clear();
  }
}
