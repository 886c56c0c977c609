// Limits of the Streamable HTTP transport, exact wire: batch size, linear-time batches, the answer
// size of a batch, event-store quotas, sessions per principal, the anonymous creation rate, Host syntax.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AuthInfo } from "../../src/connection.js";
import {
  createHttpHandler,
  type EventStore,
  type HttpHandler,
  type HttpHandlerOptions,
  MemoryEventStore,
} from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";
import {
  call,
  initBody,
  initialize,
  messagesOf,
  post,
  readEvents,
  request,
  sleep,
  useTestServers,
} from "../http-helpers.js";

const setup = useTestServers();
const error = (code: number, message: string) => ({ jsonrpc: "2.0", error: { code, message } });
const echoes = (n: number, text = "x") => Array.from({ length: n }, (_, i) => call(i + 1, "echo", { text }));

describe("batches", () => {
  it("a session's batch holds at most maxBatchSize messages (default 100)", async () => {
    const { handler } = setup();
    const sid = await initialize(handler, "2025-03-26");
    const ok = await post(handler, echoes(100), { "mcp-session-id": sid });
    expect(await ok.json()).toHaveLength(100);
    const big = await post(handler, echoes(101), { "mcp-session-id": sid });
    expect(big.status).toBe(400);
    expect(await big.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid Request: a batch may hold at most 100 messages" },
    });
    const custom = setup({ maxBatchSize: 2 });
    const sid2 = await initialize(custom.handler, "2025-03-26");
    expect((await post(custom.handler, echoes(3), { "mcp-session-id": sid2 })).status).toBe(400);
  });

  it("stateless HTTP refuses batches unless maxBatchSize allows them", async () => {
    const { handler } = setup({ sessions: false });
    const res = await post(handler, echoes(2));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(error(-32600, "Invalid Request: batches are off"));
  });

  it("a batch adds a constant number of abort listeners, not one per request (linear time)", async () => {
    const { handler } = setup({ sessions: false, maxBatchSize: 1000 });
    const add = vi.spyOn(EventTarget.prototype, "addEventListener");
    try {
      const res = await post(handler, echoes(500));
      expect(await res.json()).toHaveLength(500);
      const aborts = add.mock.calls.filter(([type]) => type === "abort").length;
      expect(aborts).toBeLessThan(5);
    } finally {
      add.mockRestore();
    }
  });

  it("over a session a batch shares no signal at all", async () => {
    const { handler } = setup();
    const sid = await initialize(handler, "2025-03-26");
    const add = vi.spyOn(EventTarget.prototype, "addEventListener");
    try {
      await (await post(handler, echoes(50), { "mcp-session-id": sid })).json();
      expect(add.mock.calls.filter(([type]) => type === "abort")).toEqual([]);
    } finally {
      add.mockRestore();
    }
  });

  it("the answers past maxBatchAnswerBytes become errors that ask for the request alone", async () => {
    const { handler } = setup({ maxBatchAnswerBytes: 1000 });
    const sid = await initialize(handler, "2025-03-26");
    const text = "a".repeat(400);
    const res = await post(handler, echoes(3, text), { "mcp-session-id": sid });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text }] } },
      { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text }] } },
      {
        jsonrpc: "2.0",
        id: 3,
        error: {
          code: -32000,
          message: "Server error: the batch's answer passed 1000 bytes; send this request on its own",
        },
      },
    ]);
  });
});

describe("MemoryEventStore quotas", () => {
  it("one session's flood never evicts another session's pending answer", () => {
    const store = new MemoryEventStore({ maxChars: 1000, maxCharsPerSession: 600, maxCharsPerStream: 300 });
    store.append("b1", 1, "B's answer", "B");
    for (let i = 1; i <= 200; i++) store.append(`a${i % 7}`, i, "x".repeat(50), "A");
    expect(store.after("b1", 0)).toEqual([{ seq: 1, data: "B's answer" }]);
    expect(store.chars).toBeLessThanOrEqual(1000);
  });

  it("the total cap counts the stream being written: a new event that does not fit is not kept", () => {
    const store = new MemoryEventStore({ maxChars: 100, maxCharsPerSession: 100, maxCharsPerStream: 100 });
    store.append("other", 1, "o".repeat(60), "S1");
    for (let i = 1; i <= 10; i++) store.append("s", i, "y".repeat(30), "S2");
    expect(store.after("other", 0)).toHaveLength(1);
    expect(store.after("s", 0).map((e) => e.seq)).toEqual([1]);
    expect(store.chars).toBe(90);
  });

  it("a stream keeps its newest events within maxCharsPerStream; a session drops its own oldest streams", () => {
    const store = new MemoryEventStore({ maxCharsPerStream: 100, maxCharsPerSession: 150 });
    for (let i = 1; i <= 5; i++) store.append("s1", i, "z".repeat(40), "A");
    expect(store.after("s1", 0).map((e) => e.seq)).toEqual([4, 5]);
    store.append("s2", 1, "w".repeat(80), "A");
    expect(store.after("s1", 0)).toEqual([]);
    expect(store.after("s2", 0)).toHaveLength(1);
    store.append("huge", 1, "h".repeat(101), "A");
    expect(store.after("huge", 0)).toEqual([]);
    expect(() => new MemoryEventStore({ maxCharsPerSession: 0 })).toThrow(
      "maxCharsPerSession must be a positive integer",
    );
  });

  it("over HTTP: another session's flood never evicts the answer a client is about to resume", async () => {
    const store = new MemoryEventStore({ maxChars: 1500, maxCharsPerSession: 800, maxCharsPerStream: 400 });
    const { handler } = setup({ eventStore: store });
    const b = await initialize(handler);
    const [priming] = await readEvents(await post(handler, call(9, "reconnect"), { "mcp-session-id": b }));
    await sleep(60); // B's answer is written to the store while B is away
    const a = await initialize(handler);
    await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        await readEvents(await post(handler, call(i + 1, "reconnect"), { "mcp-session-id": a }));
      }),
    );
    await sleep(60);
    const resumed = await request(handler, "GET", {
      accept: "text/event-stream",
      "mcp-session-id": b,
      "last-event-id": priming!.id!,
    });
    expect(messagesOf(await readEvents(resumed))).toEqual([
      { jsonrpc: "2.0", id: 9, result: { content: [{ type: "text", text: "closed=true" }] } },
    ]);
    expect(store.chars).toBeLessThanOrEqual(1500);
  });

  it("the transport tells the store which session a stream belongs to", async () => {
    const seen: (string | undefined)[] = [];
    const memory = new MemoryEventStore();
    const store: EventStore = {
      append: (id, seq, data, session) => {
        seen.push(session);
        memory.append(id, seq, data, session);
      },
      after: (id, seq) => memory.after(id, seq),
      drop: (id) => memory.drop(id),
    };
    const { handler } = setup({ eventStore: store });
    const sid = await initialize(handler);
    await (await post(handler, call(1, "log"), { "mcp-session-id": sid })).text();
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set([sid]));
  });
});

const byToken = (req: Request): AuthInfo | undefined => {
  const t = req.headers.get("authorization");
  return t === null ? undefined : { subject: t.slice("Bearer ".length) };
};
const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
const alice = { authorization: "Bearer alice" };

/** A server whose `hold` tool keeps its session busy until `release()`. */
function latched(options: HttpHandlerOptions) {
  const server = new McpServer({ name: "latched", version: "1.0.0" });
  let open!: () => void;
  let gate = new Promise<void>((r) => (open = r));
  server.tool("hold", { run: () => gate.then(() => "held") });
  const handler = createHttpHandler(server, { authenticate: byToken, ...options });
  handlers.push(handler);
  /** Starts `hold` on a session and resolves once the session is busy with it. */
  const hold = async (sid: string, headers: { [k: string]: string } = {}) => {
    const res = post(handler, call(1, "hold"), { ...headers, "mcp-session-id": sid });
    await sleep(5);
    return [res]; // wrapped: awaiting hold() must not wait for the answer
  };
  const release = () => {
    open();
    gate = new Promise<void>((r) => (open = r));
  };
  return { handler, hold, release };
}
const handlers: HttpHandler[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

async function openAs(handler: HttpHandler, headers: { [k: string]: string } = {}) {
  const res = await post(handler, initBody(), headers);
  expect(res.status).toBe(200);
  await res.text();
  return res.headers.get("mcp-session-id")!;
}

describe("sessions per principal and anonymous creation", () => {
  it("a principal at maxSessionsPerPrincipal replaces its own idle session; all busy → 429; others unaffected", async () => {
    const { handler, hold, release } = latched({ maxSessionsPerPrincipal: 2 });
    const a1 = await openAs(handler, alice);
    const a2 = await openAs(handler, alice);
    const bob = await openAs(handler, { authorization: "Bearer bob" });
    const a3 = await openAs(handler, alice); // replaces a1, the least recently used
    expect((await post(handler, ping, { ...alice, "mcp-session-id": a1 })).status).toBe(404);
    const held = [...(await hold(a2, alice)), ...(await hold(a3, alice))];
    const full = await post(handler, initBody(), alice);
    expect(full.status).toBe(429);
    expect(full.headers.get("retry-after")).toBe("5");
    expect(await full.json()).toEqual({
      jsonrpc: "2.0",
      error: {
        code: -32000,
        message: "Too Many Requests: this caller holds its share of sessions (2)",
        data: { limit: "sessions", scope: "principal", max: 2, retryAfterMs: 5000 },
      },
    });
    expect((await post(handler, ping, { authorization: "Bearer bob", "mcp-session-id": bob })).status).toBe(
      200,
    );
    release();
    for (const res of held) expect((await (await res).json()).result.content[0].text).toBe("held");
  });

  it("a flood of anonymous initializes never evicts an authenticated or a busy session", async () => {
    const { handler, hold, release } = latched({ maxSessions: 3 });
    const a = await openAs(handler, alice);
    const busy = await openAs(handler);
    const held = await hold(busy);
    let idle = await openAs(handler);
    // each new anonymous session takes the place of the idle anonymous one, never alice's
    for (let i = 0; i < 5; i++) {
      const next = await openAs(handler);
      expect((await post(handler, ping, { "mcp-session-id": idle })).status).toBe(404);
      idle = next;
    }
    expect((await post(handler, ping, { ...alice, "mcp-session-id": a })).status).toBe(200);
    // with no idle anonymous session left, a new one gets 503 rather than alice's place
    held.push(...(await hold(idle)));
    const full = await post(handler, initBody());
    expect(full.status).toBe(503);
    expect(await full.json()).toEqual({
      jsonrpc: "2.0",
      error: {
        code: -32000,
        message: "Service Unavailable: the server holds as many sessions as it may (3)",
        data: { limit: "sessions", scope: "server", max: 3, retryAfterMs: 5000 },
      },
    });
    expect((await post(handler, ping, { ...alice, "mcp-session-id": a })).status).toBe(200);
    release();
    await Promise.all(held);
  });

  it("anonymous sessions are created at most anonymousSessionsPerMinute; authenticated ones are not limited", async () => {
    const { handler } = latched({ anonymousSessionsPerMinute: 2 });
    await openAs(handler);
    await openAs(handler);
    const third = await post(handler, initBody());
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await third.json()).toEqual(
      error(-32000, "Too Many Requests: new sessions without credentials come too fast"),
    );
    expect(typeof (await openAs(handler, { authorization: "Bearer carol" }))).toBe("string");
  });
});

describe("Host", () => {
  it("a malformed Host gets 400 with a JSON-RPC error body, even when every host is allowed", async () => {
    for (const allowedHosts of [undefined, "*" as const]) {
      const { handler } = setup(allowedHosts ? { allowedHosts } : {});
      for (const host of ["localhost:3000@evil.com", "127.0.0.1:3000/x", "a b", "", "[::1"]) {
        const res = await post(handler, initBody(), { host });
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual(error(-32000, "Bad Request: the Host header is malformed"));
      }
    }
    const { handler } = setup();
    expect((await request(handler, "GET", { host: "[::1]:3000", accept: "text/event-stream" })).status).toBe(
      400,
    );
  });
});
