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
  /** Keeps event `seq` of a stream of session `sessionId` (for per-session quotas). */
  append(streamId: string, seq: number, data: string, sessionId?: string): void | Promise<void>;
  /** The stream's kept events numbered above `seq`, in order (empty when none or forgotten). */
  after(streamId: string, seq: number): readonly StoredEvent[] | Promise<readonly StoredEvent[]>;
  /** Forgets a stream: it was delivered, or its session ended. */
  drop(streamId: string): void | Promise<void>;
}

/** Options of {@link MemoryEventStore}. */
export interface MemoryEventStoreOptions {
  /** Events kept per stream; the oldest go first. Default: 1000. */
  maxEventsPerStream?: number;
  /** Characters kept per stream; the oldest events go first, and a larger event is not kept. Default: 4 Mi. */
  maxCharsPerStream?: number;
  /** Characters kept per session; its least recently written streams go first. Default: 8 Mi. */
  maxCharsPerSession?: number;
  /** Characters kept in all; when full, a new event is not kept (no session loses what it has). Default: 32 Mi. */
  maxChars?: number;
}

interface Entry {
  readonly events: StoredEvent[];
  chars: number;
  readonly owner: Owner;
}

interface Owner {
  readonly key: string | undefined;
  /** Its streams, least recently written first. */
  readonly streams: Map<string, Entry>;
  chars: number;
}

/**
 * The default event store: in memory, bounded per stream, per session and in total. Quotas only
 * ever take from the session that writes, so one session can never evict another's pending answer;
 * an event that fits nowhere is delivered live but not kept (a client resuming misses it).
 */
export class MemoryEventStore implements EventStore {
  readonly #streams = new Map<string, Entry>();
  readonly #owners = new Map<string | undefined, Owner>();
  readonly #maxEvents: number;
  readonly #maxStream: number;
  readonly #maxSession: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.#maxEvents = positive(options.maxEventsPerStream ?? 1000, "maxEventsPerStream");
    this.#maxStream = positive(options.maxCharsPerStream ?? 4 * 1024 * 1024, "maxCharsPerStream");
    this.#maxSession = positive(options.maxCharsPerSession ?? 8 * 1024 * 1024, "maxCharsPerSession");
    this.#maxChars = positive(options.maxChars ?? 32 * 1024 * 1024, "maxChars");
  }

  /** Streams currently kept. */
  get size(): number {
    return this.#streams.size;
  }

  /** Characters currently kept. */
  get chars(): number {
    return this.#chars;
  }

  append(streamId: string, seq: number, data: string, sessionId?: string): void {
    const size = data.length;
    if (size > this.#maxStream || size > this.#maxSession) return;
    let entry = this.#streams.get(streamId);
    if (!entry) {
      let owner = this.#owners.get(sessionId);
      if (!owner) {
        owner = { key: sessionId, streams: new Map(), chars: 0 };
        this.#owners.set(sessionId, owner);
      }
      entry = { events: [], chars: 0, owner };
      this.#streams.set(streamId, entry);
    }
    const owner = entry.owner;
    // re-inserted: the owner's map is least recently written first
    owner.streams.delete(streamId);
    owner.streams.set(streamId, entry);
    entry.events.push({ seq, data });
    this.#count(entry, size);
    while (entry.events.length > this.#maxEvents || entry.chars > this.#maxStream) this.#shift(entry);
    for (const [id, other] of owner.streams) {
      if (owner.chars <= this.#maxSession) break;
      if (other !== entry) this.drop(id);
    }
    while (owner.chars > this.#maxSession) this.#shift(entry);
    // the newest event is last and fits its quotas; only the total can still be over
    if (this.#chars > this.#maxChars) this.#count(entry, -entry.events.pop()!.data.length);
  }

  after(streamId: string, seq: number): readonly StoredEvent[] {
    const events = this.#streams.get(streamId)?.events ?? [];
    return events.filter((e) => e.seq > seq);
  }

  drop(streamId: string): void {
    const entry = this.#streams.get(streamId);
    if (!entry) return;
    this.#count(entry, -entry.chars);
    this.#streams.delete(streamId);
    const owner = entry.owner;
    owner.streams.delete(streamId);
    if (owner.streams.size === 0) this.#owners.delete(owner.key);
  }

  #shift(entry: Entry): void {
    this.#count(entry, -entry.events.shift()!.data.length);
  }

  #count(entry: Entry, chars: number): void {
    entry.chars += chars;
    entry.owner.chars += chars;
    this.#chars += chars;
  }
}

function positive(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer`);
  return n;
}
