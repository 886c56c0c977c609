/** Where the events of resumable SSE streams wait for a client that reconnects with `Last-Event-ID`. */

/** One stored event: its number within the stream and its `data` (one encoded JSON-RPC message). */
export interface StoredEvent {
  readonly seq: number;
  readonly data: string;
}

/**
 * Keeps the events of resumable SSE streams. The transport numbers the events of each stream
 * (the SSE id is `<streamId>.<seq>`) and checks that a stream belongs to the session asking, so a
 * store only keeps events and returns them in order. Methods may return promises (a shared store).
 */
export interface EventStore {
  /** Keeps event `seq` of a stream. */
  append(streamId: string, seq: number, data: string): void | Promise<void>;
  /** The stream's kept events numbered above `seq`, in order (empty when none or forgotten). */
  after(streamId: string, seq: number): readonly StoredEvent[] | Promise<readonly StoredEvent[]>;
  /** Forgets a stream: it was delivered, or its session ended. */
  drop(streamId: string): void | Promise<void>;
}

/** Options of {@link MemoryEventStore}. */
export interface MemoryEventStoreOptions {
  /** Events kept per stream; the oldest go first. Default: 1000. */
  maxEventsPerStream?: number;
  /** Characters of event data kept in all; the least recently written streams go first. Default: 32 Mi. */
  maxChars?: number;
}

interface Entry {
  events: StoredEvent[];
  chars: number;
}

/** The default event store: in memory, bounded per stream and in total. */
export class MemoryEventStore implements EventStore {
  readonly #streams = new Map<string, Entry>();
  readonly #maxEvents: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.#maxEvents = positive(options.maxEventsPerStream ?? 1000, "maxEventsPerStream");
    this.#maxChars = positive(options.maxChars ?? 32 * 1024 * 1024, "maxChars");
  }

  /** Streams currently kept. */
  get size(): number {
    return this.#streams.size;
  }

  append(streamId: string, seq: number, data: string): void {
    let entry = this.#streams.get(streamId);
    if (entry) this.#streams.delete(streamId);
    else entry = { events: [], chars: 0 };
    // re-inserted: the map's order is least recently written first
    this.#streams.set(streamId, entry);
    entry.events.push({ seq, data });
    entry.chars += data.length;
    this.#chars += data.length;
    if (entry.events.length > this.#maxEvents) {
      const gone = entry.events.shift()!;
      entry.chars -= gone.data.length;
      this.#chars -= gone.data.length;
    }
    for (const [id] of this.#streams) {
      if (this.#chars <= this.#maxChars || id === streamId) break;
      this.drop(id);
    }
  }

  after(streamId: string, seq: number): readonly StoredEvent[] {
    const events = this.#streams.get(streamId)?.events ?? [];
    return events.filter((e) => e.seq > seq);
  }

  drop(streamId: string): void {
    const entry = this.#streams.get(streamId);
    if (!entry) return;
    this.#chars -= entry.chars;
    this.#streams.delete(streamId);
  }
}

function positive(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer`);
  return n;
}
