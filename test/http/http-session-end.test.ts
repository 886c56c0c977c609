// An extension's `sessionEnd` hook hears the graceful end of every 2025 session over Streamable HTTP, once:
// handler.close(), a drain, a DELETE, server.close(); a long-lived request of a session gets the final
// result its hook gives. Real HTTP (picomcp/node on 127.0.0.1), raw JSON-RPC, exact wire JSON.
import { afterEach, describe, expect, it } from "vitest";
import { type NodeServer, serve } from "../../src/http/node.js";
import { type Context, type Extension, McpServer } from "../../src/index.js";
import { messagesOf, readEvents } from "../http-helpers.js";

const HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

const nodes: NodeServer[] = [];
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.close();
});

/** A server whose extension records each session it hears the end of, and holds `hold/wait` requests until then. */
async function setup() {
  const ended: string[] = [];
  const waiting = new Map<string, Context>();
  const ext: Extension = {
    id: "com.example/held",
    sessionEnd: ({ sessionId }) => {
      ended.push(sessionId);
      waiting.get(sessionId)?.end({ held: true });
    },
    methods: {
      "hold/wait": {
        era: "session",
        run: async (_p, ctx) => {
          waiting.set(ctx.sessionId, ctx);
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          waiting.delete(ctx.sessionId);
          return { never: "sent" };
        },
      },
      // held until the request is cancelled: the hook gives it nothing, so a drain waits for it
      "hold/stuck": {
        era: "session",
        run: async (_p, ctx) => {
          waiting.set(`stuck ${ctx.sessionId}`, ctx);
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          return { never: "sent" };
        },
      },
    },
  };
  const server = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
  server.use(ext);
  const http = await serve(server, { port: 0 });
  nodes.push(http);
  const post = (body: object, sid?: string) =>
    fetch(http.url, {
      method: "POST",
      headers: sid ? { ...HEADERS, "mcp-session-id": sid } : HEADERS,
      body: JSON.stringify(body),
    });
  /** Opens a session: initialize, then initialized; its id. */
  const open = async () => {
    const init = await post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    expect(init.status).toBe(200);
    await init.text();
    const sid = init.headers.get("mcp-session-id")!;
    const ack = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, sid);
    expect(ack.status).toBe(202);
    return sid;
  };
  return { server, http, ended, waiting, post, open };
}

describe("Extension.sessionEnd over HTTP sessions", () => {
  it("handler.close(): the hook hears every session once; a long-lived request gets the result it gives", async () => {
    const { http, ended, waiting, post, open } = await setup();
    const a = await open();
    const b = await open();
    const held = post({ jsonrpc: "2.0", id: 1, method: "hold/wait" }, a);
    await expect.poll(() => waiting.has(a)).toBe(true);
    http.handler.close();
    expect([...ended].sort()).toEqual([a, b].sort());
    const res = await held;
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
    expect(messagesOf(await readEvents(res))).toEqual([{ jsonrpc: "2.0", id: 1, result: { held: true } }]);
    expect(http.handler.sessionCount).toBe(0);
  });

  it("a drain (close with graceMs): the hook hears every session once, as it begins: a long-lived request gets its result", async () => {
    const { http, ended, waiting, post, open } = await setup();
    const a = await open();
    const b = await open();
    const held = post({ jsonrpc: "2.0", id: 1, method: "hold/wait" }, a);
    await expect.poll(() => waiting.has(a)).toBe(true);
    const closed = http.close({ graceMs: 60_000 });
    expect([...ended].sort()).toEqual([a, b].sort());
    const res = await held;
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
    expect(messagesOf(await readEvents(res))).toEqual([{ jsonrpc: "2.0", id: 1, result: { held: true } }]);
    // nothing is left running: the drain is over long before its grace
    await closed;
    expect([...ended].sort()).toEqual([a, b].sort());
  });

  it("a drain, then server.close() while the drain waits: the hook hears each session once", async () => {
    const { server, http, ended, waiting, post, open } = await setup();
    const a = await open();
    const b = await open();
    const stuck = post({ jsonrpc: "2.0", id: 7, method: "hold/stuck" }, a);
    await expect.poll(() => waiting.has(`stuck ${a}`)).toBe(true);
    const closed = http.close({ graceMs: 60_000 });
    expect([...ended].sort()).toEqual([a, b].sort());
    // a SIGTERM handler that also closes the server, while the drain still waits for `hold/stuck`
    server.close();
    expect([...ended].sort()).toEqual([a, b].sort());
    expect(waiting.get(`stuck ${a}`)!.signal.aborted).toBe(true);
    const res = await stuck;
    // its session closed under it: the handler answers as it does for any session gone
    expect([res.status, await res.json()]).toEqual([
      404,
      { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" } },
    ]);
    await closed;
    expect(ended).toHaveLength(2);
  });

  it("DELETE: the hook hears that session alone; server.close() then ends the rest, each once", async () => {
    const { server, http, ended, open } = await setup();
    const a = await open();
    const b = await open();
    const gone = await fetch(http.url, { method: "DELETE", headers: { "mcp-session-id": a } });
    expect(gone.status).toBe(204);
    expect(ended).toEqual([a]);
    server.close();
    expect(ended).toEqual([a, b]);
    expect(http.handler.sessionCount).toBe(0);
    http.handler.close();
    expect(ended).toEqual([a, b]);
  });
});
