// Interop: the official SDK client's OAuth flow (discovery, registration, authorization code + PKCE)
// against a small authorization server written here, reaching a tool of a protected picomcp server.
import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { afterEach, describe, expect, it } from "vitest";
import { createProtectedHandler, jwtVerifier, type ProtectedHandler } from "../../src/auth/index.js";
import { toNodeListener } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { makeKey, sign, type TestKey, useHttpServers } from "../auth-helpers.js";

const listen = useHttpServers();
const handlers: ProtectedHandler[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string;
  resource: string;
}

/** An authorization server that approves every request at once: metadata, DCR, authorize, token, JWKS. */
async function authorizationServer(key: TestKey) {
  const clients = new Map<string, string[]>();
  const codes = new Map<string, Grant>();
  const log = { authorized: [] as { scope: string; resource: string }[], tokenRequests: 0 };
  let issuer = "";
  const send = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const form = async (req: IncomingMessage) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    return text;
  };
  const { origin } = await listen(async (req, res) => {
    const url = new URL(req.url ?? "/", issuer);
    if (url.pathname === "/.well-known/oauth-authorization-server") {
      return send(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
      });
    }
    if (url.pathname === "/jwks") return send(res, 200, { keys: [key.jwk] });
    if (url.pathname === "/register" && req.method === "POST") {
      const meta = JSON.parse(await form(req)) as OAuthClientMetadata;
      const client_id = randomUUID();
      clients.set(client_id, meta.redirect_uris.map(String));
      return send(res, 201, { ...meta, client_id, token_endpoint_auth_method: "none" });
    }
    if (url.pathname === "/authorize") {
      const q = url.searchParams;
      const redirectUri = q.get("redirect_uri") ?? "";
      const clientId = q.get("client_id") ?? "";
      if (!clients.get(clientId)?.includes(redirectUri) || q.get("code_challenge_method") !== "S256")
        return send(res, 400, { error: "invalid_request" });
      const code = randomUUID();
      const grant = {
        clientId,
        redirectUri,
        challenge: q.get("code_challenge") ?? "",
        scope: q.get("scope") ?? "",
        resource: q.get("resource") ?? "",
      };
      codes.set(code, grant);
      log.authorized.push({ scope: grant.scope, resource: grant.resource });
      const back = new URL(redirectUri);
      back.searchParams.set("code", code);
      back.searchParams.set("state", q.get("state") ?? "");
      return res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === "/token" && req.method === "POST") {
      log.tokenRequests++;
      const p = new URLSearchParams(await form(req));
      const grant = codes.get(p.get("code") ?? "");
      codes.delete(p.get("code") ?? "");
      const verifier = p.get("code_verifier") ?? "";
      const pkce = createHash("sha256").update(verifier).digest("base64url");
      if (
        !grant ||
        grant.clientId !== p.get("client_id") ||
        grant.redirectUri !== p.get("redirect_uri") ||
        grant.challenge !== pkce ||
        (p.get("resource") ?? grant.resource) !== grant.resource
      )
        return send(res, 400, { error: "invalid_grant" });
      const access_token = await sign(key, {
        iss: issuer,
        aud: grant.resource,
        sub: "alice",
        client_id: grant.clientId,
        scope: grant.scope,
      });
      return send(res, 200, { access_token, token_type: "Bearer", expires_in: 3600, scope: grant.scope });
    }
    send(res, 404, { error: "not_found" });
  });
  issuer = origin;
  return { issuer, log };
}

/** A client that follows the redirect to the authorization endpoint itself and keeps the code. */
class AutoApproveProvider implements OAuthClientProvider {
  code: string | undefined;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = "";
  readonly redirectUrl = "http://127.0.0.1:1/callback";
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "auth-sdk-test",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  async redirectToAuthorization(url: URL) {
    const res = await fetch(url, { redirect: "manual" });
    this.code = new URL(res.headers.get("location")!).searchParams.get("code") ?? undefined;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}

async function protectedMcp(issuer: string) {
  const server = new McpServer({ name: "protected", version: "1.0.0", onError: () => {} });
  server.tool("whoami", {
    description: "Who is calling",
    run: (_a, ctx) => `${ctx.auth?.subject} via ${ctx.auth?.clientId} with ${ctx.auth?.scopes?.join(" ")}`,
  });
  server.tool("write_note", {
    scopes: ["notes:write"],
    run: (_a, ctx) => `written with ${ctx.auth?.scopes?.join(" ")}`,
  });
  let handler: ProtectedHandler | undefined;
  const { origin } = await listen((req, res) => (handler ? toNodeListener(handler)(req, res) : res.end()));
  const resource = `${origin}/mcp`;
  handler = createProtectedHandler(server, {
    resource,
    authorizationServers: [issuer],
    requiredScopes: ["mcp"],
    scopesSupported: ["mcp", "notes:write"],
    verifyToken: jwtVerifier({ issuer, audience: resource, jwks: `${issuer}/jwks` }),
  });
  handlers.push(handler);
  return { server, resource };
}

/** Connects through the OAuth flow: the first attempt is sent to authorize, the second gets in. */
async function connectWithOAuth(resource: string, provider: AutoApproveProvider) {
  const first = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider });
  await expect(new Client({ name: "t", version: "1" }).connect(first)).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  await first.finishAuth(provider.code!);
  const client = new Client({ name: "t", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider }));
  return client;
}

describe("the SDK client's OAuth flow", () => {
  it("discovers the authorization server, registers, authorizes with PKCE and reaches a tool", async () => {
    const key = await makeKey("ES256", "as-key");
    const as = await authorizationServer(key);
    const { resource } = await protectedMcp(as.issuer);
    const provider = new AutoApproveProvider();
    const client = await connectWithOAuth(resource, provider);
    const result = await client.callTool({ name: "whoami", arguments: {} });
    const clientId = (provider.clientInformation() as { client_id: string }).client_id;
    expect(result).toEqual({ content: [{ type: "text", text: `alice via ${clientId} with mcp` }] });
    // the challenge's scope was asked for, for this server's canonical URI
    expect(as.log.authorized).toEqual([{ scope: "mcp", resource }]);
    await client.close();
  });

  it("steps up on a 403 insufficient_scope: it asks for the tool's scope too, and the call goes through", async () => {
    const key = await makeKey("RS256", "as-key");
    const as = await authorizationServer(key);
    const { resource } = await protectedMcp(as.issuer);
    const provider = new AutoApproveProvider();
    const client = await connectWithOAuth(resource, provider);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(["whoami"]);
    await expect(client.callTool({ name: "write_note", arguments: {} })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(as.log.authorized.map((a) => a.scope)).toEqual(["mcp", "mcp notes:write"]);
    const transport = client.transport as StreamableHTTPClientTransport;
    await transport.finishAuth(provider.code!);
    expect(await client.callTool({ name: "write_note", arguments: {} })).toEqual({
      content: [{ type: "text", text: "written with mcp notes:write" }],
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["whoami", "write_note"]);
    await client.close();
  });
});
