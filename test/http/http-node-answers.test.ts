// The node:http bridge writes picomcp's own answers without making a Response: over real sockets on
// 127.0.0.1, every answer is byte for byte what the same handler's Response makes when the bridge is
// given a plain fetch function (the Date aside), for the handler and for the OAuth one. A client that
// goes away cancels a stateless request without an AbortSignal, on both paths, before or while it runs.
import { createServer, request as httpRequest, type Server } from "node:http";
import { type AddressInfo, connect as tcpConnect } from "node:net";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createProtectedHandler } from "../../src/auth/index.js";
import type { AuthInfo } from "../../src/connection.js";
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "../../src/http/index.js";
import { toNodeListener } from "../../src/http/node.js";
import { header } from "../../src/http/request.js";
import { McpError, McpServer } from "../../src/index.js";
import { call, initBody, POST_HEADERS, URL_ } from "../http-helpers.js";
import { meta } from "../modern-helpers.js";

const servers: Server[] = [];
const handlers: { close(): void }[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function listen(listener: ReturnType<typeof toNodeListener>): Promise<number> {
  const http = createServer(listener);
  servers.push(http);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return (http.address() as AddressInfo).port;
}

/** The body of a raw answer, its chunks joined when it was sent chunked. */
function bodyOf(answer: string): string {
  const split = answer.indexOf("\r\n\r\n");
  let rest = answer.slice(split + 4);
  if (!/transfer-encoding: chunked/i.test(answer.slice(0, split))) return rest;
  let out = "";
  for (;;) {
    const nl = rest.indexOf("\r\n");
    const size = Number.parseInt(rest.slice(0, nl), 16);
    if (!size) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}

/** Sends raw request bytes (`HOST` stands for the Host header), reads the whole answer, drops its Date. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (c) => {
      data += c.toString("latin1");
    });
    socket.on("end", () => resolve(data.replace(/^Date: [^\r]*\r\n/m, "")));
    socket.on("error", reject);
    socket.write(request.replace("HOST", `127.0.0.1:${port}`));
  });
}

function message(
  method: string,
  target: string,
  headers: { [name: string]: string },
  body = "",
  length = body === "" && method !== "POST" ? undefined : Buffer.byteLength(body),
): string {
  const lines = [
    `${method} ${target} HTTP/1.1`,
    "Host: HOST",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  if (length !== undefined) lines.push(`Content-Length: ${length}`);
  return `${lines.join("\r\n")}\r\nConnection: close\r\n\r\n${body}`;
}

const LEGACY = {
  Accept: "application/json, text/event-stream",
  "Content-Type": "application/json",
  "MCP-Protocol-Version": "2025-06-18",
};
const MODERN = { ...LEGACY, "MCP-Protocol-Version": "2026-07-28" };
const ORIGIN = { Origin: "http://localhost:5173" };

function statelessCall(id: number, name: string, args: object = {}) {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args, _meta: meta() },
  });
}

function fixture() {
  const server = new McpServer({ name: "answers", version: "1.0.0", onError: () => {} });
  server.tool("echo", { run: (args: { text?: string }) => args.text ?? "" });
  server.tool("log", {
    run: async (_a, ctx) => {
      ctx.log("info", "one");
      await new Promise((r) => setTimeout(r, 5));
      ctx.log("info", "two");
      return "logged";
    },
  });
  server.tool("refuse", {
    run: () => {
      throw new McpError(-32001, "nope", { why: "test" });
    },
  });
  server.tool("write_note", { scopes: ["notes:write"], run: () => "written" });
  return server;
}

/** Every request through both bridges: the handler's own answers, and the Response the handler makes. */
async function same(handler: (request: Request) => Promise<Response>, requests: readonly string[]) {
  const fast = await listen(toNodeListener(handler));
  const viaResponse = await listen(toNodeListener((request) => handler(request)));
  for (const request of requests) {
    const a = await raw(fast, request);
    const b = await raw(viaResponse, request);
    expect(a, request).toBe(b);
    expect(a).toMatch(/^HTTP\/1\.1 \d{3} /);
  }
}

describe("the node:http bridge writing picomcp's own answers", () => {
  it("writes every answer of a stateless handler as its Response would be written", async () => {
    const options: HttpHandlerOptions = {
      sessions: false,
      maxBatchSize: 10,
      maxBodyBytes: 2000,
      errorStatus: (error) =>
        error.code === -32001
          ? { status: 409, headers: { "X-Why": " conflict ", "Retry-After": "3" } }
          : undefined,
    };
    const handler = createHttpHandler(fixture(), options);
    handlers.push(handler);
    const echo = JSON.stringify(call(1, "echo", { text: "héllo" }));
    await same(handler, [
      message("POST", "/mcp", LEGACY, echo),
      message("POST", "/mcp", { ...LEGACY, ...ORIGIN }, echo),
      message("POST", "/mcp", { ...LEGACY, Origin: "http://evil.example" }, echo),
      message("OPTIONS", "/mcp", { ...ORIGIN, "Access-Control-Request-Headers": "mcp-session-id" }),
      message("OPTIONS", "/mcp", {}),
      message(
        "POST",
        "/mcp",
        LEGACY,
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      ),
      message("POST", "/mcp", LEGACY, "{not json"),
      message("POST", "/mcp", { ...LEGACY, Accept: "application/json" }, echo),
      message("POST", "/mcp", { ...LEGACY, "Content-Type": "text/plain" }, echo),
      message("POST", "/mcp", LEGACY, "x".repeat(3000)),
      message("POST", "/mcp", LEGACY, "", 5000),
      message("GET", "/mcp", { Accept: "text/event-stream" }),
      message("DELETE", "/mcp", {}),
      message(
        "POST",
        "/mcp",
        { ...LEGACY, "MCP-Protocol-Version": "2025-03-26" },
        JSON.stringify([call(1, "echo", { text: "a" }), call(2, "echo", { text: "b" })]),
      ),
      message("POST", "/mcp", LEGACY, JSON.stringify(call(2, "log"))),
      message("POST", "/mcp", { ...LEGACY, ...ORIGIN }, JSON.stringify(call(3, "refuse"))),
      message("POST", "/mcp", { ...LEGACY, "MCP-Protocol-Version": "1999-01-01" }, echo),
      message("POST", "/mcp", { ...LEGACY, Host: "evil.example" }, echo).replace("Host: HOST\r\n", ""),
      message("POST", "/mcp", MODERN, statelessCall(4, "echo", { text: "modern" })),
      message(
        "POST",
        "/mcp",
        { ...MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo" },
        statelessCall(5, "echo"),
      ),
      message(
        "POST",
        "/mcp",
        { ...MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "log" },
        statelessCall(6, "log"),
      ),
      message(
        "POST",
        "/mcp",
        { ...MODERN, ...ORIGIN, "Mcp-Method": "tools/call", "Mcp-Name": "refuse" },
        statelessCall(7, "refuse"),
      ),
      message("GET", "/mcp", { "MCP-Protocol-Version": "2026-07-28" }),
      message("POST", "/mcp", MODERN, "[]"),
    ]);
  });

  it("writes the refusals of a handler with sessions as its Response would be written", async () => {
    const handler = createHttpHandler(fixture());
    handlers.push(handler);
    const echo = JSON.stringify(call(1, "echo"));
    await same(handler, [
      message("POST", "/mcp", LEGACY, echo),
      message("POST", "/mcp", { ...LEGACY, "Mcp-Session-Id": "unknown" }, echo),
      message("GET", "/mcp", { Accept: "text/event-stream" }),
      message("GET", "/mcp", { Accept: "text/event-stream", "Mcp-Session-Id": "unknown", ...ORIGIN }),
      message("DELETE", "/mcp", {}),
      message("PUT", "/mcp", {}),
      message("OPTIONS", "/mcp", ORIGIN),
    ]);
  });

  it("writes the OAuth handler's challenges, metadata and answers as its Response would be written", async () => {
    const tokens: { [token: string]: AuthInfo } = {
      good: { token: "good", clientId: "app", scopes: ["mcp"], subject: "alice" },
    };
    const handler = createProtectedHandler(fixture(), {
      resource: "http://127.0.0.1:3000/mcp",
      authorizationServers: ["https://auth.example.test"],
      requiredScopes: ["mcp"],
      verifyToken: (token) => tokens[token],
      sessions: false,
    });
    handlers.push(handler);
    const echo = JSON.stringify(call(1, "echo", { text: "x" }));
    const bearer = { Authorization: "Bearer good" };
    await same(handler, [
      message("POST", "/mcp", LEGACY, echo),
      message("POST", "/mcp", { ...LEGACY, ...ORIGIN }, echo),
      message("POST", "/mcp", { ...LEGACY, Authorization: "Bearer bad" }, echo),
      message("POST", "/mcp?access_token=x", { ...LEGACY, ...bearer }, echo),
      message("POST", "/mcp", { ...LEGACY, ...bearer }, echo),
      message("POST", "/mcp", { ...LEGACY, ...bearer, ...ORIGIN }, JSON.stringify(call(2, "write_note"))),
      message(
        "POST",
        "/mcp",
        { ...MODERN, ...bearer, "Mcp-Method": "tools/call", "Mcp-Name": "write_note" },
        statelessCall(3, "write_note"),
      ),
      message("GET", "/.well-known/oauth-protected-resource/mcp", {}),
      message("OPTIONS", "/.well-known/oauth-protected-resource", ORIGIN),
    ]);
  });

  it("still serves any fetch function, and the handler itself wrapped in one", async () => {
    const port = await listen(
      toNodeListener(async (request) => Response.json({ url: new URL(request.url).pathname })),
    );
    expect(bodyOf(await raw(port, message("GET", "/x", {})))).toBe('{"url":"/x"}');
    const handler = createHttpHandler(fixture(), { sessions: false });
    handlers.push(handler);
    const wrapped = await listen(
      toNodeListener(async (request) => {
        const response = await handler(request);
        response.headers.set("x-wrapped", "1");
        return response;
      }),
    );
    const answer = await raw(
      wrapped,
      message("POST", "/mcp", LEGACY, JSON.stringify(call(1, "echo", { text: "w" }))),
    );
    expect(answer).toContain("x-wrapped: 1\r\n");
    expect(answer).toContain('"text":"w"');
  });
});

describe("a request's headers read without Headers", () => {
  it("are what Headers.get gives: any case, repeats joined, surrounding spaces dropped", async () => {
    const names = ["accept", "x-a", "x-b", "x-c", "content-length", "mcp-session-id", "host"];
    const port = await listen(
      toNodeListener((request) => {
        const lazy = names.map((n) => header(request, n));
        return Response.json({ lazy, full: names.map((n) => request.headers.get(n)) });
      }),
    );
    const answer = await raw(
      port,
      "GET / HTTP/1.1\r\nHost: HOST\r\nACCEPT: a/b\r\nx-a: 1\r\nX-A:  2 \t\r\nx-B:\r\nX-c: \t three  words \t\r\nConnection: close\r\n\r\n",
    );
    const { lazy, full } = JSON.parse(bodyOf(answer));
    expect(lazy).toEqual(full);
    expect(lazy.slice(0, 6)).toEqual(["a/b", "1, 2", "", "three  words", null, null]);
  });
});

describe("a client that goes away from a stateless request", () => {
  function cancellable() {
    const server = new McpServer({ name: "gone", version: "1.0.0", onError: () => {} });
    const seen = { ran: 0, reasons: [] as string[] };
    const wait = (ctx: { signal: AbortSignal }) =>
      new Promise<string>((resolve) => {
        seen.ran++;
        const t = setTimeout(() => resolve("late"), 5000);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          seen.reasons.push(`${(ctx.signal.reason as Error).name}: ${(ctx.signal.reason as Error).message}`);
          resolve("cancelled");
        });
      });
    server.tool("slow", { run: (_a, ctx) => wait(ctx) });
    server.tool("busy", {
      run: (_a, ctx) => {
        ctx.progress(1, 2);
        return wait(ctx);
      },
    });
    const handler = createHttpHandler(server, { sessions: false });
    handlers.push(handler);
    return { handler, seen };
  }

  const until = async (check: () => boolean) => {
    for (let i = 0; !check() && i < 200; i++) await new Promise((r) => setTimeout(r, 5));
  };

  it("over node:http cancels it with an AbortError, for JSON and SSE answers, in both eras", async () => {
    const { handler, seen } = cancellable();
    const port = await listen(toNodeListener(handler));
    const cases: [{ [k: string]: string }, string][] = [
      [
        LEGACY,
        JSON.stringify({
          ...call(1, "slow"),
          params: { name: "slow", arguments: {}, _meta: { progressToken: "p" } },
        }),
      ],
      [
        LEGACY,
        JSON.stringify({
          ...call(2, "busy"),
          params: { name: "busy", arguments: {}, _meta: { progressToken: "p" } },
        }),
      ],
      [{ ...MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "slow" }, statelessCall(3, "slow")],
    ];
    for (const [i, [headers, body]] of cases.entries()) {
      const req = httpRequest({ host: "127.0.0.1", port, method: "POST", path: "/mcp", headers });
      req.on("error", () => {});
      req.end(body);
      await until(() => seen.ran === i + 1);
      await new Promise((r) => setTimeout(r, 20));
      req.destroy();
      await until(() => seen.reasons.length === i + 1);
      expect(seen.reasons).toHaveLength(i + 1);
    }
    expect(seen.reasons).toEqual(Array(3).fill("AbortError: This operation was aborted"));
  });

  it("runs nothing when it is gone before the request reaches its handler, in both eras", async () => {
    const { handler, seen } = cancellable();
    /** A request whose client goes away as soon as the exchange starts listening for it. */
    const leaving = (headers: { [k: string]: string }, body: string) => {
      const abort = new AbortController();
      const request = new Request(URL_, {
        method: "POST",
        headers: { ...POST_HEADERS, ...headers },
        body,
        signal: abort.signal,
      });
      const listen = request.signal.addEventListener.bind(request.signal);
      request.signal.addEventListener = ((type: string, fn: EventListener, o?: AddEventListenerOptions) => {
        listen(type, fn, o);
        queueMicrotask(() => abort.abort());
      }) as typeof request.signal.addEventListener;
      return handler(request);
    };
    const gone = (headers: { [k: string]: string }, body: string) =>
      handler(
        new Request(URL_, {
          method: "POST",
          headers: { ...POST_HEADERS, ...headers },
          body,
          signal: AbortSignal.abort(),
        }),
      );
    const MODERN_SLOW = {
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "slow",
    };
    expect(
      (await gone({ "mcp-protocol-version": "2025-06-18" }, JSON.stringify(call(1, "slow")))).status,
    ).toBe(202);
    expect((await gone(MODERN_SLOW, statelessCall(2, "slow"))).status).toBe(202);
    expect(seen.ran).toBe(0);
    // a request whose client leaves once its exchange listens has started by then, in either era:
    // its handler sees the cancellation
    const modern = await leaving(MODERN_SLOW, statelessCall(3, "slow"));
    expect(modern.status).toBe(202);
    const legacy = await leaving({ "mcp-protocol-version": "2025-06-18" }, JSON.stringify(call(4, "slow")));
    expect(legacy.status).toBe(202);
    expect(seen).toEqual({ ran: 2, reasons: Array(2).fill("AbortError: This operation was aborted") });
  });
});

describe("initialize over node:http", () => {
  it("answers with a session id header written as a Response would", async () => {
    const handler = createHttpHandler(fixture());
    handlers.push(handler);
    const port = await listen(toNodeListener(handler as HttpHandler));
    const answer = await raw(
      port,
      message("POST", "/mcp", { ...LEGACY, ...ORIGIN }, JSON.stringify(initBody())),
    );
    const head = answer.slice(0, answer.indexOf("\r\n\r\n"));
    expect(head.split("\r\n").map((l) => l.split(":")[0])).toEqual([
      "HTTP/1.1 200 OK",
      "access-control-allow-origin",
      "access-control-expose-headers",
      "content-type",
      "mcp-session-id",
      "vary",
      "content-length",
      "Connection",
    ]);
  });
});
