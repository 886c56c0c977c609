// Helpers of the authorization-server tests: picomcp's authorization server and a protected MCP server
// served by one handler on 127.0.0.1, and a raw OAuth client (PKCE, DCR, the consent form, /token).
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import {
  type AuthorizationServer,
  type AuthorizationServerOptions,
  createAuthorizationServer,
  createProtectedHandler,
  type ProtectedHandler,
  type ProtectedHandlerOptions,
  upstreamToken,
} from "../../src/auth/index.js";
import { toNodeListener } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";

export const REDIRECT = "http://127.0.0.1:9/callback";

export const b64url = (b: Buffer) => b.toString("base64url");

/** A PKCE pair. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = b64url(randomBytes(32));
  return { verifier, challenge: b64url(createHash("sha256").update(verifier).digest()) };
}

export interface Served {
  origin: string;
  resource: string;
  as: AuthorizationServer;
  handler: ProtectedHandler;
  server: Server;
}

/** Servers made by one test file, closed after each test. */
export function useAuthServers() {
  const made: Served[] = [];
  afterEach(async () => {
    for (const s of made.splice(0)) {
      s.handler.close();
      await s.as.close();
      s.server.closeAllConnections();
      await new Promise((r) => s.server.close(r));
    }
  });
  /** An MCP server with a `whoami` tool, protected and signing in on the same handler at 127.0.0.1; `otherPaths`: more resources of the authorization server on this origin. */
  return async (
    options: { [K in keyof AuthorizationServerOptions]?: AuthorizationServerOptions[K] | undefined } = {},
    handlerOptions: Partial<ProtectedHandlerOptions> = {},
    otherPaths: string[] = [],
  ): Promise<Served> => {
    let listener: Parameters<typeof createServer>[1] = (_req, res) => res.end();
    const server = createServer((req, res) => listener!(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const resource = `${origin}/mcp`;
    const mcp = new McpServer({ name: "notes", version: "1.0.0" });
    mcp.tool("whoami", {
      description: "Who the caller is",
      run: (_args, ctx) => JSON.stringify({ subject: ctx.auth?.subject, client: ctx.auth?.clientId }),
    });
    mcp.tool("upstream", {
      description: "The caller's upstream token",
      run: async (_args, ctx) => upstreamToken(ctx.auth),
    });
    const as = createAuthorizationServer({
      issuer: origin,
      resources: [resource, ...otherPaths.map((p) => `${origin}${p}`)],
      authenticate: () => ({ subject: "alice", claims: { name: "Alice" } }),
      ...options,
    } as AuthorizationServerOptions);
    const handler = createProtectedHandler(mcp, { resource, authorizationServer: as, ...handlerOptions });
    listener = toNodeListener(handler);
    const served = { origin, resource, as, handler, server };
    made.push(served);
    return served;
  };
}

/** Registers a public client by RFC 7591; its `client_id`. */
export async function registerClient(
  origin: string,
  extra: { [k: string]: unknown } = {},
  fetcher: typeof fetch = fetch,
): Promise<string> {
  const res = await fetcher(`${origin}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      client_name: "Test client",
      ...extra,
    }),
  });
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** The authorization URL of a request; `undefined` values leave a parameter out. */
export function authorizeUrl(origin: string, params: { [k: string]: string | undefined }): string {
  const url = new URL(`${origin}/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** The standard parameters for `clientId`, with `challenge`, overridden by `over`. */
export function standard(
  clientId: string,
  challenge: string,
  resource: string,
  over: { [k: string]: string | undefined } = {},
): { [k: string]: string | undefined } {
  return {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "st-123",
    resource,
    ...over,
  };
}

export interface ConsentForm {
  response: Response;
  html: string;
  csrf: string;
  cookie: string;
}

/** GETs the authorization URL: the consent page, its CSRF token and its cookie. */
export async function openConsent(url: string): Promise<ConsentForm> {
  const response = await fetch(url, { redirect: "manual" });
  const html = await response.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  const setCookie = response.headers.get("set-cookie");
  if (response.status !== 200 || !csrf || !setCookie)
    throw new Error(
      `no consent page: ${response.status} ${response.headers.get("location")} ${html.slice(0, 300)}`,
    );
  return { response, html, csrf, cookie: setCookie.split(";")[0]! };
}

/** POSTs the consent form as the page would (same origin, its cookie), with `over` changing what is sent. */
export function submitConsent(
  origin: string,
  form: ConsentForm,
  decision = "approve",
  over: { headers?: { [k: string]: string }; body?: string } = {},
): Promise<Response> {
  return fetch(`${origin}/consent`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin,
      "sec-fetch-site": "same-origin",
      cookie: form.cookie,
      ...over.headers,
    },
    body: over.body ?? new URLSearchParams({ csrf: form.csrf, decision }).toString(),
  });
}

/** The parameters of a redirect's `Location`. */
export function locationOf(res: Response): URL {
  const loc = res.headers.get("location");
  if (!loc) throw new Error(`no redirect: ${res.status}`);
  return new URL(loc);
}

/** Runs authorize → consent → code for a client; the code and the PKCE verifier. */
export async function getCode(
  s: Served,
  clientId: string,
  over: { [k: string]: string | undefined } = {},
): Promise<{ code: string; verifier: string; location: URL }> {
  const { verifier, challenge } = pkce();
  const form = await openConsent(authorizeUrl(s.origin, standard(clientId, challenge, s.resource, over)));
  const res = await submitConsent(s.origin, form);
  const location = locationOf(res);
  const code = location.searchParams.get("code");
  if (!code) throw new Error(`no code: ${location.href}`);
  return { code, verifier, location };
}

/** A form POST to the token endpoint: status, headers, JSON body. */
export async function tokenRequest(
  origin: string,
  form: { [k: string]: string | undefined },
  headers: { [k: string]: string } = {},
): Promise<{ status: number; headers: Headers; body: { [k: string]: unknown } }> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) if (v !== undefined) body.set(k, v);
  const res = await fetch(`${origin}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: body.toString(),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as { [k: string]: unknown } };
}

/** Redeems a code. */
export function redeem(
  s: Served,
  clientId: string,
  got: { code: string; verifier: string },
  over: { [k: string]: string | undefined } = {},
) {
  return tokenRequest(s.origin, {
    grant_type: "authorization_code",
    code: got.code,
    code_verifier: got.verifier,
    redirect_uri: REDIRECT,
    client_id: clientId,
    resource: s.resource,
    ...over,
  });
}

/** Signs in a new client all the way: its id and its tokens. */
export async function signedIn(s: Served): Promise<{ clientId: string; access: string; refresh: string }> {
  const clientId = await registerClient(s.origin);
  const got = await getCode(s, clientId);
  const { status, body } = await redeem(s, clientId, got);
  if (status !== 200) throw new Error(`token: ${status} ${JSON.stringify(body)}`);
  return { clientId, access: body.access_token as string, refresh: body.refresh_token as string };
}

/** Calls the `whoami` tool (or `tool`) over Streamable HTTP (one 2025-11-25 session) with `token`: the status of the first refusal, or the tool's answer. */
export async function whoami(
  s: Served,
  token: string,
  tool = "whoami",
): Promise<{ status: number; text?: string }> {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
  };
  const init = await fetch(`${s.origin}/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  if (init.status !== 200) return { status: init.status };
  await init.text();
  const sid = init.headers.get("mcp-session-id")!;
  const h2 = { ...headers, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
  await fetch(`${s.origin}/mcp`, {
    method: "POST",
    headers: h2,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  }).then((r) => r.text());
  const res = await fetch(`${s.origin}/mcp`, {
    method: "POST",
    headers: h2,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: tool, arguments: {} },
    }),
  });
  const raw = await res.text();
  if (res.status !== 200) return { status: res.status };
  const data = raw.includes("data:") ? raw.split("data:")[1]!.trim() : raw;
  return { status: 200, text: JSON.parse(data).result.content[0].text };
}
