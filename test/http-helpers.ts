// Helpers of the Streamable HTTP tests: raw requests to a fetch handler, and an SSE reader.
import { afterEach } from "vitest";
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "../src/http/index.js";
import { McpServer } from "../src/index.js";

export const URL_ = "http://127.0.0.1:3000/mcp";
export const POST_HEADERS = {
  host: "127.0.0.1:3000",
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
};

/** A server with a tool per behaviour, and its handler (which the tools can reach). */
export function testServer(options: HttpHandlerOptions = {}) {
  const server = new McpServer({ name: "http-test", version: "1.0.0", onError: () => {} });
  const seen = { cancelled: 0, auth: [] as unknown[] };
  let handler!: HttpHandler;
  server.tool("echo", { description: "echo", run: (args: { text?: string }) => args.text ?? "" });
  server.tool("log", {
    description: "logs twice",
    run: async (_a, ctx) => {
      ctx.log("info", "one");
      await new Promise((r) => setTimeout(r, 5));
      ctx.log("info", "two");
      return "logged";
    },
  });
  server.tool("slow", {
    description: "waits 200 ms unless cancelled",
    run: async (_a, ctx) => {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 200);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          seen.cancelled++;
          resolve();
        });
      });
      return "slow done";
    },
  });
  server.tool("reconnect", {
    description: "closes its SSE stream, then answers",
    run: async (_a, ctx) => {
      const closed = handler.closeSseStream(ctx);
      await new Promise((r) => setTimeout(r, 30));
      return `closed=${closed}`;
    },
  });
  server.tool("whoami", { description: "auth", run: (_a, ctx) => JSON.stringify(ctx.auth ?? null) });
  server.resource("note://a", { description: "a note", read: () => "a" });
  handler = createHttpHandler(server, options);
  return { server, handler, seen };
}

/** POSTs a body (an object is JSON-encoded) with the usual headers, overridable. */
export function post(
  handler: HttpHandler,
  body: unknown,
  headers: { [k: string]: string } = {},
): Promise<Response> {
  return handler(
    new Request(URL_, {
      method: "POST",
      headers: { ...POST_HEADERS, ...headers },
      body:
        typeof body === "string" || body instanceof Uint8Array ? (body as BodyInit) : JSON.stringify(body),
    }),
  );
}

export function request(
  handler: HttpHandler,
  method: string,
  headers: { [k: string]: string } = {},
): Promise<Response> {
  return handler(new Request(URL_, { method, headers: { host: "127.0.0.1:3000", ...headers } }));
}

export const initBody = (protocolVersion = "2025-11-25", capabilities: object = {}) => ({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion, capabilities, clientInfo: { name: "raw", version: "1" } },
});

/** Initializes a session and sends `initialized`; returns the session id. */
export async function initialize(handler: HttpHandler, version = "2025-11-25", capabilities: object = {}) {
  const res = await post(handler, initBody(version, capabilities));
  const sid = res.headers.get("mcp-session-id");
  if (res.status !== 200 || !sid) throw new Error(`initialize failed: ${res.status}`);
  await res.text();
  const ack = await post(
    handler,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { "mcp-session-id": sid },
  );
  if (ack.status !== 202) throw new Error(`initialized failed: ${ack.status}`);
  return sid;
}

export const call = (id: number, name: string, args: object = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

export interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

/**
 * Reads SSE events from a response body: until it ends, or until `count` events arrived (then the
 * body is cancelled). Comment lines are skipped; a block with only `retry:` counts as an event.
 */
export async function readEvents(
  res: Response,
  count = Number.POSITIVE_INFINITY,
  ms = 3000,
): Promise<SseEvent[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buf = "";
  const timer = setTimeout(() => reader.cancel().catch(() => {}), ms);
  try {
    while (events.length < count) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += value;
      let end = buf.indexOf("\n\n");
      while (end !== -1 && events.length < count) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        end = buf.indexOf("\n\n");
        const e: SseEvent = { data: "" };
        let any = false;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          any = true;
          if (line.startsWith("id: ")) e.id = line.slice(4);
          else if (line.startsWith("retry: ")) e.retry = Number(line.slice(7));
          else if (line.startsWith("data: ")) e.data = line.slice(6);
        }
        if (any) events.push(e);
      }
    }
  } finally {
    clearTimeout(timer);
    if (events.length >= count) await reader.cancel().catch(() => {});
  }
  return events;
}

/** The JSON-RPC messages of SSE events (priming and retry-only events left out). */
export const messagesOf = (events: SseEvent[]) =>
  events.filter((e) => e.data !== "").map((e) => JSON.parse(e.data));

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A `testServer` factory for one test file: every handler it made is closed after each test. */
export function useTestServers() {
  const handlers: HttpHandler[] = [];
  afterEach(() => {
    for (const h of handlers.splice(0)) h.close();
  });
  return (options: HttpHandlerOptions = {}) => {
    const t = testServer(options);
    handlers.push(t.handler);
    return t;
  };
}
