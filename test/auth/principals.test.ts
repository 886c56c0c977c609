// Principals are typed: a user (sub, with its issuer) and a client (client_id) never share sessions,
// request states or tasks, whatever their names; an anonymous 2025 session's tasks are its own.
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler, type HttpHandler } from "../../src/http/index.js";
import { type AuthInfo, McpServer, principalFrom, principalOf } from "../../src/index.js";
import { call, initBody, post } from "../http-helpers.js";
import { modernPeer } from "../modern-helpers.js";

const TASKS = "io.modelcontextprotocol/tasks";
const WITH = { extensions: { [TASKS]: {} }, elicitation: {} };
const userAlice: AuthInfo = { subject: "alice", issuer: "https://as.example" };
const clientAlice: AuthInfo = { clientId: "alice", issuer: "https://as.example" };

describe("principalFrom", () => {
  it("tells a user from a client of the same name, and one issuer's user from another's", () => {
    expect(principalFrom(userAlice)).toEqual({
      kind: "user",
      issuer: "https://as.example",
      id: "alice",
      key: "user:https%3A//as.example:alice",
    });
    expect(principalFrom(clientAlice)).toEqual({
      kind: "client",
      issuer: "https://as.example",
      id: "alice",
      key: "client:https%3A//as.example:alice",
    });
    const keys = [
      userAlice,
      clientAlice,
      { subject: "alice" },
      { clientId: "alice" },
      { subject: "alice", issuer: "https://other.example" },
      // the parts are escaped: an issuer or an id holding ":" or "%" cannot forge another's key
      { subject: "b:c", issuer: "a" },
      { subject: "c", issuer: "a:b" },
      { subject: "%3A", issuer: "a" },
      { subject: ":", issuer: "a" },
    ].map(principalOf);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("is the subject, else the client id, else nobody (anonymous)", () => {
    expect(principalFrom({ subject: "u1", clientId: "c1" })?.key).toBe("user::u1");
    expect(principalFrom({ subject: "", clientId: "c1" })?.key).toBe("client::c1");
    expect(principalFrom({ token: "t" })).toBeUndefined();
    expect(principalFrom({ subject: "" })).toBeUndefined();
    expect(principalOf(undefined)).toBeUndefined();
  });
});

const handlers: HttpHandler[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

/** An HTTP handler whose bearer tokens name the AuthInfo in TOKENS (none: anonymous). */
function http(options: { sessions?: boolean } = {}) {
  const tokens: { [token: string]: AuthInfo } = { user: userAlice, client: clientAlice };
  const server = new McpServer({ name: "p", version: "1.0.0", onError: () => {}, tasks: { ttlMs: 60_000 } });
  server.tool("whoami", { run: (_a, ctx) => ctx.auth?.subject ?? ctx.auth?.clientId ?? "nobody" });
  server.tool("job", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      return "done";
    },
  });
  const handler = createHttpHandler(server, {
    ...options,
    authenticate: (request) => {
      const token = request.headers.get("authorization")?.slice("Bearer ".length);
      return token === undefined ? undefined : { ...tokens[token]! };
    },
  });
  handlers.push(handler);
  return handler;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function open(handler: HttpHandler, headers: { [k: string]: string } = {}) {
  const res = await post(handler, initBody(), headers);
  expect(res.status).toBe(200);
  return res.headers.get("mcp-session-id")!;
}

describe("over HTTP, a user and a client of one name", () => {
  it("never share a session: the other gets 404, as for an unknown id", async () => {
    const handler = http();
    const sid = await open(handler, bearer("client"));
    const own = await post(handler, call(1, "whoami"), { ...bearer("client"), "mcp-session-id": sid });
    expect([own.status, (await own.json()).result.content[0].text]).toEqual([200, "alice"]);
    const other = await post(handler, call(2, "whoami"), { ...bearer("user"), "mcp-session-id": sid });
    expect([other.status, await other.json()]).toEqual([
      404,
      { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" } },
    ]);
  });
});

describe("in the 2026-07-28 era, a user and a client of one name", () => {
  it("never open each other's request state", async () => {
    const s = new McpServer({ name: "p", version: "1.0.0", onError: () => {} });
    s.tool("greet", {
      run: async (_a, ctx) => {
        const r = await ctx.elicit(
          { message: "Name?", requestedSchema: { type: "object", properties: { n: { type: "string" } } } },
          { key: "n" },
        );
        return `Hello ${r.content?.n}`;
      },
    });
    const first = await modernPeer(s, userAlice).request("tools/call", { name: "greet" }, WITH);
    const params = {
      name: "greet",
      inputResponses: { n: { action: "accept", content: { n: "A" } } },
      requestState: first.answer.result.requestState,
    };
    expect((await modernPeer(s, clientAlice).request("tools/call", params, WITH)).answer.error).toEqual({
      code: -32602,
      message: "Invalid or expired requestState",
      data: { reason: "invalid_request_state" },
    });
    const own = await modernPeer(s, userAlice).request("tools/call", params, WITH);
    expect(own.answer.result.content).toEqual([{ type: "text", text: "Hello A" }]);
  });

  it("never see each other's tasks", async () => {
    const s = new McpServer({ name: "p", version: "1.0.0", onError: () => {} });
    s.tool("job", {
      task: "optional",
      run: async (_a, ctx) => {
        await ctx.task();
        return "done";
      },
    });
    const { taskId } = (await modernPeer(s, userAlice).request("tools/call", { name: "job" }, WITH)).answer
      .result;
    const stranger = await modernPeer(s, clientAlice).request("tasks/get", { taskId }, WITH);
    expect(stranger.answer.error).toEqual({
      code: -32602,
      message: `Unknown task: ${taskId}`,
      data: { taskId },
    });
    const own = await modernPeer(s, userAlice).request("tasks/get", { taskId }, WITH);
    expect(own.answer.result.taskId).toBe(taskId);
  });
});

const V2025 = { "mcp-protocol-version": "2025-11-25" };

/** Starts a 2025-11-25 task on the session `sid`: its id. */
async function startTask(handler: HttpHandler, sid: string, headers: { [k: string]: string } = {}) {
  const body = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "job", task: {} } };
  const res = await post(handler, body, { ...V2025, ...headers, "mcp-session-id": sid });
  return (await res.json()).result.task.taskId as string;
}

const ask = async (handler: HttpHandler, sid: string | undefined, method: string, taskId: string) => {
  const headers: { [k: string]: string } = sid === undefined ? V2025 : { ...V2025, "mcp-session-id": sid };
  const res = await post(handler, { jsonrpc: "2.0", id: 2, method, params: { taskId } }, headers);
  return (await res.json()) as { result?: { [k: string]: unknown }; error?: unknown };
};

describe("an anonymous 2025-11-25 task", () => {
  it("belongs to its session: another anonymous session's tasks/get and tasks/result find no such task", async () => {
    const handler = http();
    const mine = await open(handler);
    const theirs = await open(handler);
    const taskId = await startTask(handler, mine);
    const unknown = { code: -32602, message: `Unknown task: ${taskId}`, data: { taskId } };
    expect((await ask(handler, theirs, "tasks/get", taskId)).error).toEqual(unknown);
    expect((await ask(handler, theirs, "tasks/result", taskId)).error).toEqual(unknown);
    expect((await ask(handler, theirs, "tasks/cancel", taskId)).error).toEqual(unknown);
    expect((await ask(handler, mine, "tasks/get", taskId)).result?.taskId).toBe(taskId);
    expect((await ask(handler, mine, "tasks/result", taskId)).result?.content).toEqual([
      { type: "text", text: "done" },
    ]);
  });

  it("of an authenticated session belongs to its principal, in every session of it", async () => {
    const handler = http();
    const one = await open(handler, bearer("user"));
    const two = await open(handler, bearer("user"));
    const taskId = await startTask(handler, one, bearer("user"));
    const res = await post(
      handler,
      { jsonrpc: "2.0", id: 2, method: "tasks/get", params: { taskId } },
      {
        ...V2025,
        ...bearer("user"),
        "mcp-session-id": two,
      },
    );
    expect((await res.json()).result.taskId).toBe(taskId);
  });

  it("without sessions (stateless HTTP) is found by its id alone, as at 2026-07-28", async () => {
    const handler = http({ sessions: false });
    const body = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "job", task: {} } };
    const taskId = (await (await post(handler, body, V2025)).json()).result.task.taskId;
    expect((await ask(handler, undefined, "tasks/get", taskId)).result?.taskId).toBe(taskId);
  });
});
