// SEP-2350: a 403 names every scope the operation needs (the server's own included) in one challenge,
// in both eras, also when the token lacks the server's scopes too; the 401 without a token is unchanged.
import { afterEach, describe, expect, it } from "vitest";
import {
  createProtectedHandler,
  createResourceServer,
  type ProtectedHandlerOptions,
} from "../../src/auth/index.js";
import type { AuthInfo } from "../../src/connection.js";
import { createHttpHandler } from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";
import { call, initBody, POST_HEADERS, URL_ } from "../http-helpers.js";
import { meta } from "../modern-helpers.js";

const RESOURCE = "http://127.0.0.1:3000/mcp";
const PRM = `resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp"`;
const TOKENS: { [token: string]: AuthInfo } = {
  none: { token: "none", subject: "bob", scopes: [] },
  base: { token: "base", subject: "bob", scopes: ["mcp"] },
  other: { token: "other", subject: "bob", scopes: ["files:read"] },
};

const handlers: { close(): void }[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

function mcpServer() {
  const server = new McpServer({ name: "challenge", version: "1.0.0", onError: () => {} });
  server.tool("whoami", { run: () => "bob" });
  server.tool("admin_op", { scopes: ["mcp:admin"], run: () => "done" });
  server.prompt("audit", { scopes: ["audit"], get: () => "audit" });
  server.resource("files://{name}", { scopes: ["files:read"], read: ({ name }) => name });
  server.resource("vault://key", { scopes: ["vault"], read: () => "k" });
  return server;
}

function protectedHandler(options: Partial<ProtectedHandlerOptions> = {}) {
  const handler = createProtectedHandler(mcpServer(), {
    resource: RESOURCE,
    authorizationServers: ["https://auth.example.test"],
    requiredScopes: ["mcp"],
    scopesSupported: ["mcp", "mcp:admin", "files:read"],
    verifyToken: (token) => TOKENS[token],
    sessions: false,
    ...options,
  });
  handlers.push(handler);
  return handler;
}

async function send(handler: (r: Request) => Promise<Response>, body: unknown, headers: object = {}) {
  const res = await handler(
    new Request(URL_, {
      method: "POST",
      headers: { ...POST_HEADERS, ...headers },
      body: JSON.stringify(body),
    }),
  );
  return { status: res.status, challenge: res.headers.get("www-authenticate"), body: await res.json() };
}

const as = (token: string) => ({ authorization: `Bearer ${token}`, "mcp-protocol-version": "2025-11-25" });
const forbidden = (description: string, scope: string) =>
  `Bearer error="insufficient_scope", error_description="${description}", ${PRM}, scope="${scope}"`;

describe("one challenge for all an operation needs", () => {
  it("names the server's scopes and the tool's when the token has neither (2025-11-25)", async () => {
    const res = await send(protectedHandler(), call(1, "admin_op"), as("none"));
    expect(res).toEqual({
      status: 403,
      challenge: forbidden("Forbidden: this request needs the scopes mcp mcp:admin", "mcp mcp:admin"),
      body: {
        jsonrpc: "2.0",
        error: { code: -32000, message: "Forbidden: this request needs the scopes mcp mcp:admin" },
      },
    });
  });

  it("does so at 2026-07-28 too, whose headers name the tool", async () => {
    const body = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "admin_op", _meta: meta() } };
    const res = await send(protectedHandler(), body, {
      authorization: "Bearer none",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "admin_op",
    });
    expect([res.status, res.challenge]).toEqual([
      403,
      forbidden("Forbidden: this request needs the scopes mcp mcp:admin", "mcp mcp:admin"),
    ]);
  });

  it("names the scopes of a prompt, a templated resource, a completion and a listen's resources", async () => {
    const handler = protectedHandler();
    const cases: [unknown, string][] = [
      [{ jsonrpc: "2.0", id: 3, method: "prompts/get", params: { name: "audit" } }, "mcp audit"],
      [{ jsonrpc: "2.0", id: 4, method: "resources/read", params: { uri: "files://a" } }, "mcp files:read"],
      [
        {
          jsonrpc: "2.0",
          id: 5,
          method: "completion/complete",
          params: {
            ref: { type: "ref/resource", uri: "files://{name}" },
            argument: { name: "name", value: "" },
          },
        },
        "mcp files:read",
      ],
      [
        {
          jsonrpc: "2.0",
          id: 6,
          method: "subscriptions/listen",
          params: { notifications: { resourceSubscriptions: ["files://a", "vault://key"] }, _meta: meta() },
        },
        "mcp files:read vault",
      ],
    ];
    for (const [body, scope] of cases) {
      const res = await send(handler, body, as("none"));
      expect([res.status, res.challenge?.endsWith(`scope="${scope}"`)]).toEqual([403, true]);
    }
  });

  it("keeps what the token holds of scopesSupported, consistently with the challenge of a call", async () => {
    const res = await send(protectedHandler(), call(7, "admin_op"), as("other"));
    expect(res.challenge).toBe(
      forbidden("Forbidden: this request needs the scopes mcp mcp:admin", "files:read mcp mcp:admin"),
    );
    const held = await send(protectedHandler(), call(8, "admin_op"), as("base"));
    expect(held.challenge).toBe(
      forbidden("Forbidden: tool admin_op needs the scope mcp:admin", "mcp mcp:admin"),
    );
  });

  it("names every resource of a listen at once when the server's scopes are held", async () => {
    const body = {
      jsonrpc: "2.0",
      id: 9,
      method: "subscriptions/listen",
      params: { notifications: { resourceSubscriptions: ["files://a", "vault://key"] }, _meta: meta() },
    };
    const res = await send(protectedHandler(), body, {
      authorization: "Bearer base",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "subscriptions/listen",
    });
    expect([res.status, res.challenge, res.body.error]).toEqual([
      403,
      forbidden(
        "Forbidden: a listen of files://a, vault://key needs the scopes files:read vault",
        "mcp files:read vault",
      ),
      {
        code: -32600,
        message: "Forbidden: a listen of files://a, vault://key needs the scopes files:read vault",
        data: { error: "insufficient_scope", scopes: ["files:read", "vault"] },
      },
    ]);
  });

  it("names the server's scopes alone for a request that names no scoped primitive, or an unknown one", async () => {
    const handler = protectedHandler();
    for (const body of [initBody(), call(10, "whoami"), call(11, "nope"), "not json"]) {
      const res = await send(handler, body, as("none"));
      expect([res.status, res.challenge]).toEqual([
        403,
        forbidden("Forbidden: this server needs the scope mcp", "mcp"),
      ]);
    }
  });

  it("leaves the 401 without a token as it was: the server's scopes to start with", async () => {
    const res = await send(protectedHandler(), call(12, "admin_op"), {
      "mcp-protocol-version": "2025-11-25",
    });
    expect([res.status, res.challenge]).toEqual([401, `Bearer ${PRM}, scope="mcp"`]);
  });

  it("asks a router of one's own for the operation's scopes through the server option", async () => {
    const server = mcpServer();
    const parts = (withServer: boolean) => {
      const rs = createResourceServer({
        resource: RESOURCE,
        authorizationServers: ["https://as.test"],
        requiredScopes: ["mcp"],
        verifyToken: (token) => TOKENS[token],
        ...(withServer ? { server } : {}),
      });
      const inner = createHttpHandler(server, {
        sessions: false,
        authenticate: rs.authenticate,
        errorStatus: rs.errorStatus,
      });
      handlers.push(inner);
      return rs.wrap(inner);
    };
    expect((await send(parts(true), call(13, "admin_op"), as("none"))).challenge).toBe(
      forbidden("Forbidden: this request needs the scopes mcp mcp:admin", "mcp mcp:admin"),
    );
    expect((await send(parts(false), call(14, "admin_op"), as("none"))).challenge).toBe(
      forbidden("Forbidden: this server needs the scope mcp", "mcp"),
    );
  });
});

/** A body that sends `bytes` of a tools/call's start and then stalls (no end); `cancelled` tells whether its reader let go. */
function stalling(bytes: number) {
  const state = { cancelled: false };
  const start =
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_op","arguments":{"pad":"';
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(start.padEnd(bytes, "x")));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe("the body a refusal reads to find its scopes is bounded", () => {
  const stalled = (stream: ReadableStream<Uint8Array>, headers: object = {}) =>
    new Request(URL_, {
      method: "POST",
      headers: { ...POST_HEADERS, ...as("none"), ...headers },
      body: stream,
      duplex: "half",
    } as RequestInit);

  it("a stalled body past 64 KiB is answered with the server's scopes, its stream cancelled", async () => {
    const body = stalling(96 * 1024);
    const res = await protectedHandler()(stalled(body.stream));
    expect([res.status, res.headers.get("www-authenticate")]).toEqual([
      403,
      forbidden("Forbidden: this server needs the scope mcp", "mcp"),
    ]);
    expect(body.state.cancelled).toBe(true);
  });

  it("a declared 4 MiB body is answered unread, its stream cancelled", async () => {
    const body = stalling(1024);
    const res = await protectedHandler()(stalled(body.stream, { "content-length": String(4 * 1024 * 1024) }));
    expect(res.status).toBe(403);
    expect(body.state.cancelled).toBe(true);
  });
});
