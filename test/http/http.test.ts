// Streamable HTTP, exact wire: every status and error body of POST, GET, DELETE, guards, sessions, stateless mode.
import { describe, expect, it, vi } from "vitest";
import { createHttpHandler } from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";
import { call, initBody, initialize, post, request, sleep, useTestServers } from "../http-helpers.js";

const setup = useTestServers();

const error = (code: number, message: string, extra: object = {}) => ({
  jsonrpc: "2.0",
  error: { code, message, ...extra },
});

describe("POST: media types and body", () => {
  it("initializes: 200 JSON with a visible-ASCII session id", async () => {
    const { handler } = setup();
    const res = await post(handler, initBody());
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("mcp-session-id")).toMatch(/^[0-9a-f]{32}$/);
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      id: 0,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: {
          logging: {},
          resources: { subscribe: true, listChanged: true },
          tools: { listChanged: true },
        },
        serverInfo: { name: "http-test", version: "1.0.0" },
      },
    });
  });

  it("gives each session a different id", async () => {
    const { handler } = setup();
    const a = (await post(handler, initBody())).headers.get("mcp-session-id");
    const b = (await post(handler, initBody())).headers.get("mcp-session-id");
    expect(a).not.toBe(b);
    expect(handler.sessionCount).toBe(2);
  });

  it.each([
    ["application/json", 406],
    ["text/event-stream", 406],
    ["application/json;q=0, text/event-stream", 406],
    ["text/event-stream, application/json", 200],
    ["*/*", 200],
    ["application/*, text/*", 200],
  ])("Accept %j → %i", async (accept, status) => {
    const { handler } = setup();
    const res = await post(handler, initBody(), { accept });
    expect(res.status).toBe(status);
    if (status === 406) {
      expect(await res.json()).toEqual(
        error(-32000, "Not Acceptable: Accept must list application/json and text/event-stream"),
      );
    }
  });

  it("406 without an Accept header", async () => {
    const { handler } = setup();
    const res = await handler(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(initBody()),
      }),
    );
    expect(res.status).toBe(406);
  });

  it.each([["text/plain"], ["application/jsonx"], ["multipart/form-data"]])(
    "415 for Content-Type %s",
    async (ct) => {
      const { handler } = setup();
      const res = await post(handler, initBody(), { "content-type": ct });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual(
        error(-32000, "Unsupported Media Type: Content-Type must be application/json"),
      );
    },
  );

  it("accepts Content-Type parameters (charset)", async () => {
    const { handler } = setup();
    const res = await post(handler, initBody(), { "content-type": "Application/JSON; charset=utf-8" });
    expect(res.status).toBe(200);
  });

  it.each([["{not json"], [""], [new Uint8Array([0x7b, 0xff, 0x7d])]])(
    "400 -32700 for an unparseable body %#",
    async (body) => {
      const { handler } = setup();
      const res = await post(handler, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(error(-32700, "Parse error: the message is not valid JSON"));
    },
  );

  it("400 -32600 for JSON that is not a JSON-RPC message", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    const res = await post(handler, 42, { "mcp-session-id": sid });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(error(-32600, "Invalid Request: a message must be a JSON object"));
  });

  it("413 for a declared Content-Length over maxBodyBytes, and for a streamed body that passes it", async () => {
    const { handler } = setup({ maxBodyBytes: 100 });
    const big = JSON.stringify({ ...initBody(), pad: "x".repeat(200) });
    const declared = await post(handler, big);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual(
      error(-32000, "Payload Too Large: the body must not exceed 100 bytes"),
    );
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(new TextEncoder().encode("x".repeat(60)));
        if (pulled > 1000) c.close();
      },
    });
    const streamed = await handler(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: { ...postHeaders() },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
    expect(pulled).toBeLessThan(10);
  });
});

function postHeaders() {
  return { accept: "application/json, text/event-stream", "content-type": "application/json" };
}

describe("POST: sessions and versions", () => {
  it("400 without Mcp-Session-Id for anything but initialize", async () => {
    const { handler } = setup();
    const res = await post(handler, call(1, "echo"));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      error: {
        code: -32000,
        message:
          "Bad Request: Mcp-Session-Id header is required (initialize first, or send a 2026-07-28 request with _meta); supported versions: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05",
        data: { supported: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] },
      },
    });
  });

  it("404 -32001 for an unknown session id, even for initialize", async () => {
    const { handler } = setup();
    for (const body of [call(1, "echo"), initBody()]) {
      const res = await post(handler, body, { "mcp-session-id": "nope" });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(error(-32001, "Session not found"));
    }
  });

  it("answers a request on a session with JSON and the session header", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    const res = await post(handler, call(7, "echo", { text: "hi" }), { "mcp-session-id": sid });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBe(sid);
    expect(await res.text()).toBe(
      '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}',
    );
  });

  it("202 with no body for a notification and for a response", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    for (const body of [
      { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
      { jsonrpc: "2.0", id: "picomcp-99", result: {} },
    ]) {
      const res = await post(handler, body, { "mcp-session-id": sid });
      expect(res.status).toBe(202);
      expect(await res.text()).toBe("");
    }
  });

  it("serves a session under its own MCP-Protocol-Version, none, or another supported one (docs/eras.md)", async () => {
    const { handler } = setup();
    const sid = await initialize(handler, "2025-11-25");
    for (const v of ["2025-11-25", undefined, "2025-06-18", "2025-03-26", "2024-11-05"]) {
      const headers: { [k: string]: string } = { "mcp-session-id": sid };
      if (v) headers["mcp-protocol-version"] = v;
      const res = await post(handler, { jsonrpc: "2.0", id: 1, method: "ping" }, headers);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    }
  });

  it("400 -32022 for an unsupported MCP-Protocol-Version, naming the supported ones", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    const res = await post(handler, call(1, "echo"), {
      "mcp-session-id": sid,
      "mcp-protocol-version": "2026-07-28",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(
      error(
        -32022,
        'Bad Request: unsupported MCP-Protocol-Version "2026-07-28"; supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05',
        {
          data: {
            supported: ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
            requested: "2026-07-28",
          },
        },
      ),
    );
  });

  it("serves batches on a 2025-03-26 session; refuses them under a later MCP-Protocol-Version", async () => {
    const { handler } = setup();
    const sid = await initialize(handler, "2025-03-26");
    const batch = [
      call(1, "echo", { text: "a" }),
      { jsonrpc: "2.0", method: "notifications/x" },
      call(2, "echo", { text: "b" }),
    ];
    const ok = await post(handler, batch, { "mcp-session-id": sid });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual([
      { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "a" }] } },
      { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "b" }] } },
    ]);
    const notes = await post(handler, [{ jsonrpc: "2.0", method: "notifications/x" }], {
      "mcp-session-id": sid,
    });
    expect(notes.status).toBe(202);
    // under a later revision's header, which receives no batches
    const late = await post(handler, batch, { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" });
    expect(late.status).toBe(400);
    expect(await late.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid Request: batches are only accepted on 2025-03-26" },
    });
  });

  it("DELETE ends a session: 204, then 404 for it; 400 without an id; 404 for an unknown one", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    const del = await request(handler, "DELETE", { "mcp-session-id": sid });
    expect(del.status).toBe(204);
    expect((await post(handler, call(1, "echo"), { "mcp-session-id": sid })).status).toBe(404);
    expect((await request(handler, "DELETE", { "mcp-session-id": sid })).status).toBe(404);
    const none = await request(handler, "DELETE");
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual(error(-32000, "Bad Request: Mcp-Session-Id header is required"));
    expect(handler.sessionCount).toBe(0);
  });

  it("405 with Allow for other methods", async () => {
    const { handler } = setup();
    const res = await request(handler, "PUT");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, POST, DELETE");
    expect(await res.json()).toEqual(error(-32000, "Method not allowed: use GET, POST, DELETE"));
  });

  it("expires idle sessions on one timer sweep (404 afterwards)", async () => {
    // the clock sessions age by is held still while they are made (a handshake on a loaded machine
    // can outlast 40 ms), then moved past sessionIdleMs; the sweep itself runs on its real timer
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const { handler } = setup({ sessionIdleMs: 40 });
      const sid = await initialize(handler);
      await initialize(handler);
      expect(handler.sessionCount).toBe(2);
      vi.setSystemTime(Date.now() + 41);
      while (handler.sessionCount > 0) await sleep(5);
      expect((await post(handler, call(1, "echo"), { "mcp-session-id": sid })).status).toBe(404);
    } finally {
      vi.useRealTimers();
    }
  });

  it("does not expire a session while a request is in flight", async () => {
    const { handler } = setup({ sessionIdleMs: 40 });
    const sid = await initialize(handler);
    const res = await post(handler, call(1, "slow"), { "mcp-session-id": sid });
    expect(await res.json()).toMatchObject({ result: { content: [{ text: "slow done" }] } });
    expect(handler.sessionCount).toBe(1);
  });

  it("at maxSessions evicts the least recently used idle session; 503 when all are busy", async () => {
    const { handler } = setup({ maxSessions: 2 });
    const a = await initialize(handler);
    const b = await initialize(handler);
    await post(handler, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": a }); // a is now newer than b
    await initialize(handler);
    expect(
      (await post(handler, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": b })).status,
    ).toBe(404);
    expect(
      (await post(handler, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": a })).status,
    ).toBe(200);

    const busy = setup({ maxSessions: 1 });
    const s = await initialize(busy.handler);
    const slow = post(busy.handler, call(1, "slow"), { "mcp-session-id": s });
    const full = await post(busy.handler, initBody());
    expect(full.status).toBe(503);
    expect(full.headers.get("retry-after")).toBe("5");
    expect(await full.json()).toEqual({
      jsonrpc: "2.0",
      error: {
        code: -32000,
        message: "Service Unavailable: the server holds as many sessions as it may (1)",
        data: { limit: "sessions", scope: "server", max: 1, retryAfterMs: 5000 },
      },
    });
    await slow;
  });

  it("a request cancelled by notifications/cancelled gets 202 and no answer", async () => {
    const { handler, seen } = setup();
    const sid = await initialize(handler);
    const pending = post(handler, call(5, "slow"), { "mcp-session-id": sid });
    await sleep(20);
    const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } };
    expect((await post(handler, cancel, { "mcp-session-id": sid })).status).toBe(202);
    const res = await pending;
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
    expect(seen.cancelled).toBe(1);
  });
});

describe("DNS rebinding, CORS", () => {
  it.each([
    [{ host: "evil.example.com" }, 403, 'Forbidden: the Host "evil.example.com" is not in allowedHosts'],
    [{ origin: "http://evil.example.com" }, 403, "Forbidden: this Origin is not allowed"],
    [{ origin: "null" }, 403, "Forbidden: this Origin is not allowed"],
    [{ host: "localhost:8080", origin: "http://localhost:5173" }, 200, ""],
    [{ host: "[::1]:9", origin: "https://[::1]" }, 200, ""],
  ])("%j → %i", async (headers, status, message) => {
    const { handler } = setup({ log: () => {} });
    const res = await post(handler, initBody(), headers);
    expect(res.status).toBe(status);
    if (status === 403) expect(await res.json()).toEqual(error(-32000, message));
  });

  it("a refused Host names allowedHosts in the answer, and once in the server's log", async () => {
    const lines: string[] = [];
    const { handler } = setup({ allowedHosts: ["mcp.example.com"], log: (l) => lines.push(l) });
    for (let i = 0; i < 3; i++) {
      const res = await post(handler, initBody(), { host: "127.0.0.1:3000" });
      expect([res.status, await res.json()]).toEqual([
        403,
        error(-32000, 'Forbidden: the Host "127.0.0.1:3000" is not in allowedHosts'),
      ]);
    }
    await post(handler, initBody(), { host: "localhost" });
    expect(lines).toEqual([
      'picomcp/http: refused Host "127.0.0.1:3000" (403): it is not in allowedHosts ["mcp.example.com"]; add it to the allowedHosts option of the HTTP handler (or of serve)',
      'picomcp/http: refused Host "localhost" (403): it is not in allowedHosts ["mcp.example.com"]; add it to the allowedHosts option of the HTTP handler (or of serve)',
    ]);
  });

  it("a refused Host goes to console.warn when no log is given", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const { handler } = setup({ allowedHosts: ["mcp.example.com"] });
      expect((await post(handler, initBody(), { host: "evil.example.com" })).status).toBe(403);
      expect(warn.mock.calls).toEqual([
        [expect.stringMatching(/^picomcp\/http: refused Host "evil\.example\.com"/)],
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it("allowedHosts and allowedOrigins replace the defaults", async () => {
    const { handler } = setup({
      log: () => {},
      allowedHosts: ["mcp.example.com"],
      allowedOrigins: ["https://app.example.com"],
    });
    expect((await post(handler, initBody(), { host: "mcp.example.com" })).status).toBe(200);
    expect((await post(handler, initBody(), { host: "127.0.0.1:3000" })).status).toBe(403);
    const ok = await post(handler, initBody(), {
      host: "mcp.example.com",
      origin: "https://app.example.com",
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(ok.headers.get("access-control-expose-headers")).toBe(
      "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after",
    );
    expect(
      (await post(handler, initBody(), { host: "mcp.example.com", origin: "https://mcp.example.com" }))
        .status,
    ).toBe(403);
  });

  it("a browser can read Retry-After on a 429", async () => {
    const { handler } = setup({ anonymousSessionsPerMinute: 1 });
    const origin = { origin: "http://localhost:5173" };
    expect((await post(handler, initBody(), origin)).status).toBe(200);
    const res = await post(handler, initBody(), origin);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("60");
    const exposed = res.headers.get("access-control-expose-headers")!.split(", ");
    expect(exposed).toContain("retry-after");
  });

  it('"*" turns the host check off', async () => {
    const { handler } = setup({ allowedHosts: "*" });
    expect((await post(handler, initBody(), { host: "anything.example" })).status).toBe(200);
  });

  it("answers a CORS preflight from an allowed origin with 204", async () => {
    const { handler } = setup();
    const res = await request(handler, "OPTIONS", {
      origin: "http://localhost:6274",
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, mcp-session-id",
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, DELETE");
    expect(res.headers.get("access-control-allow-headers")).toBe("content-type, mcp-session-id");
  });
});

describe("authenticate", () => {
  it("answers with the hook's Response, or passes its AuthInfo to ctx.auth", async () => {
    const { handler } = setup({
      authenticate: (req) =>
        req.headers.get("authorization") === "Bearer good"
          ? { token: "good", clientId: "c1", scopes: ["read"] }
          : new Response(null, { status: 401, headers: { "www-authenticate": "Bearer" } }),
    });
    const denied = await post(handler, initBody());
    expect(denied.status).toBe(401);
    expect(denied.headers.get("www-authenticate")).toBe("Bearer");
    const auth = { authorization: "Bearer good" };
    const sid = (await post(handler, initBody(), auth)).headers.get("mcp-session-id")!;
    const res = await post(handler, call(1, "whoami"), { ...auth, "mcp-session-id": sid });
    expect(await res.json()).toMatchObject({
      result: { content: [{ text: '{"token":"good","clientId":"c1","scopes":["read"]}' }] },
    });
  });
});

describe("stateless mode (sessions: false)", () => {
  it("serves a request without initialize, at the header's version, with no session id", async () => {
    const { handler } = setup({ sessions: false });
    const res = await post(handler, call(1, "echo", { text: "x" }), { "mcp-protocol-version": "2025-06-18" });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(await res.text()).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}]}}',
    );
    const init = await post(handler, initBody());
    expect(init.status).toBe(200);
    expect(init.headers.get("mcp-session-id")).toBeNull();
    expect(handler.sessionCount).toBe(0);
  });

  it("assumes 2025-03-26 without a header: batches work once maxBatchSize allows them", async () => {
    const { handler } = setup({ sessions: false, maxBatchSize: 10 });
    const res = await post(handler, [call(1, "echo", { text: "a" }), call(2, "echo", { text: "b" })]);
    expect(await res.json()).toHaveLength(2);
  });

  it("405 for GET and DELETE, with Allow: POST", async () => {
    const { handler } = setup({ sessions: false });
    for (const method of ["GET", "DELETE"]) {
      const res = await request(handler, method, { accept: "text/event-stream" });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  });

  it("cancels the request when the client goes away (nobody could resume it)", async () => {
    const { handler, seen } = setup({ sessions: false });
    const abort = new AbortController();
    const pending = handler(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: postHeaders(),
        body: JSON.stringify(call(1, "slow")),
        signal: abort.signal,
      }),
    );
    await sleep(20);
    abort.abort();
    expect((await pending).status).toBe(202);
    expect(seen.cancelled).toBe(1);
  });
});

describe("the handler itself", () => {
  it("validates options", () => {
    const server = new McpServer({ name: "x", version: "1" });
    expect(() => createHttpHandler(server, { maxBodyBytes: 0 })).toThrow(
      "maxBodyBytes must be a positive number",
    );
    expect(() => createHttpHandler(server, { sessionIdleMs: -1 })).toThrow(RangeError);
  });

  it("close() ends every session", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    handler.close();
    expect(handler.sessionCount).toBe(0);
    expect((await post(handler, call(1, "echo"), { "mcp-session-id": sid })).status).toBe(404);
  });
});
