import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { encodeMessage } from "../../src/jsonrpc.js";
import type { JsonRpcMessage } from "../../src/types.js";
import { rawPeer, tick } from "../helpers.js";
import { meta, SERVER_META } from "../modern-helpers.js";

const SUB = "io.modelcontextprotocol/subscriptionId";

function server(options: object = {}) {
  const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {}, ...options });
  s.tool("echo", { run: () => "hi" });
  s.resource("test://watched", { read: () => "w" });
  return s;
}

/** Opens a listen on its own stream; `stream` collects what it carries, `answer` its final answer. */
function listen(
  s: McpServer,
  id: string | number,
  notifications: unknown,
  conn = s.connect({ send: () => {} }),
) {
  const stream: any[] = [];
  const abort = new AbortController();
  const answer = s
    .handle(
      { jsonrpc: "2.0", id, method: "subscriptions/listen", params: { _meta: meta(), notifications } },
      conn,
      { send: (m: JsonRpcMessage) => void stream.push(JSON.parse(encodeMessage(m))), signal: abort.signal },
    )
    .then((a) => (a === undefined ? undefined : JSON.parse(encodeMessage(a))));
  return { stream, answer, abort, conn };
}

describe("subscriptions/listen", () => {
  it("acknowledges first with the honoured subset, then sends only the asked-for kinds, tagged", async () => {
    const s = server();
    const l = listen(s, "L1", {
      toolsListChanged: true,
      promptsListChanged: true,
      resourceSubscriptions: ["test://watched"],
    });
    expect(l.stream).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: {
          _meta: { [SUB]: "L1" },
          // no prompts registered: promptsListChanged is not honoured
          notifications: { toolsListChanged: true, resourceSubscriptions: ["test://watched"] },
        },
      },
    ]);
    s.resourceUpdated("test://watched");
    s.resourceUpdated("test://other");
    s.resource("test://new", { read: () => "n" });
    s.tool("added", { run: () => "x" });
    await tick();
    expect(l.stream.slice(1)).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: "test://watched", _meta: { [SUB]: "L1" } },
      },
      { jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { [SUB]: "L1" } } },
    ]);
    l.abort.abort();
    expect(await l.answer).toBeUndefined();
    s.tool("later", { run: () => "x" });
    await tick();
    expect(l.stream).toHaveLength(3);
  });

  it("server.resourceListChanged(): one list_changed per tick, to resource listeners and 2025 sessions", async () => {
    const s = server();
    const l = listen(s, "R", { resourcesListChanged: true, toolsListChanged: true });
    const legacy = rawPeer(s);
    await legacy.initialize();
    s.resourceListChanged();
    s.resourceListChanged();
    await tick();
    expect(l.stream.slice(1)).toEqual([
      { jsonrpc: "2.0", method: "notifications/resources/list_changed", params: { _meta: { [SUB]: "R" } } },
    ]);
    expect(legacy.sent).toEqual([{ jsonrpc: "2.0", method: "notifications/resources/list_changed" }]);
    l.abort.abort();
  });

  it("reaches every matching listen and every legacy subscriber from one change", async () => {
    const s = server();
    const legacy = rawPeer(s);
    await legacy.initialize();
    await legacy.send({
      jsonrpc: "2.0",
      id: 1,
      method: "resources/subscribe",
      params: { uri: "test://watched" },
    });
    const a = listen(s, 1, { resourceSubscriptions: ["test://watched"] });
    const b = listen(s, 2, { resourceSubscriptions: ["test://watched"], toolsListChanged: true });
    const c = listen(s, 3, { toolsListChanged: true });
    s.resourceUpdated("test://watched");
    const updated = (id: number) => ({
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "test://watched", _meta: { [SUB]: id } },
    });
    expect(a.stream.slice(1)).toEqual([updated(1)]);
    expect(b.stream.slice(1)).toEqual([updated(2)]);
    expect(c.stream.slice(1)).toEqual([]);
    expect(legacy.sent).toEqual([
      { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "test://watched" } },
    ]);
    for (const l of [a, b, c]) l.abort.abort();
  });

  it("keeps delivering to the other streams when one stream cannot take a message", async () => {
    const s = server();
    const conn = s.connect({ send: () => {} });
    let calls = 0;
    const broken = s.handle(
      {
        jsonrpc: "2.0",
        id: "broken",
        method: "subscriptions/listen",
        params: { _meta: meta(), notifications: { toolsListChanged: true } },
      },
      conn,
      {
        send: () => {
          if (++calls > 1) throw new Error("stream gone");
        },
      },
    );
    const ok = listen(s, "ok", { toolsListChanged: true });
    s.tool("added", { run: () => "x" });
    await tick();
    s.tool("again", { run: () => "x" });
    await tick();
    expect(ok.stream.slice(1).map((m) => m.method)).toEqual([
      "notifications/tools/list_changed",
      "notifications/tools/list_changed",
    ]);
    // the broken stream was tried once, then counted as gone
    expect(calls).toBe(2);
    ok.abort.abort();
    conn.close();
    expect(await broken).toBeUndefined();
  });

  it("ends on notifications/cancelled for its id, without an answer", async () => {
    const s = server();
    const conn = s.connect({ send: () => {} });
    const l = listen(s, 9, { toolsListChanged: true }, conn);
    await s.handle({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } }, conn);
    expect(await l.answer).toBeUndefined();
    // it is no longer open: a change after it reaches nothing
    s.tool("later", { run: () => "x" });
    await tick();
    expect(l.stream).toHaveLength(1);
  });

  it("answers with its final result when the server closes", async () => {
    const s = server();
    const l = listen(s, "L", { toolsListChanged: true });
    s.close();
    expect(await l.answer).toBeUndefined();
    expect(l.stream.at(-1)).toEqual({
      jsonrpc: "2.0",
      id: "L",
      result: { resultType: "complete", _meta: { ...SERVER_META, [SUB]: "L" } },
    });
    expect(l.stream).toHaveLength(2);
  });

  it("ended gracefully (a handler's close), then server.close(): one final result, the hooks once", async () => {
    const s = server();
    const ended: string[] = [];
    s.use({ id: "com.example/ends", sessionEnd: ({ sessionId }) => void ended.push(sessionId) });
    const l = listen(s, "L", { toolsListChanged: true });
    s.endGracefully(l.conn);
    s.endGracefully(l.conn);
    s.close();
    expect(await l.answer).toBeUndefined();
    expect(l.stream).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { _meta: { [SUB]: "L" }, notifications: { toolsListChanged: true } },
      },
      { jsonrpc: "2.0", id: "L", result: { resultType: "complete", _meta: { ...SERVER_META, [SUB]: "L" } } },
    ]);
    expect(ended).toEqual([l.conn.id]);
  });

  it("rejects malformed or over-limit filters with -32602", async () => {
    const s = server({ subscriptionLimits: { maxResourceSubscriptions: 2, maxUriLength: 20 } });
    const err = async (notifications: unknown) => (await listen(s, 1, notifications).answer).error;
    expect(await err(undefined)).toEqual({
      code: -32602,
      message: "subscriptions/listen needs a notifications object",
    });
    expect(await err({ toolsListChanged: "yes" })).toEqual({
      code: -32602,
      message: "notifications.toolsListChanged must be a boolean",
    });
    expect(await err({ resourceSubscriptions: "test://a" })).toEqual({
      code: -32602,
      message: "notifications.resourceSubscriptions must be a list of URIs",
    });
    expect(await err({ resourceSubscriptions: ["a://1", "a://2", "a://3"] })).toEqual({
      code: -32602,
      message: "At most 2 resourceSubscriptions per listen",
      data: { max: 2 },
    });
    expect(await err({ resourceSubscriptions: [`a://${"x".repeat(20)}`] })).toEqual({
      code: -32602,
      message: "A subscribed URI is longer than 20 characters",
      data: { maxUriLength: 20 },
    });
  });

  it("does not exist without anything to listen to, nor in the initialize era", async () => {
    const empty = new McpServer({ name: "t", version: "1.0.0" });
    expect((await listen(empty, 1, { toolsListChanged: true }).answer).error).toEqual({
      code: -32601,
      message: "Method not found: subscriptions/listen",
    });
    const legacy = rawPeer(server());
    await legacy.initialize();
    const r = await legacy.send({
      jsonrpc: "2.0",
      id: 2,
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true } },
    });
    expect(r.error).toEqual({ code: -32601, message: "Method not found: subscriptions/listen" });
  });
});
