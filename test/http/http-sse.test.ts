// Streamable HTTP, exact wire: SSE answers, the GET stream, resumability, disconnects, slow readers.
import { describe, expect, it } from "vitest";
import { type EventStore, type HttpHandler, MemoryEventStore } from "../../src/http/index.js";
import {
  call,
  initialize,
  messagesOf,
  post,
  readEvents,
  request,
  sleep,
  useTestServers,
} from "../http-helpers.js";

const setup = useTestServers();
const getStream = (handler: HttpHandler, sid: string, extra: { [k: string]: string } = {}) =>
  request(handler, "GET", { accept: "text/event-stream", "mcp-session-id": sid, ...extra });
const log = (data: string) =>
  JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data } });

describe("SSE answers to POST", () => {
  it("switches to SSE when a related message comes first: priming, the logs, then the result", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    const res = await post(handler, call(3, "log"), { "mcp-session-id": sid });
    expect(res.status).toBe(200);
    expect(Object.fromEntries(res.headers)).toMatchObject({
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      "mcp-session-id": sid,
    });
    const events = await readEvents(res);
    const stream = events[0]!.id!.split(".")[0];
    expect(stream).toMatch(/^[0-9a-f]{24}$/);
    expect(events).toEqual([
      { id: `${stream}.0`, retry: 1000, data: "" },
      { id: `${stream}.1`, data: log("one") },
      { id: `${stream}.2`, data: log("two") },
      {
        id: `${stream}.3`,
        data: '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"logged"}]}}',
      },
    ]);
  });

  it("gives a 2025-06-18 session event ids but no priming event", async () => {
    const { handler } = setup();
    const sid = await initialize(handler, "2025-06-18");
    const events = await readEvents(await post(handler, call(3, "log"), { "mcp-session-id": sid }));
    expect(events.map((e) => e.id?.split(".")[1])).toEqual(["1", "2", "3"]);
    expect(events.every((e) => e.data !== "" && e.retry === undefined)).toBe(true);
  });

  it("without an event store: no ids, no priming, no resumption", async () => {
    const { handler } = setup({ eventStore: false });
    const sid = await initialize(handler);
    const events = await readEvents(await post(handler, call(3, "log"), { "mcp-session-id": sid }));
    expect(events).toEqual([
      { data: log("one") },
      { data: log("two") },
      { data: '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"logged"}]}}' },
    ]);
    expect((await getStream(handler, sid, { "last-event-id": "x.0" })).status).toBe(200);
  });
});

describe("the GET stream", () => {
  it("406 without text/event-stream; 400 without a session; 404 for an unknown one", async () => {
    const { handler } = setup();
    expect(
      (await request(handler, "GET", { accept: "application/json", "mcp-session-id": "x" })).status,
    ).toBe(406);
    const none = await request(handler, "GET", { accept: "text/event-stream" });
    expect(none.status).toBe(400);
    expect((await getStream(handler, "unknown")).status).toBe(404);
  });

  it("carries notifications not tied to a request; a second concurrent GET is 409", async () => {
    const { server, handler } = setup();
    const sid = await initialize(handler);
    const res = await getStream(handler, sid);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const second = await getStream(handler, sid);
    expect(second.status).toBe(409);
    expect(await second.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Conflict: this session already has a GET stream open" },
    });
    server.tool("added", { description: "new", run: () => "" });
    const events = await readEvents(res, 2);
    expect(events[0]).toMatchObject({ data: "", retry: 1000 });
    expect(events[1]).toMatchObject({
      data: '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}',
    });
    expect(events[1]!.id).toMatch(/^[0-9a-f]{24}\.1$/);
  });

  it("delivers what was sent while no GET stream was open when one opens", async () => {
    const { server, handler } = setup();
    const sid = await initialize(handler);
    await post(
      handler,
      { jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "note://a" } },
      { "mcp-session-id": sid },
    );
    server.resourceUpdated("note://a");
    const events = await readEvents(await getStream(handler, sid), 2);
    expect(messagesOf(events)).toEqual([
      { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "note://a" } },
    ]);
  });

  it("writes keep-alive comments on a quiet stream", async () => {
    const { handler } = setup({ keepAliveMs: 20 });
    const sid = await initialize(handler);
    const reader = (await getStream(handler, sid)).body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const end = Date.now() + 2000;
    while (!text.includes(": keepalive\n\n") && Date.now() < end) text += (await reader.read()).value;
    await reader.cancel();
    expect(text).toContain(": keepalive\n\n");
  });

  it("drops a client that stops reading once its backlog passes maxBufferedBytes", async () => {
    const { server, handler } = setup({ maxBufferedBytes: 1024 });
    const sid = await initialize(handler);
    await post(
      handler,
      { jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "note://a" } },
      { "mcp-session-id": sid },
    );
    const res = await getStream(handler, sid);
    expect((await getStream(handler, sid)).status).toBe(409);
    for (let i = 0; i < 1000; i++) server.resourceUpdated("note://a");
    await sleep(10);
    // the unread stream is gone: the old body fails, a new GET is accepted and gets the rest, paced by its reader
    await expect(res.text()).rejects.toThrow("SSE client dropped");
    const again = await getStream(handler, sid);
    expect(again.status).toBe(200);
    const rest = messagesOf(await readEvents(again, Number.POSITIVE_INFINITY, 300));
    expect(rest.length).toBeGreaterThan(500);
    expect(rest.length).toBeLessThan(1000);
    expect(new Set(rest.map((m) => m.method))).toEqual(new Set(["notifications/resources/updated"]));
  });

  it("drops a client that stays behind for 4 keep-alive periods", async () => {
    const { server, handler } = setup({ keepAliveMs: 20 });
    const sid = await initialize(handler);
    await post(
      handler,
      { jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "note://a" } },
      { "mcp-session-id": sid },
    );
    const res = await getStream(handler, sid);
    for (let i = 0; i < 400; i++) server.resourceUpdated("note://a");
    await sleep(200);
    await expect(res.text()).rejects.toThrow("SSE client dropped");
  });
});

describe("resumability", () => {
  it("closeSseStream: the POST stream closes with retry; GET + Last-Event-ID delivers the result", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    const events = await readEvents(await post(handler, call(9, "reconnect"), { "mcp-session-id": sid }));
    const id = events[0]!.id!;
    expect(events).toEqual([
      { id, retry: 1000, data: "" },
      { retry: 1000, data: "" },
    ]);
    const resumed = await getStream(handler, sid, { "last-event-id": id });
    expect(resumed.status).toBe(200);
    const after = await readEvents(resumed);
    expect(after).toEqual([
      {
        id: `${id.split(".")[0]}.1`,
        data: '{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"closed=true"}]}}',
      },
    ]);
  });

  it("an event store whose after() rejects: the resumed stream closes with nothing replayed, and nothing is unhandled", async () => {
    const memory = new MemoryEventStore();
    const store: EventStore = {
      append: (...a) => memory.append(...a),
      drop: (id) => memory.drop(id),
      after: () => Promise.reject(new Error("store down")),
    };
    const { handler } = setup({ eventStore: store });
    const sid = await initialize(handler);
    const events = await readEvents(await post(handler, call(9, "reconnect"), { "mcp-session-id": sid }));
    await sleep(60); // the answer is written (to the store only) before the client resumes
    const resumed = await getStream(handler, sid, { "last-event-id": events[0]!.id! });
    expect(resumed.status).toBe(200);
    expect(await readEvents(resumed)).toEqual([]);
    const fresh = await getStream(handler, sid);
    expect(fresh.status).toBe(200);
    await fresh.body!.cancel();
  });

  it("an event store whose append() and drop() throw: the SSE answer still arrives whole, and the stream closes", async () => {
    const store: EventStore = {
      append: () => {
        throw new Error("store full");
      },
      drop: () => {
        throw new Error("store down");
      },
      after: () => [],
    };
    const { handler } = setup({ eventStore: store });
    const sid = await initialize(handler);
    const events = await readEvents(await post(handler, call(4, "log"), { "mcp-session-id": sid }));
    expect(messagesOf(events)).toEqual([
      JSON.parse(log("one")),
      JSON.parse(log("two")),
      { jsonrpc: "2.0", id: 4, result: { content: [{ type: "text", text: "logged" }] } },
    ]);
    const del = await request(handler, "DELETE", { "mcp-session-id": sid });
    expect(del.status).toBe(204);
  });

  it("closeSseStream is false for a 2025-06-18 session (no priming, nothing to resume from)", async () => {
    const { handler } = setup();
    const sid = await initialize(handler, "2025-06-18");
    const res = await post(handler, call(9, "reconnect"), { "mcp-session-id": sid });
    expect(await res.json()).toMatchObject({ result: { content: [{ text: "closed=false" }] } });
  });

  it("a client that disconnects is not cancelled; resuming replays what it missed", async () => {
    const { handler, seen } = setup();
    const sid = await initialize(handler);
    const [priming] = await readEvents(await post(handler, call(4, "log"), { "mcp-session-id": sid }), 1);
    await sleep(30);
    const missed = await readEvents(await getStream(handler, sid, { "last-event-id": priming!.id! }));
    expect(messagesOf(missed)).toEqual([
      JSON.parse(log("one")),
      JSON.parse(log("two")),
      { jsonrpc: "2.0", id: 4, result: { content: [{ type: "text", text: "logged" }] } },
    ]);
    expect(seen.cancelled).toBe(0);
  });

  it("replays after the given event only, and from that stream only", async () => {
    const { handler } = setup();
    const a = await initialize(handler);
    const b = await initialize(handler);
    const events = await readEvents(await post(handler, call(4, "reconnect"), { "mcp-session-id": a }));
    const id = events[0]!.id!;
    for (const bad of [id.replace(/\.0$/, ".7"), "nonsense", `${id.split(".")[0]}.-1`]) {
      expect((await getStream(handler, a, { "last-event-id": bad })).status).toBe(400);
    }
    const other = await getStream(handler, b, { "last-event-id": id });
    expect(other.status).toBe(400);
    expect(await other.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Bad Request: unknown Last-Event-ID" },
    });
    const mine = await readEvents(await getStream(handler, a, { "last-event-id": id }));
    expect(messagesOf(mine)).toHaveLength(1);
  });

  it("ending the session closes its open streams", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    const res = await getStream(handler, sid);
    await request(handler, "DELETE", { "mcp-session-id": sid });
    const events = await readEvents(res);
    expect(events).toHaveLength(1); // the priming event, then the end
  });
});
