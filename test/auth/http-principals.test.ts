// Sessions bound to the principal that opened them: another principal, or none, never uses, watches,
// ends or answers for a session; each request's handler sees its own frozen credentials.
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "../../src/http/index.js";
import { type AuthInfo, McpServer, principalOf } from "../../src/index.js";
import { call, initBody, post, request, sleep } from "../http-helpers.js";

const TOKENS: { [token: string]: AuthInfo } = {
  alice: { token: "alice", subject: "alice", clientId: "app", scopes: ["read"] },
  "alice-refreshed": {
    token: "alice-refreshed",
    subject: "alice",
    clientId: "app",
    scopes: ["read", "write"],
  },
  bob: { token: "bob", subject: "bob", clientId: "app", scopes: ["read"] },
  robot: { token: "robot", clientId: "robot-app" },
};
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const notFound = { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" } };
const unauthorized = {
  jsonrpc: "2.0",
  error: {
    code: -32000,
    message: "Unauthorized: this session was opened with credentials; send them with every request",
  },
};

const handlers: HttpHandler[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

function setup(options: HttpHandlerOptions = {}) {
  const server = new McpServer({ name: "principals", version: "1.0.0", onError: () => {} });
  server.tool("whoami", { run: (_a, ctx) => JSON.stringify(ctx.auth ?? null) });
  server.tool("later", {
    description: "reads ctx.auth after 40 ms",
    run: async (_a, ctx) => {
      await sleep(40);
      return ctx.auth?.token ?? "none";
    },
  });
  server.tool("tamper", {
    run: (_a, ctx) => {
      const tries = [
        () => ctx.auth!.scopes!.push("admin"),
        () => {
          (ctx.auth as { token?: string }).token = "forged";
        },
      ];
      const outcomes = tries.map((t) => {
        try {
          t();
          return "changed";
        } catch {
          return "refused";
        }
      });
      return outcomes.join(", ");
    },
  });
  server.tool("ask", {
    run: async (_a, ctx) => {
      const r = await ctx.elicit({
        message: "Name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } },
      });
      return `got ${r.content?.name}`;
    },
  });
  const handler = createHttpHandler(server, {
    authenticate: (req) => {
      const header = req.headers.get("authorization");
      if (header === null) return undefined; // anonymous clients are welcome too
      const auth = TOKENS[header.slice("Bearer ".length)];
      if (!auth) return new Response(null, { status: 401 });
      return auth.scopes ? { ...auth, scopes: [...auth.scopes] } : { ...auth };
    },
    ...options,
  });
  handlers.push(handler);
  return handler;
}

async function open(
  handler: HttpHandler,
  headers: { [k: string]: string },
  capabilities: object = {},
  version = "2025-11-25",
) {
  const res = await post(handler, initBody(version, capabilities), headers);
  expect(res.status).toBe(200);
  await res.text();
  const sid = res.headers.get("mcp-session-id")!;
  const ack = await post(
    handler,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { ...headers, "mcp-session-id": sid },
  );
  expect(ack.status).toBe(202);
  return sid;
}

const whoami = async (handler: HttpHandler, sid: string, headers: { [k: string]: string }) => {
  const res = await post(handler, call(9, "whoami"), { ...headers, "mcp-session-id": sid });
  return { status: res.status, body: await res.json() };
};
const getStream = (handler: HttpHandler, sid: string, headers: { [k: string]: string } = {}) =>
  request(handler, "GET", { accept: "text/event-stream", "mcp-session-id": sid, ...headers });

describe("principalOf", () => {
  it("is the key of the subject, else of the client id, else undefined", () => {
    expect(principalOf({ subject: "u1", clientId: "c1" })).toBe("user::u1");
    expect(principalOf({ clientId: "c1" })).toBe("client::c1");
    expect(principalOf({ token: "t" })).toBeUndefined();
    expect(principalOf(undefined)).toBeUndefined();
  });
});

describe("a session belongs to the principal that opened it", () => {
  it("another principal gets 404 Session not found on POST, GET and DELETE, and the session stays", async () => {
    const handler = setup();
    const sid = await open(handler, as("alice"));
    const bob = await whoami(handler, sid, as("bob"));
    expect(bob).toEqual({ status: 404, body: notFound });
    const get = await getStream(handler, sid, as("bob"));
    expect(get.status).toBe(404);
    expect(await get.json()).toEqual(notFound);
    const del = await request(handler, "DELETE", { "mcp-session-id": sid, ...as("bob") });
    expect(del.status).toBe(404);
    expect(await del.json()).toEqual(notFound);
    expect(handler.sessionCount).toBe(1);
    const alice = await whoami(handler, sid, as("alice"));
    expect(alice.status).toBe(200);
    expect(JSON.parse(alice.body.result.content[0].text)).toEqual(TOKENS.alice);
  });

  it("another principal's 404 is byte for byte the 404 of an unknown id, whatever the version header", async () => {
    const handler = setup();
    const sid = await open(handler, as("alice"), {}, "2025-06-18");
    for (const version of ["2025-06-18", "2025-11-25", "2026-07-28"]) {
      const headers = { ...as("bob"), "mcp-protocol-version": version };
      for (const method of ["POST", "GET", "DELETE"]) {
        const answer = async (id: string) => {
          const h = { ...headers, "mcp-session-id": id, accept: "application/json, text/event-stream" };
          const res =
            method === "POST" ? await post(handler, call(1, "whoami"), h) : await request(handler, method, h);
          return [res.status, await res.text()];
        };
        expect(await answer(sid)).toEqual(await answer("0".repeat(32)));
      }
    }
  });

  it("a request without credentials gets 401 on POST, GET and DELETE; it never runs as the owner", async () => {
    const handler = setup();
    const sid = await open(handler, as("alice"));
    const none = await whoami(handler, sid, {});
    expect(none).toEqual({ status: 401, body: unauthorized });
    for (const method of ["GET", "DELETE"]) {
      const res = await request(handler, method, { accept: "text/event-stream", "mcp-session-id": sid });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      expect(await res.json()).toEqual(unauthorized);
    }
    expect(handler.sessionCount).toBe(1);
  });

  it("an anonymous session is never bound later: a request with credentials gets 404", async () => {
    const handler = setup();
    const sid = await open(handler, {});
    expect(await whoami(handler, sid, as("bob"))).toEqual({ status: 404, body: notFound });
    const anon = await whoami(handler, sid, {});
    expect(anon.body.result.content[0].text).toBe("null");
  });

  it("the client id is the principal of a token without a subject", async () => {
    const handler = setup();
    const sid = await open(handler, as("robot"));
    expect((await whoami(handler, sid, as("robot"))).status).toBe(200);
    expect((await whoami(handler, sid, as("alice"))).status).toBe(404);
  });

  it("another principal's requests do not keep a session alive", async () => {
    const handler = setup({ sessionIdleMs: 50 });
    const sid = await open(handler, as("alice"));
    for (let i = 0; i < 10; i++) {
      expect((await whoami(handler, sid, as("bob"))).status).toBe(404);
      await sleep(15);
    }
    expect((await whoami(handler, sid, as("alice"))).status).toBe(404);
    expect(handler.sessionCount).toBe(0);
  });

  it("nor do they when they name a 2026-07-28 version (POST or GET)", async () => {
    const handler = setup({ sessionIdleMs: 50 });
    const sid = await open(handler, as("alice"));
    const modern = { ...as("bob"), "mcp-protocol-version": "2026-07-28" };
    for (let i = 0; i < 10; i++) {
      // served as 2026-07-28 requests: the session id of a session that is not theirs is ignored
      expect((await whoami(handler, sid, modern)).status).toBe(400);
      expect((await getStream(handler, sid, modern)).status).toBe(405);
      await sleep(15);
    }
    expect((await whoami(handler, sid, as("alice"))).status).toBe(404);
    expect(handler.sessionCount).toBe(0);
  });

  it("bob's GET never receives alice's notifications", async () => {
    const handler = setup();
    const sid = await open(handler, as("alice"));
    const stream = await getStream(handler, sid, as("alice"));
    expect(stream.status).toBe(200);
    expect((await getStream(handler, sid, as("bob"))).status).toBe(404);
    await stream.body!.cancel();
  });
});

describe("each request's credentials", () => {
  it("a refreshed token of the same principal serves its own request; one in flight keeps its own", async () => {
    const handler = setup();
    const sid = await open(handler, as("alice"));
    const first = post(handler, call(1, "later"), { ...as("alice"), "mcp-session-id": sid });
    await sleep(10);
    const second = await whoami(handler, sid, as("alice-refreshed"));
    expect(JSON.parse(second.body.result.content[0].text)).toEqual(TOKENS["alice-refreshed"]);
    expect(await (await first).json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "alice" }] },
    });
    // the refresh did not rebind the session either
    const third = post(handler, call(2, "later"), { ...as("alice"), "mcp-session-id": sid });
    expect((await (await third).json()).result.content[0].text).toBe("alice");
  });

  it("are frozen: a handler cannot change them", async () => {
    const handler = setup();
    const sid = await open(handler, as("alice"));
    const res = await post(handler, call(1, "tamper"), { ...as("alice"), "mcp-session-id": sid });
    expect((await res.json()).result.content).toEqual([{ type: "text", text: "refused, refused" }]);
  });

  it("the hook's bodiless refusal gets a JSON-RPC error body, its headers kept", async () => {
    const server = new McpServer({ name: "x", version: "1" });
    const handler = createHttpHandler(server, {
      authenticate: () =>
        new Response(null, { status: 401, headers: { "www-authenticate": 'Bearer realm="x"' } }),
    });
    handlers.push(handler);
    const res = await post(handler, initBody());
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="x"');
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({ jsonrpc: "2.0", error: { code: -32000, message: "Unauthorized" } });
  });
});

describe("server-to-client requests", () => {
  it("carry unguessable ids, and only their own session and principal can answer them", async () => {
    const handler = setup();
    const alice = await open(handler, as("alice"), { elicitation: {} });
    const bob = await open(handler, as("bob"), { elicitation: {} });
    const res = await post(handler, call(7, "ask"), { ...as("alice"), "mcp-session-id": alice });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("elicitation/create")) text += (await reader.read()).value ?? "";
    const asked = JSON.parse(/data: (\{.*elicitation\/create.*\})\n/.exec(text)![1]!);
    expect(asked.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const answer = (name: string) => ({
      jsonrpc: "2.0",
      id: asked.id,
      result: { action: "accept", content: { name } },
    });
    // bob, on his own session: accepted as a response, but it resolves nothing of alice's
    expect((await post(handler, answer("bob-own"), { ...as("bob"), "mcp-session-id": bob })).status).toBe(
      202,
    );
    // bob, on alice's session: refused
    const hijack = await post(handler, answer("bob-hijack"), { ...as("bob"), "mcp-session-id": alice });
    expect(hijack.status).toBe(404);
    expect((await post(handler, answer("alice"), { ...as("alice"), "mcp-session-id": alice })).status).toBe(
      202,
    );
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
    }
    const events = text
      .split("\n\n")
      .map((block) => /^data: (.+)$/m.exec(block)?.[1])
      .filter((d): d is string => d !== undefined && d !== "");
    expect(JSON.parse(events.at(-1)!)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: { content: [{ type: "text", text: "got alice" }] },
    });
  });
});

describe("docs/security.md", () => {
  it("the authenticate example binds sessions to the token's subject", async () => {
    const { mcp } = await import("../../examples/docs/http-auth.js");
    const denied = await post(mcp as HttpHandler, initBody());
    expect(denied.status).toBe(401);
    expect(await denied.json()).toEqual({ jsonrpc: "2.0", error: { code: -32000, message: "Unauthorized" } });
    const sid = await open(mcp as HttpHandler, as("t-alice"));
    const res = await post(mcp as HttpHandler, call(1, "my_notes"), {
      ...as("t-alice"),
      "mcp-session-id": sid,
    });
    expect((await res.json()).result.content[0].text).toBe("Notes of alice");
    mcp.close();
  });
});
