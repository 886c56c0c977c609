// The session backend contract: what the Streamable HTTP handler's sessions do on the wire, whatever
// keeps them (src/http/backend.ts: none, this instance's memory, a shared store). Raw requests
// through the handler, exact statuses, headers and JSON-RPC bodies. Each backend runs it in a few
// lines (test/contracts/memory.test.ts, test/contracts/redis.test.ts); where a backend legitimately
// differs, its features say so.
import { afterEach, describe, expect, it } from "vitest";
import {
  createHttpHandler,
  type HttpHandler,
  type HttpHandlerOptions,
  type SessionStore,
} from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";

/** The `sessions` option of the backend under test; `peer`: another instance's, on the same store. */
export interface SessionBackendTarget {
  readonly sessions: boolean | SessionStore;
  readonly peer?: SessionStore;
  close?(): void | Promise<void>;
}

/** How the backend legitimately differs. */
export interface SessionBackendFeatures {
  /** It keeps sessions (false: `sessions: false`, every POST on its own, no GET, no DELETE). */
  readonly sessions: boolean;
  /** Its sessions live in a store every instance serves from: the target gives `peer`. */
  readonly shared?: boolean;
}

const URL_ = "http://127.0.0.1:3000/mcp";
const HOST = { host: "127.0.0.1:3000" };
const POST = { ...HOST, accept: "application/json, text/event-stream", "content-type": "application/json" };
const V = "2025-11-25";
const JSON_ = "application/json";
const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const echo = (id: number, text: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text } },
});
const echoed = (id: number, text: string) => ({
  jsonrpc: "2.0",
  id,
  result: { content: [{ type: "text", text }] },
});
/** A session id of the right form that no backend ever made. */
const UNKNOWN = "0123456789abcdef0123456789abcdef";
/** A JSON-RPC error body without an id, as the handler's own refusals are. */
const refusal = (code: number, message: string) => ({ jsonrpc: "2.0", error: { code, message } });
const NOT_FOUND = refusal(-32001, "Session not found");
const NO_ID = {
  jsonrpc: "2.0",
  error: {
    code: -32000,
    message:
      "Bad Request: Mcp-Session-Id header is required (initialize first, or send a 2026-07-28 request with _meta); supported versions: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05",
    data: { supported: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] },
  },
};
const methodNotAllowed = (methods: string) => refusal(-32000, `Method not allowed: use ${methods}`);

/** `Bearer <name>` is principal `<name>`; no header is anonymous. */
const authenticate = (request: Request) => {
  const h = request.headers.get("authorization");
  return h?.startsWith("Bearer ") ? { token: h.slice(7), subject: h.slice(7) } : undefined;
};

/** What a response says on the wire: its status, the headers that matter here, and its body parsed. */
async function wire(res: Response) {
  const text = await res.text();
  return {
    status: res.status,
    allow: res.headers.get("allow"),
    session: res.headers.get("mcp-session-id"),
    type: res.headers.get("content-type"),
    body: text === "" ? undefined : JSON.parse(text),
  };
}

export function sessionBackendContract(
  name: string,
  make: () => Promise<SessionBackendTarget>,
  features: SessionBackendFeatures,
): void {
  describe(`SessionBackend contract: ${name}`, () => {
    let target: SessionBackendTarget | undefined;
    const handlers: HttpHandler[] = [];
    /** The sessions whose end the servers' extensions heard, in order. */
    const ended: string[] = [];
    afterEach(async () => {
      for (const h of handlers.splice(0)) h.close();
      await target?.close?.();
      target = undefined;
      ended.length = 0;
    });

    /** A handler on the backend (`peer`: the other instance's), with the echo tool. */
    const open = async (options: HttpHandlerOptions = {}, peer = false) => {
      target ??= await make();
      const server = new McpServer({ name: "backend", version: "1.0.0", onError: () => {} });
      server.tool("echo", { description: "echo", run: (a: { text?: string }) => a.text ?? "" });
      server.use({ id: "com.example/ends", sessionEnd: ({ sessionId }) => void ended.push(sessionId) });
      const sessions = peer ? target.peer! : target.sessions;
      const handler = createHttpHandler(server, { ...options, sessions });
      handlers.push(handler);
      return handler;
    };
    const post = (h: HttpHandler, body: unknown, headers: { [k: string]: string } = {}) =>
      h(new Request(URL_, { method: "POST", headers: { ...POST, ...headers }, body: JSON.stringify(body) }));
    const send = (h: HttpHandler, method: string, headers: { [k: string]: string } = {}) =>
      h(new Request(URL_, { method, headers: { ...HOST, ...headers } }));
    /** Initializes; the session id (null without sessions) and the answer. */
    const initialize = async (h: HttpHandler, headers: { [k: string]: string } = {}) => {
      const w = await wire(await post(h, INIT, headers));
      if (w.session !== null) {
        const ack = { jsonrpc: "2.0", method: "notifications/initialized" };
        expect((await post(h, ack, { ...headers, "mcp-session-id": w.session })).status).toBe(202);
      }
      return w;
    };
    const on = (sid: string, extra: { [k: string]: string } = {}) => ({
      "mcp-session-id": sid,
      "mcp-protocol-version": V,
      ...extra,
    });

    it("answers initialize: with a new session's id, or (without sessions) starting nothing", async () => {
      const h = await open();
      const w = await initialize(h);
      const { protocolVersion, serverInfo } = w.body.result;
      expect([w.status, w.type, w.body.id, protocolVersion, serverInfo.name]).toEqual([
        200,
        JSON_,
        0,
        V,
        "backend",
      ]);
      if (features.sessions) expect(w.session).toMatch(/^[0-9a-f]{32}$/);
      else expect(w.session).toBeNull();
      expect(h.sessionCount).toBe(features.sessions ? 1 : 0);
      const again = await initialize(h);
      expect(again.session === w.session).toBe(!features.sessions);
      expect(h.sessionCount).toBe(features.sessions ? 2 : 0);
    });

    it("serves a session's requests on it, with its id on every answer", async () => {
      const h = await open();
      const { session } = await initialize(h);
      const headers = session === null ? { "mcp-protocol-version": V } : on(session);
      for (const id of [1, 2]) {
        expect(await wire(await post(h, echo(id, `hi ${id}`), headers))).toEqual({
          status: 200,
          allow: null,
          session,
          type: JSON_,
          body: echoed(id, `hi ${id}`),
        });
      }
    });

    it("refuses an unknown or malformed session id with 404 -32001 (without sessions the id means nothing)", async () => {
      const h = await open();
      for (const sid of [UNKNOWN, "not-a-session-id", "0".repeat(33)]) {
        const w = await wire(await post(h, echo(1, "x"), on(sid)));
        if (features.sessions) expect(w).toMatchObject({ status: 404, session: null, body: NOT_FOUND });
        else expect(w).toMatchObject({ status: 200, session: null, body: echoed(1, "x") });
      }
      expect(h.sessionCount).toBe(0);
    });

    it("refuses a request without a session id with 400, naming the revisions (without sessions it is served)", async () => {
      const h = await open();
      const w = await wire(await post(h, echo(1, "x"), { "mcp-protocol-version": V }));
      if (features.sessions) expect(w).toMatchObject({ status: 400, type: JSON_, body: NO_ID });
      else expect(w).toMatchObject({ status: 200, body: echoed(1, "x") });
    });

    it("keeps a session to the principal that opened it: another gets 404, none 401", async () => {
      const h = await open({ authenticate });
      const { session } = await initialize(h, { authorization: "Bearer ada" });
      if (!features.sessions) return expect(session).toBeNull();
      const sid = session!;
      const other = await wire(await post(h, echo(1, "x"), on(sid, { authorization: "Bearer bob" })));
      expect(other).toMatchObject({ status: 404, body: NOT_FOUND });
      const none = await wire(await post(h, echo(2, "x"), on(sid)));
      expect(none).toMatchObject({
        status: 401,
        body: refusal(
          -32000,
          "Unauthorized: this session was opened with credentials; send them with every request",
        ),
      });
      const own = await wire(await post(h, echo(3, "x"), on(sid, { authorization: "Bearer ada" })));
      expect(own).toMatchObject({ status: 200, session: sid, body: echoed(3, "x") });
      // the session's GET and DELETE too
      const get = await send(h, "GET", on(sid, { accept: "text/event-stream", authorization: "Bearer bob" }));
      expect(await wire(get)).toMatchObject({ status: 404, body: NOT_FOUND });
      expect((await send(h, "DELETE", on(sid))).status).toBe(401);
      expect(h.sessionCount).toBe(1);
    });

    it("opens a session's GET stream: one at a time (409), only for SSE (406), only for a session named (400, 404)", async () => {
      const h = await open();
      const { session } = await initialize(h);
      const sse = { accept: "text/event-stream" };
      if (!features.sessions) {
        for (const headers of [sse, on(UNKNOWN, sse)]) {
          const w = await wire(await send(h, "GET", headers));
          expect(w).toEqual({ ...w, status: 405, allow: "POST", body: methodNotAllowed("POST") });
        }
        expect(h.closeStandaloneStream(UNKNOWN)).toBe(false);
        return;
      }
      const sid = session!;
      const stream = await send(h, "GET", on(sid, sse));
      expect([
        stream.status,
        stream.headers.get("content-type"),
        stream.headers.get("mcp-session-id"),
      ]).toEqual([200, "text/event-stream", sid]);
      const second = await wire(await send(h, "GET", on(sid, sse)));
      expect(second).toMatchObject({
        status: 409,
        body: refusal(-32000, "Conflict: this session already has a GET stream open"),
      });
      expect(await wire(await send(h, "GET", on(sid, { accept: "application/json" })))).toMatchObject({
        status: 406,
        body: refusal(-32000, "Not Acceptable: Accept must list text/event-stream"),
      });
      expect(await wire(await send(h, "GET", sse))).toMatchObject({
        status: 400,
        body: refusal(-32000, "Bad Request: Mcp-Session-Id header is required"),
      });
      expect(await wire(await send(h, "GET", on(UNKNOWN, sse)))).toMatchObject({
        status: 404,
        body: NOT_FOUND,
      });
      // the handler closes it with a retry hint; the client may open it again
      expect(h.closeStandaloneStream(sid)).toBe(true);
      expect(await stream.text()).toMatch(/retry: 1000\n\n$/);
      expect(h.closeStandaloneStream(sid)).toBe(false);
      const reopened = await send(h, "GET", on(sid, sse));
      expect(reopened.status).toBe(200);
      await reopened.body!.cancel();
    });

    it("ends a session on DELETE (204): its requests get 404 from then on", async () => {
      const h = await open();
      const { session } = await initialize(h);
      if (!features.sessions) {
        const w = await wire(await send(h, "DELETE", on(UNKNOWN)));
        return expect(w).toEqual({ ...w, status: 405, allow: "POST", body: methodNotAllowed("POST") });
      }
      const sid = session!;
      const none = { allow: null, session: null, type: null, body: undefined };
      expect(await wire(await send(h, "DELETE", on(sid)))).toEqual({ status: 204, ...none });
      expect(h.sessionCount).toBe(0);
      expect(await wire(await post(h, echo(1, "x"), on(sid)))).toMatchObject({
        status: 404,
        body: NOT_FOUND,
      });
      expect(await wire(await send(h, "DELETE", on(sid)))).toMatchObject({ status: 404, body: NOT_FOUND });
      expect(await wire(await send(h, "DELETE", {}))).toMatchObject({ status: 400 });
    });

    it("keeps a live session's requests on it whatever their version header (else the header's era serves them)", async () => {
      const h = await open();
      const { session } = await initialize(h);
      const headers = on(session ?? UNKNOWN, { "mcp-protocol-version": "2026-07-28" });
      const w = await wire(await post(h, echo(1, "x"), headers));
      const supported = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
      const error = features.sessions
        ? {
            // the session's revisions: 2026-07-28 is not one of them
            code: -32022,
            message: `Bad Request: unsupported MCP-Protocol-Version "2026-07-28"; supported: ${supported.join(", ")}`,
            data: { supported, requested: "2026-07-28" },
          }
        : {
            code: -32602,
            message:
              'Invalid params: _meta must carry "io.modelcontextprotocol/protocolVersion" (a string) and "io.modelcontextprotocol/clientCapabilities" (an object)',
          };
      const id = features.sessions ? {} : { id: 1 };
      expect(w).toEqual({ ...w, status: 400, session: null, body: { jsonrpc: "2.0", ...id, error } });
    });

    it("drains: GET streams close with a retry hint, new requests get 503, and then every session is ended", async () => {
      const h = await open();
      const { session } = await initialize(h);
      const stream = session && (await send(h, "GET", on(session, { accept: "text/event-stream" })));
      // a grace longer than the test may take: the GET stream must close at once, not at its end
      const drained = h.drain({ graceMs: 60_000 });
      expect(h.draining).toBe(true);
      if (stream) expect(await stream.text()).toMatch(/retry: 1000\n\n$/);
      const refused = await post(h, INIT);
      expect([refused.status, refused.headers.get("retry-after"), refused.headers.get("connection")]).toEqual(
        [503, "1", "close"],
      );
      expect((await wire(refused)).body).toEqual(
        refusal(
          -32000,
          "Service Unavailable: this server is shutting down; retry the request (another instance serves it)",
        ),
      );
      await drained;
      expect(h.sessionCount).toBe(0);
    });

    it("lists the methods it serves: in a preflight's Allow and a 405's", async () => {
      const h = await open();
      const methods = features.sessions ? "GET, POST, DELETE" : "POST";
      const preflight = await send(h, "OPTIONS", {
        origin: "http://127.0.0.1:3000",
        "access-control-request-method": "POST",
      });
      expect([preflight.status, preflight.headers.get("allow")]).toEqual([204, `${methods}, OPTIONS`]);
      expect(preflight.headers.get("access-control-allow-methods")).toBe(methods);
      const w = await wire(await send(h, "PUT"));
      expect(w).toEqual({ ...w, status: 405, allow: methods, body: methodNotAllowed(methods) });
    });

    it("limits how fast anonymous callers open sessions: 429 with Retry-After (without sessions nothing opens)", async () => {
      const h = await open({ anonymousSessionsPerMinute: { perCaller: 1, total: 1 } });
      expect((await initialize(h)).status).toBe(200);
      const res = await post(h, INIT);
      const w = await wire(res);
      if (!features.sessions) return expect(w).toMatchObject({ status: 200, session: null });
      expect(w).toMatchObject({
        status: 429,
        session: null,
        body: refusal(-32000, "Too Many Requests: new sessions without credentials come too fast"),
      });
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(h.sessionCount).toBe(1);
    });

    it("serves 2026-07-28 requests on their own beside the sessions", async () => {
      const h = await open();
      const { session } = await initialize(h);
      const meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      };
      const modern = { ...echo(7, "now"), params: { ...echo(7, "now").params, _meta: meta } };
      const headers = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "echo",
      };
      const w = await wire(await post(h, modern, headers));
      expect(w).toMatchObject({ status: 200, session: null });
      expect(w.body.result.content).toEqual([{ type: "text", text: "now" }]);
      expect(h.sessionCount).toBe(session === null ? 0 : 1);
    });

    it("ends every session it holds on close: a GET stream ends, sessionCount is 0", async () => {
      const h = await open();
      const { session } = await initialize(h);
      if (session === null) return h.close();
      const stream = await send(h, "GET", on(session, { accept: "text/event-stream" }));
      h.close();
      await stream.text(); // ends
      expect(h.sessionCount).toBe(0);
    });

    it("tells the extensions' sessionEnd hooks of each session it ends, once: on DELETE, then on close", async () => {
      const h = await open();
      const a = (await initialize(h)).session;
      const b = (await initialize(h)).session;
      if (!features.sessions) return expect([a, b, ended]).toEqual([null, null, []]);
      expect((await send(h, "DELETE", on(a!))).status).toBe(204);
      await expect.poll(() => [...ended]).toEqual([a]);
      h.close();
      expect(ended).toEqual([a, b]);
      h.close();
      expect(ended).toEqual([a, b]);
    });

    if (features.shared) {
      it("serves a session on every instance: opened on one, used, streamed and ended on another", async () => {
        const a = await open();
        const b = await open({}, true);
        const { session } = await initialize(a);
        const sid = session!;
        expect(await wire(await post(b, echo(1, "there"), on(sid)))).toMatchObject({
          status: 200,
          session: sid,
          body: echoed(1, "there"),
        });
        expect(b.sessionCount).toBe(1); // its copy
        const stream = await send(b, "GET", on(sid, { accept: "text/event-stream" }));
        expect(stream.status).toBe(200);
        expect((await send(a, "DELETE", on(sid))).status).toBe(204);
        await stream.text(); // the other instance heard of the end, and closed its stream
        expect(b.sessionCount).toBe(0);
        expect(await wire(await post(b, echo(2, "x"), on(sid)))).toMatchObject({
          status: 404,
          body: NOT_FOUND,
        });
      });
    } else if (features.sessions) {
      it("ends a session idle for sessionIdleMs: its requests get 404", async () => {
        const h = await open({ sessionIdleMs: 30 });
        const { session } = await initialize(h);
        await expect.poll(() => h.sessionCount, { timeout: 5000 }).toBe(0);
        expect(ended).toEqual([session]); // its sessionEnd hooks heard it
        expect(await wire(await post(h, echo(1, "x"), on(session!)))).toMatchObject({
          status: 404,
          body: NOT_FOUND,
        });
      });
    }
  });
}
