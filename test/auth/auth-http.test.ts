// The resource server on the wire: metadata at both well-known paths, 400/401/403/503 challenges, ctx.auth.
import { afterEach, describe, expect, it } from "vitest";
import {
  createProtectedHandler,
  createResourceServer,
  InvalidTokenError,
  type ProtectedHandlerOptions,
} from "../../src/auth/index.js";
import type { AuthInfo } from "../../src/connection.js";
import { createHttpHandler } from "../../src/http/index.js";
import { McpError, McpServer } from "../../src/index.js";
import { call, initBody, POST_HEADERS, URL_ } from "../http-helpers.js";
import { meta } from "../modern-helpers.js";

const RESOURCE = "http://127.0.0.1:3000/mcp";
const PRM_URL = "http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp";
const TOKENS: { [token: string]: AuthInfo } = {
  "alice-token": { token: "alice-token", clientId: "app", scopes: ["mcp", "files:read"], subject: "alice" },
  "bare-token": { token: "bare-token", clientId: "app", scopes: [], subject: "bob" },
};

const handlers: { close(): void }[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

function protectedServer(options: Partial<ProtectedHandlerOptions> = {}) {
  const server = new McpServer({ name: "auth-test", version: "1.0.0", onError: () => {} });
  server.tool("whoami", {
    run: (_a, ctx) => JSON.stringify({ subject: ctx.auth?.subject, scopes: ctx.auth?.scopes }),
  });
  server.tool("write_note", { scopes: ["notes:write"], run: () => "written" });
  const handler = createProtectedHandler(server, {
    resource: RESOURCE,
    authorizationServers: ["https://auth.example.test"],
    verifyToken: (token) => {
      if (token === "broken-db") throw new Error("db down");
      if (token === "revoked") throw new InvalidTokenError("the access token was revoked");
      return TOKENS[token];
    },
    sessions: false,
    ...options,
  });
  handlers.push(handler);
  return handler;
}

const send = (handler: (r: Request) => Promise<Response>, body: unknown, headers: object = {}, url = URL_) =>
  handler(
    new Request(url, {
      method: "POST",
      headers: { ...POST_HEADERS, ...headers },
      body: JSON.stringify(body),
    }),
  );

async function wire(res: Response) {
  return { status: res.status, challenge: res.headers.get("www-authenticate"), body: await res.json() };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("protected resource metadata", () => {
  it("is served at the path-inserted and the root well-known URLs, without offline_access", async () => {
    const handler = protectedServer({ scopesSupported: ["mcp", "files:read"] });
    for (const path of [
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource?x=1",
      "/mcp/../.well-known/oauth-protected-resource/mcp",
    ]) {
      const res = await handler(new Request(`http://127.0.0.1:3000${path}`));
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(await res.json()).toEqual({
        resource: RESOURCE,
        authorization_servers: ["https://auth.example.test"],
        bearer_methods_supported: ["header"],
        scopes_supported: ["mcp", "files:read"],
      });
    }
    expect(handler.resourceServer.metadataUrl).toBe(PRM_URL);
    const post = await handler(new Request(PRM_URL, { method: "POST" }));
    expect(post.status).toBe(405);
  });

  it("refuses offline_access, a fragment, or no authorization server at creation", () => {
    const ok = {
      resource: RESOURCE,
      authorizationServers: ["https://as.test"],
      verifyToken: () => undefined,
    };
    expect(() => createResourceServer({ ...ok, scopesSupported: ["mcp", "offline_access"] })).toThrow(
      "scopesSupported must not hold offline_access",
    );
    expect(() => createResourceServer({ ...ok, requiredScopes: ["offline_access"] })).toThrow(
      "requiredScopes must not hold offline_access",
    );
    expect(() => createResourceServer({ ...ok, resource: `${RESOURCE}#x` })).toThrow(
      "must not have a fragment",
    );
    expect(() => createResourceServer({ ...ok, authorizationServers: [] })).toThrow("at least one issuer");
  });

  it("adds metadata fields, but takes scopes_supported from its own option only", () => {
    const rs = createResourceServer({
      resource: RESOURCE,
      authorizationServers: ["https://as.test"],
      verifyToken: () => undefined,
      metadata: {
        resource_name: "Notes",
        resource: "https://evil.test",
        scopes_supported: ["offline_access"],
      },
    });
    expect(rs.metadata).toEqual({
      resource_name: "Notes",
      resource: RESOURCE,
      authorization_servers: ["https://as.test"],
      bearer_methods_supported: ["header"],
    });
  });

  it("canonicalizes the resource: lower-case scheme and host, no slash at the root", () => {
    const rs = createResourceServer({
      resource: "HTTPS://MCP.Example.TEST",
      authorizationServers: ["https://as.test"],
      verifyToken: () => undefined,
    });
    expect([rs.resource, rs.metadataUrl]).toEqual([
      "https://mcp.example.test",
      "https://mcp.example.test/.well-known/oauth-protected-resource",
    ]);
  });
});

describe("bearer tokens", () => {
  it("answers 401 with resource_metadata and scope without a token", async () => {
    const handler = protectedServer({ requiredScopes: ["mcp"] });
    expect(await wire(await send(handler, initBody()))).toEqual({
      status: 401,
      challenge: `Bearer resource_metadata="${PRM_URL}", scope="mcp"`,
      body: { jsonrpc: "2.0", error: { code: -32000, message: "Unauthorized: a bearer token is required" } },
    });
    // another scheme is no bearer token either
    const basic = await send(handler, initBody(), { authorization: "Basic YTpi" });
    expect([basic.status, basic.headers.get("www-authenticate")]).toEqual([
      401,
      `Bearer resource_metadata="${PRM_URL}", scope="mcp"`,
    ]);
  });

  it("answers 401 invalid_token for an unknown or refused token", async () => {
    const handler = protectedServer();
    expect(await wire(await send(handler, initBody(), bearer("nope")))).toEqual({
      status: 401,
      challenge: `Bearer error="invalid_token", error_description="Unauthorized: the access token is not valid", resource_metadata="${PRM_URL}"`,
      body: {
        jsonrpc: "2.0",
        error: { code: -32000, message: "Unauthorized: the access token is not valid" },
      },
    });
    const revoked = await wire(await send(handler, initBody(), bearer("revoked")));
    // the token is never echoed back
    const secret = await send(handler, initBody(), bearer("sk-secret-123"));
    expect([...secret.headers.values(), await secret.text()].join(" ")).not.toContain("sk-secret");
    expect(revoked.challenge).toBe(
      `Bearer error="invalid_token", error_description="Unauthorized: the access token was revoked", resource_metadata="${PRM_URL}"`,
    );
  });

  it("lets a browser client read the challenge (CORS exposes WWW-Authenticate)", async () => {
    const handler = protectedServer({ allowedOrigins: ["https://app.example.test"] });
    const res = await send(handler, initBody(), { origin: "https://app.example.test" });
    expect([
      res.status,
      res.headers.get("access-control-allow-origin"),
      res.headers.get("access-control-expose-headers"),
    ]).toEqual([
      401,
      "https://app.example.test",
      "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after",
    ]);
  });

  it("answers 400 for a token in the URL or a malformed header", async () => {
    const handler = protectedServer();
    for (const query of ["?access_token=alice-token", "?x=1&access%5Ftoken=alice-token"]) {
      const inUrl = await wire(await send(handler, initBody(), bearer("alice-token"), `${URL_}${query}`));
      expect([inUrl.status, inUrl.body.error.message]).toEqual([
        400,
        "Bad Request: send the token in the Authorization header, never in the URL",
      ]);
    }
    for (const authorization of [
      "Bearer",
      "Bearer a b",
      "Bearer alice-token, Bearer bare-token",
      "Bearer {x}",
    ]) {
      const res = await wire(await send(handler, initBody(), { authorization }));
      expect([res.status, res.challenge?.startsWith('Bearer error="invalid_request"')]).toEqual([400, true]);
    }
  });

  it("answers 403 insufficient_scope when the server's required scopes are missing", async () => {
    const handler = protectedServer({ requiredScopes: ["mcp"], scopesSupported: ["mcp", "files:read"] });
    expect(await wire(await send(handler, initBody(), bearer("bare-token")))).toEqual({
      status: 403,
      challenge: `Bearer error="insufficient_scope", error_description="Forbidden: this server needs the scope mcp", resource_metadata="${PRM_URL}", scope="mcp"`,
      body: {
        jsonrpc: "2.0",
        error: { code: -32000, message: "Forbidden: this server needs the scope mcp" },
      },
    });
  });

  it("answers 503 when the verifier fails for a reason of its own, and tells onError", async () => {
    const seen: unknown[] = [];
    const handler = protectedServer({ onError: (e) => seen.push((e as Error).message) });
    const res = await wire(await send(handler, initBody(), bearer("broken-db")));
    expect([res.status, res.challenge, res.body.error.message, seen]).toEqual([
      503,
      null,
      "Service Unavailable: the access token could not be checked",
      ["db down"],
    ]);
  });

  it("lets a valid token through and hands its AuthInfo to ctx.auth", async () => {
    const handler = protectedServer({ requiredScopes: ["mcp"] });
    const res = await send(handler, call(1, "whoami"), {
      ...bearer("alice-token"),
      "mcp-protocol-version": "2025-11-25",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: '{"subject":"alice","scopes":["mcp","files:read"]}' }] },
    });
  });

  it("checks every request of a session, not only the first", async () => {
    const handler = protectedServer({ sessions: true });
    const init = await send(handler, initBody(), bearer("alice-token"));
    const sid = init.headers.get("mcp-session-id")!;
    expect(init.status).toBe(200);
    const later = await send(handler, call(2, "whoami"), { "mcp-session-id": sid });
    expect(later.status).toBe(401);
    const get = await handler(
      new Request(URL_, {
        headers: { host: "127.0.0.1:3000", accept: "text/event-stream", "mcp-session-id": sid },
      }),
    );
    expect(get.status).toBe(401);
    const del = await handler(
      new Request(URL_, { method: "DELETE", headers: { host: "127.0.0.1:3000", "mcp-session-id": sid } }),
    );
    expect(del.status).toBe(401);
  });

  it("answers a call without the tool's scopes with one 403 challenge for all it needs", async () => {
    const handler = protectedServer({
      requiredScopes: ["mcp"],
      scopesSupported: ["mcp", "files:read", "notes:write"],
    });
    const headers = { ...bearer("alice-token"), "mcp-protocol-version": "2025-11-25" };
    expect(await wire(await send(handler, call(3, "write_note"), headers))).toEqual({
      status: 403,
      challenge: `Bearer error="insufficient_scope", error_description="Forbidden: tool write_note needs the scope notes:write", resource_metadata="${PRM_URL}", scope="mcp files:read notes:write"`,
      body: {
        jsonrpc: "2.0",
        id: 3,
        error: {
          code: -32600,
          message: "Forbidden: tool write_note needs the scope notes:write",
          data: { error: "insufficient_scope", scopes: ["notes:write"] },
        },
      },
    });
    const list = await (await send(handler, { jsonrpc: "2.0", id: 4, method: "tools/list" }, headers)).json();
    expect(list.result.tools.map((t: { name: string }) => t.name)).toEqual(["whoami"]);
  });

  it("leaves a tool's own error that merely mentions insufficient_scope alone", async () => {
    const handler = protectedServer();
    const res = await send(
      handler,
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "insufficient_scope" } },
      {
        ...bearer("alice-token"),
        "mcp-protocol-version": "2025-11-25",
      },
    );
    expect([res.status, (await res.json()).error.message]).toEqual([200, "Unknown tool: insufficient_scope"]);
  });

  it("steps up a 2026-07-28 request too: 403 with the challenge, not the era's 400", async () => {
    const handler = protectedServer({ requiredScopes: ["mcp"], scopesSupported: ["mcp", "notes:write"] });
    const modern = {
      ...bearer("alice-token"),
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
    };
    const body = { ...call(6, "write_note"), params: { name: "write_note", _meta: meta() } };
    const res = await send(handler, body, { ...modern, "mcp-name": "write_note" });
    expect(await wire(res)).toEqual({
      status: 403,
      challenge: `Bearer error="insufficient_scope", error_description="Forbidden: tool write_note needs the scope notes:write", resource_metadata="${PRM_URL}", scope="mcp notes:write"`,
      body: {
        jsonrpc: "2.0",
        id: 6,
        error: {
          code: -32600,
          message: "Forbidden: tool write_note needs the scope notes:write",
          data: { error: "insufficient_scope", scopes: ["notes:write"] },
        },
      },
    });
  });

  it("leaves a batch at 200: each refusal keeps its data for the client, no challenge", async () => {
    const handler = protectedServer({ sessions: true, maxBatchSize: 10 });
    const headers = { ...bearer("alice-token"), "mcp-protocol-version": "2025-03-26" };
    const init = await send(
      handler,
      { ...initBody(), params: { ...initBody().params, protocolVersion: "2025-03-26" } },
      headers,
    );
    const sid = init.headers.get("mcp-session-id")!;
    const res = await send(handler, [call(7, "write_note"), call(8, "whoami")], {
      ...headers,
      "mcp-session-id": sid,
    });
    const [refused, served] = await res.json();
    expect([res.status, res.headers.get("www-authenticate"), refused.error.data, "result" in served]).toEqual(
      [200, null, { error: "insufficient_scope", scopes: ["notes:write"] }, true],
    );
  });

  it("gives the parts to a router of one's own: authenticate, errorStatus and wrap", async () => {
    const rs = createResourceServer({
      resource: RESOURCE,
      authorizationServers: ["https://as.test"],
      verifyToken: (token) => TOKENS[token],
    });
    const server = new McpServer({ name: "parts", version: "1.0.0", onError: () => {} });
    server.tool("write_note", { scopes: ["notes:write"], run: () => "written" });
    server.tool("mine", {
      run: () => {
        // a tool's own error with a malformed refusal is an ordinary error
        throw new McpError(-32600, "no", { error: "insufficient_scope", scopes: "notes:write" });
      },
    });
    const inner = createHttpHandler(server, {
      sessions: false,
      authenticate: rs.authenticate,
      errorStatus: rs.errorStatus,
    });
    handlers.push(inner);
    const handler = rs.wrap(inner);
    const headers = { ...bearer("alice-token"), "mcp-protocol-version": "2025-11-25" };
    const res = await send(handler, call(9, "write_note"), headers);
    expect([res.status, res.headers.get("www-authenticate")]).toEqual([
      403,
      `Bearer error="insufficient_scope", error_description="Forbidden: tool write_note needs the scope notes:write", resource_metadata="${PRM_URL}", scope="mcp files:read notes:write"`,
    ]);
    const own = await send(handler, call(10, "mine"), headers);
    expect([own.status, own.headers.get("www-authenticate"), (await own.json()).error.message]).toEqual([
      200,
      null,
      "no",
    ]);
  });
});
