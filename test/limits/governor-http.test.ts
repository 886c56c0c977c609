// The governor over Streamable HTTP, on the wire: a caller at its share is refused (429 with
// Retry-After and a JSON-RPC error body naming the limit, in both eras); another caller keeps what
// it holds and may still take its own share. Each case is a finding of the review it answers.
import { describe, expect, it } from "vitest";
import { MemoryTaskStore } from "../../src/index.js";
import {
  as,
  governed,
  httpOf,
  modern,
  openSession,
  refusal,
  sessionPost,
  until,
  WITH_TASKS,
} from "../governor-helpers.js";
import { initBody, messagesOf, post, readEvents, request } from "../http-helpers.js";
import { SseMessages } from "../redis-helpers.js";

const call = (name: string) => ({ name, arguments: {} });

/** Starts `tool` as a 2026-07-28 task of `who`: its task id, or the refused response. */
async function startTask(handler: ReturnType<typeof httpOf>, who: string, id: number, tool: string) {
  const res = await modern(handler, who, id, "tools/call", call(tool), WITH_TASKS);
  const body = await res.json();
  return { res, body, taskId: body.result?.taskId as string | undefined };
}

describe("tasks", () => {
  it("a full task store refuses alice's next task, and bob's live task stays his to get and cancel", async () => {
    const { server, open } = governed(undefined, { tasks: { store: new MemoryTaskStore({ maxTasks: 50 }) } });
    const handler = httpOf(server);
    const bob = await startTask(handler, "bob", 1, "hold");
    expect(bob.body.result).toMatchObject({ resultType: "task", status: "working" });
    let refused: Response | undefined;
    for (let i = 0; i < 60; i++) {
      const alice = await startTask(handler, "alice", 100 + i, "quick");
      if (!alice.taskId) refused ??= alice.res;
    }
    // bob's task is still his: a full store refused alice rather than forget it
    const get = await modern(handler, "bob", 2, "tasks/get", { taskId: bob.taskId }, WITH_TASKS);
    expect((await get.json()).result).toMatchObject({ taskId: bob.taskId, status: "working" });
    const cancel = await modern(handler, "bob", 3, "tasks/cancel", { taskId: bob.taskId }, WITH_TASKS);
    expect([cancel.status, (await cancel.json()).result.resultType]).toEqual([200, "complete"]);
    expect(refused?.status).toBe(503);
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(3000);
    open();
  });

  it("alice at her share of tasks gets 429; bob still starts his", async () => {
    const { server } = governed({ tasks: { perPrincipal: 3 } });
    const handler = httpOf(server);
    for (let i = 0; i < 3; i++) expect((await startTask(handler, "alice", i, "quick")).taskId).toBeDefined();
    const fourth = await startTask(handler, "alice", 9, "quick");
    expect(fourth.res.status).toBe(429);
    const retryMs = fourth.body.error.data.retryAfterMs;
    expect(retryMs).toBeGreaterThan(3_500_000);
    expect(fourth.res.headers.get("retry-after")).toBe(String(Math.ceil(retryMs / 1000)));
    expect(fourth.body).toEqual(
      refusal(9, "tasks", 3, "Too Many Requests: this caller holds its share of tasks (3)", retryMs),
    );
    expect((await startTask(handler, "bob", 10, "quick")).taskId).toBeDefined();
  });

  it("running tasks are bounded per principal: the 33rd waiting task is refused until one ends", async () => {
    const { server, open } = governed();
    const handler = httpOf(server);
    const ids: string[] = [];
    for (let i = 0; i < 32; i++) ids.push((await startTask(handler, "alice", i, "hold")).taskId!);
    const more = await startTask(handler, "alice", 99, "hold");
    expect([more.res.status, more.res.headers.get("retry-after")]).toEqual([429, "5"]);
    expect(more.body).toEqual(
      refusal(
        99,
        "runningTasks",
        32,
        "Too Many Requests: this caller holds its share of running tasks (32)",
        5000,
      ),
    );
    expect((await startTask(handler, "bob", 100, "hold")).taskId).toBeDefined();
    const cancel = await modern(handler, "alice", 101, "tasks/cancel", { taskId: ids[0] }, WITH_TASKS);
    expect(cancel.status).toBe(200);
    expect((await startTask(handler, "alice", 102, "hold")).taskId).toBeDefined();
    open();
  });
});

/** Opens a listen of `who`; its response (an SSE stream once admitted). */
const listen = (
  handler: ReturnType<typeof httpOf>,
  who: string | undefined,
  id: number,
  notifications: object,
) => modern(handler, who, id, "subscriptions/listen", { notifications });

describe("listen streams", () => {
  it("alice at her share of listens gets 429; bob's and an anonymous listen open", async () => {
    const { server } = governed();
    const handler = httpOf(server, { maxListenStreams: 20 });
    const open: Response[] = [];
    for (let i = 1; i <= 16; i++) {
      const res = await listen(handler, "alice", i, { toolsListChanged: true });
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      open.push(res);
    }
    const full = await listen(handler, "alice", 17, { toolsListChanged: true });
    expect([full.status, full.headers.get("retry-after")]).toEqual([429, "5"]);
    expect(await full.json()).toEqual(
      refusal(
        17,
        "listens",
        16,
        "Too Many Requests: this caller holds its share of listen streams (16)",
        5000,
      ),
    );
    for (const who of ["bob", undefined]) {
      const res = await listen(handler, who, 18, { toolsListChanged: true });
      expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
      open.push(res);
    }
    // a closed listen gives its place back
    await open[0]!.body!.cancel();
    await until(async () => {
      const again = await listen(handler, "alice", 19, { toolsListChanged: true });
      if (again.status !== 200) return false;
      open.push(again);
      return true;
    }, "alice's listen after one closed");
    for (const res of open.slice(1)) await res.body!.cancel();
  });

  it("a listen is bounded by bytes: 480 URIs of 8 KiB are refused, a small one opens", async () => {
    const { server } = governed();
    const handler = httpOf(server);
    const uris = Array.from({ length: 480 }, (_, i) => `note://${String(i).padStart(8185, "0")}`);
    const big = await listen(handler, "alice", 1, { resourceSubscriptions: uris });
    expect([big.status, big.headers.get("retry-after")]).toEqual([429, "5"]);
    expect(await big.json()).toEqual(
      refusal(
        1,
        "subscriptionBytes",
        1024 * 1024,
        "Too Many Requests: this caller holds its share of bytes of subscriptions (1048576)",
        5000,
      ),
    );
    const small = await listen(handler, "alice", 2, { resourceSubscriptions: uris.slice(0, 10) });
    expect(small.headers.get("content-type")).toBe("text/event-stream");
    const events = messagesOf(await readEvents(small, 1));
    expect(events[0].method).toBe("notifications/subscriptions/acknowledged");
  });
});

describe("2025 sessions", () => {
  it("subscriptions are bounded by bytes per principal; a session that ends gives them back", async () => {
    const { server } = governed({ subscriptionBytes: { perPrincipal: 4 * (2 * 8000 + 64) } });
    const handler = httpOf(server);
    const sid = await openSession(handler, "alice");
    const uri = (i: number) => `note://${String(i).padStart(7993, "0")}`;
    const subscribe = (s: string, id: number) =>
      sessionPost(handler, "alice", s, {
        jsonrpc: "2.0",
        id,
        method: "resources/subscribe",
        params: { uri: uri(id) },
      });
    for (let i = 1; i <= 4; i++)
      expect(await (await subscribe(sid, i)).json()).toEqual({ jsonrpc: "2.0", id: i, result: {} });
    const full = await subscribe(sid, 5);
    expect([full.status, full.headers.get("retry-after")]).toEqual([429, "5"]);
    expect(await full.json()).toEqual(
      refusal(
        5,
        "subscriptionBytes",
        64256,
        "Too Many Requests: this caller holds its share of bytes of subscriptions (64256)",
        5000,
      ),
    );
    const bob = await openSession(handler, "bob");
    expect(
      await (
        await sessionPost(handler, "bob", bob, {
          jsonrpc: "2.0",
          id: 7,
          method: "resources/subscribe",
          params: { uri: uri(7) },
        })
      ).json(),
    ).toEqual({ jsonrpc: "2.0", id: 7, result: {} });
    // unsubscribing gives one back; ending the session gives back the rest
    await sessionPost(handler, "alice", sid, {
      jsonrpc: "2.0",
      id: 8,
      method: "resources/unsubscribe",
      params: { uri: uri(1) },
    });
    expect((await subscribe(sid, 9)).status).toBe(200);
    expect((await request(handler, "DELETE", { ...as("alice"), "mcp-session-id": sid })).status).toBe(204);
    const again = await openSession(handler, "alice");
    for (let i = 10; i < 14; i++) expect((await subscribe(again, i)).status).toBe(200);
  });

  it("requests in flight: alice's third waiting request is 429, bob's runs; in both eras", async () => {
    const { server, seen, open } = governed({ requests: { perPrincipal: 2 } });
    const handler = httpOf(server);
    const sid = await openSession(handler, "alice");
    const wait = (id: number) =>
      sessionPost(handler, "alice", sid, { jsonrpc: "2.0", id, method: "tools/call", params: call("wait") });
    const held = [wait(1), wait(2)];
    await until(() => seen.waiting === 2, "two in flight");
    const third = await wait(3);
    expect([third.status, third.headers.get("retry-after")]).toEqual([429, "1"]);
    expect(await third.json()).toEqual(
      refusal(
        3,
        "requests",
        2,
        "Too Many Requests: this caller holds its share of requests in flight (2)",
        1000,
      ),
    );
    const modernThird = await modern(handler, "alice", 4, "tools/call", call("echo"));
    expect([modernThird.status, modernThird.headers.get("retry-after")]).toEqual([429, "1"]);
    expect(await modernThird.json()).toEqual(
      refusal(
        4,
        "requests",
        2,
        "Too Many Requests: this caller holds its share of requests in flight (2)",
        1000,
      ),
    );
    const bob = await modern(handler, "bob", 5, "tools/call", { name: "echo", arguments: { text: "hi" } });
    expect((await bob.json()).result.content).toEqual([{ type: "text", text: "hi" }]);
    open();
    for (const res of await Promise.all(held))
      expect((await res.json()).result.content[0].text).toBe("waited");
    expect((await wait(6)).status).toBe(200);
  });

  it("an open request to the client counts: past the share, the handler's next elicit fails", async () => {
    const { server } = governed({ inputRounds: { perPrincipal: 1 } });
    const handler = httpOf(server);
    const sid = await openSession(handler, "alice", { elicitation: {} });
    const res = await sessionPost(handler, "alice", sid, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: call("ask2"),
    });
    const stream = new SseMessages(res);
    await stream.until((m) => m.length >= 1);
    const asked = stream.messages[0];
    expect(asked).toMatchObject({ method: "elicitation/create", params: { message: "A?" } });
    const answer = { jsonrpc: "2.0", id: asked.id, result: { action: "decline" } };
    expect((await sessionPost(handler, "alice", sid, answer)).status).toBe(202);
    await stream.until((m) => m.some((x) => x.id === 1));
    // one question went out; the second was refused to the handler, which answered all the same
    expect(stream.messages.filter((m) => m.method === "elicitation/create")).toHaveLength(1);
    expect(stream.messages.at(-1)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "fulfilled/rejected" }] },
    });
  });

  it("GET streams count per principal: the second of alice's is 429 until the first closes", async () => {
    const { server } = governed();
    const handler = httpOf(server, { limits: { sseStreams: { perPrincipal: 1 } } });
    const [s1, s2] = [await openSession(handler, "alice"), await openSession(handler, "alice")];
    const get = (sid: string, who = "alice") =>
      request(handler, "GET", { ...as(who), accept: "text/event-stream", "mcp-session-id": sid });
    const first = await get(s1);
    expect(first.status).toBe(200);
    const second = await get(s2);
    expect([second.status, second.headers.get("retry-after")]).toEqual([429, "5"]);
    expect(await second.json()).toEqual(
      refusal(
        undefined,
        "sseStreams",
        1,
        "Too Many Requests: this caller holds its share of GET streams (1)",
        5000,
      ),
    );
    expect((await get(await openSession(handler, "bob"), "bob")).status).toBe(200);
    await first.body!.cancel();
    await until(async () => (await get(s2)).status === 200, "alice's second GET stream");
  });

  it("with limits.key, an anonymous caller at its share ends its own idle session, never another's", async () => {
    const { server } = governed();
    const handler = httpOf(server, {
      maxSessionsPerPrincipal: 2,
      maxSessions: 4,
      limits: { key: (r) => r.headers.get("x-client") ?? undefined },
    });
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    const from = (c: string) => ({ "x-client": c });
    const b1 = await openSession(handler, undefined, {}, from("b"));
    const b2 = await openSession(handler, undefined, {}, from("b"));
    const a1 = await openSession(handler, undefined, {}, from("a"));
    await openSession(handler, undefined, {}, from("a"));
    await openSession(handler, undefined, {}, from("a")); // ends a1, a's own least recently used
    expect((await sessionPost(handler, undefined, a1, ping)).status).toBe(404);
    for (const sid of [b1, b2]) expect((await sessionPost(handler, undefined, sid, ping)).status).toBe(200);
    const c = await post(handler, initBody(), from("c"));
    expect([c.status, c.headers.get("retry-after")]).toEqual([503, "5"]);
    expect(await c.json()).toEqual(
      refusal(
        undefined,
        "sessions",
        4,
        "Service Unavailable: the server holds as many sessions as it may (4)",
        5000,
        "server",
      ),
    );
    for (const sid of [b1, b2]) expect((await sessionPost(handler, undefined, sid, ping)).status).toBe(200);
  });
});
