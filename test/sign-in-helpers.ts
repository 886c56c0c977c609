// Helpers of the sign-in tests: picomcp's authorization server and resource server on one handler on
// 127.0.0.1 with an `authenticate` hook that knows a session cookie, a Client ID Metadata Document
// served over https on 127.0.0.1, and an OAuth client provider (the shape both SDK clients and
// @ai-sdk/mcp take) whose "browser" follows the authorization URL through the consent page with
// fetch, or with headless chromium.
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import type { BrowserContext } from "playwright-core";
import { afterEach } from "vitest";
import { followAuthorization } from "../scripts/conformance/consent.js";
import {
  type AuthorizationServer,
  type AuthorizationServerOptions,
  createAuthorizationServer,
  createProtectedHandler,
  type ProtectedHandler,
} from "../src/auth/index.js";
import type { Identity } from "../src/auth/store.js";
import { toNodeListener } from "../src/http/node.js";
import { McpServer } from "../src/index.js";
import { boundFetch } from "./crowd-helpers.js";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
/** A self-signed certificate for 127.0.0.1 (test/fixtures/loopback-tls.*): what the CIMD document is served with. */
export const TLS = { cert: fixture("loopback-tls.crt"), key: fixture("loopback-tls.key") };

/** The redirect URI of every test client: a loopback one, never fetched (the redirect to it is caught). */
export const REDIRECT_URI = "http://127.0.0.1:33418/callback";

/** The people the `authenticate` hook knows, by their session cookie's value. */
export const PEOPLE: Record<string, Identity> = {
  "alice-session": { subject: "alice", claims: { name: "Alice Liddell", email: "alice@example.com" } },
  "bob-session": { subject: "bob", claims: { name: "Bob" } },
};

/** The cookie a signed-in person's browser carries. */
export const SESSION_COOKIE = "session";

/** What the tool `whoami` returns: what it read from `ctx.auth`. */
export interface WhoAmI {
  subject: string | undefined;
  clientId: string | undefined;
  scopes: string[] | undefined;
  issuer: string | undefined;
  name: unknown;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function nodeServerClosed(server: ReturnType<typeof createHttpServer>): () => Promise<void> {
  return () => {
    server.closeAllConnections();
    return new Promise((r) => server.close(() => r()));
  };
}

/** A `fetch` over node:https that trusts the test certificate (for the authorization server's CIMD fetch). */
export function tlsFetch(): (input: URL, init: RequestInit) => Promise<Response> {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((v, k) => {
        headers[k] = v;
      });
      const req = httpsRequest(
        input,
        { method: init.method ?? "GET", headers, ca: TLS.cert, agent: false },
        (res) => {
          const out = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            out.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          resolve(
            new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, {
              status: res.statusCode ?? 0,
              headers: out,
            }),
          );
        },
      );
      req.on("error", reject);
      init.signal?.addEventListener("abort", () => req.destroy(new Error("aborted")));
      req.end();
    });
}

/** A Client ID Metadata Document served over https on 127.0.0.1: its URL (the client_id) and how often it was fetched. */
export async function clientMetadataDocument(name: string, redirectUris: string[] = [REDIRECT_URI]) {
  const state = { url: "", fetches: 0 };
  const server = createHttpsServer(TLS, (req, res) => {
    if (req.url !== "/oauth/client.json") return res.writeHead(404).end();
    state.fetches++;
    res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=600" });
    res.end(
      JSON.stringify({
        client_id: state.url,
        client_name: name,
        client_uri: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        redirect_uris: redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(nodeServerClosed(server as unknown as ReturnType<typeof createHttpServer>));
  state.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/client.json`;
  return state;
}

/** The options of {@link signInServer} beyond the defaults of the tests. */
export type SignInServerOptions = Partial<
  Omit<AuthorizationServerOptions, "issuer" | "resources" | "authenticate" | "signIn">
>;

/**
 * An MCP server with the tool `whoami`, served with its authorization server by one
 * `createProtectedHandler` on 127.0.0.1: issuer `http://127.0.0.1:<port>`, resource `<issuer>/mcp`,
 * every call needs `notes:read`. The `authenticate` hook signs in whoever carries a known session
 * cookie, and counts its calls.
 */
export async function signInServer(options: SignInServerOptions = {}) {
  const server = new McpServer({ name: "sign-in", version: "1.0.0", onError: () => {} });
  server.tool("whoami", {
    description: "Who is calling, as ctx.auth says",
    run: (_args, ctx) =>
      JSON.stringify({
        subject: ctx.auth?.subject,
        clientId: ctx.auth?.clientId,
        scopes: ctx.auth?.scopes,
        issuer: ctx.auth?.issuer,
        name: ctx.auth?.extra?.name,
      } satisfies WhoAmI),
  });
  server.tool("write_note", {
    scopes: ["notes:write"],
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: ({ text }: { text: string }, ctx) => `${ctx.auth?.subject} wrote ${text}`,
  });
  let handler: ProtectedHandler | undefined;
  const http = createHttpServer((req: IncomingMessage, res: ServerResponse) =>
    handler ? toNodeListener(handler)(req, res) : res.writeHead(503).end(),
  );
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const resource = `${issuer}/mcp`;
  const hook = { calls: 0, refused: 0 };
  const as: AuthorizationServer = createAuthorizationServer({
    issuer,
    resources: [resource],
    scopes: ["notes:read", "notes:write"],
    clientMetadataDocuments: { allowLoopback: true, fetch: tlsFetch() },
    authenticate: (request) => {
      hook.calls++;
      const cookie = request.headers.get("cookie") ?? "";
      const session = /(?:^|;\s*)session=([^;]*)/.exec(cookie)?.[1];
      const who = session ? PEOPLE[session] : undefined;
      if (!who) hook.refused++;
      return who;
    },
    ...options,
  });
  handler = createProtectedHandler(server, {
    resource,
    authorizationServer: as,
    requiredScopes: ["notes:read"],
    scopesSupported: ["notes:read", "notes:write"],
  });
  cleanups.push(
    nodeServerClosed(http),
    () => handler?.close(),
    () => as.close(),
  );
  return { issuer, resource, as, handler, hook, server };
}

/** The minimum a token set has, in every client library's shape. */
export interface TokenSet {
  access_token: string;
  refresh_token?: string | undefined;
  token_type: string;
  expires_in?: number | undefined;
  scope?: string | undefined;
}

/** A browser for the provider: takes the authorization URL, returns the URL the server redirected back to. */
export type Browser = (authorizationUrl: URL) => Promise<URL>;

/** A browser without a browser: fetch from `address`, through the consent page, as the person whose session is `session`. */
export function fetchBrowser(
  address: string,
  session = "alice-session",
  decision: "approve" | "deny" = "approve",
  pages?: { url: string; status: number; html: string }[],
): Browser {
  const send = boundFetch(address);
  return (url) =>
    followAuthorization(url, {
      redirectUri: REDIRECT_URI,
      cookies: { [SESSION_COOKIE]: session },
      decision,
      fetch: (input, init) => send(input, init),
      ...(pages ? { pages } : {}),
    });
}

/**
 * Headless chromium as the browser: the session cookie set for the issuer, the authorization URL
 * opened, the consent page's Approve button clicked, and the navigation to the redirect URI caught
 * (and answered by the test, as a native client's loopback listener would).
 */
export function chromiumBrowser(context: BrowserContext, issuer: string, session = "alice-session"): Browser {
  return async (url) => {
    await context.addCookies([{ name: SESSION_COOKIE, value: session, url: issuer }]);
    const page = await context.newPage();
    try {
      let resolveBack: (u: URL) => void = () => {};
      const back = new Promise<URL>((r) => {
        resolveBack = r;
      });
      await page.route(`${REDIRECT_URI}**`, (route) => {
        resolveBack(new URL(route.request().url()));
        return route.fulfill({ status: 200, contentType: "text/plain", body: "signed in" });
      });
      // a route is not asked for the target of a redirect (the consent POST's 303), and some builds of
      // chromium then try to load it: the request itself is what came back, whether or not it loads
      page.on("request", (request) => {
        if (request.url().startsWith(REDIRECT_URI)) resolveBack(new URL(request.url()));
      });
      await page.goto(url.href);
      await page.getByRole("button", { name: "Approve" }).click();
      return await back;
    } finally {
      await page.close();
    }
  };
}

/**
 * An OAuth client provider in the shape of the SDK clients' `OAuthClientProvider` (v1 and v2) and of
 * @ai-sdk/mcp's: it keeps what the client library saves, and on `redirectToAuthorization` has its
 * browser take the person through the consent page, keeping the URL it comes back to
 * (`callback`). `present = false` is a person who does not come back: the URL is only recorded.
 */
export class SignInProvider<
  T extends TokenSet = TokenSet,
  C extends { client_id: string } = { client_id: string },
> {
  /** Every authorization URL the client library opened. */
  readonly authorizations: URL[] = [];
  /** Every token set the client library saved, in order. */
  readonly saved: T[] = [];
  /** The last URL the browser came back to. */
  callback: URL | undefined;
  /** Whether the person is at the browser to approve. */
  present = true;
  /** What `invalidateCredentials` was told, in order. */
  readonly invalidated: string[] = [];
  #tokensValid = false;
  #discovery: unknown;
  #client: C | undefined;
  #verifier = "";
  #state: string | undefined;
  /** The client's metadata document URL (its client_id where the server takes CIMD); absent: it registers. */
  readonly clientMetadataUrl?: string;
  readonly #browser: Browser;
  readonly #name: string;

  constructor(browser: Browser, options: { clientMetadataUrl?: string; clientName?: string } = {}) {
    this.#browser = browser;
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
    this.#name = options.clientName ?? "sign-in test client";
  }

  get redirectUrl(): string {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: this.#name,
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state(): string {
    this.#state = crypto.randomUUID();
    return this.#state;
  }
  storedState(): string | undefined {
    return this.#state;
  }
  clientInformation(): C | undefined {
    return this.#client;
  }
  saveClientInformation(info: C): void {
    this.#client = info;
  }
  tokens(): T | undefined {
    return this.#tokensValid ? this.saved.at(-1) : undefined;
  }
  saveTokens(tokens: T): void {
    this.saved.push(tokens);
    this.#tokensValid = true;
  }
  /** What the client library found no longer valid (a refresh token the server refused): forgotten, as an application would. */
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    this.invalidated.push(scope);
    if (scope === "all" || scope === "tokens") this.#tokensValid = false;
    if (scope === "all" || scope === "client") this.#client = undefined;
    if (scope === "all" || scope === "verifier") this.#verifier = "";
    if (scope === "all" || scope === "discovery") this.#discovery = undefined;
  }
  /** The SDK v2 keeps which authorization server it sent the person to, to check the callback against it. */
  saveDiscoveryState(state: unknown): void {
    this.#discovery = state;
  }
  discoveryState(): never {
    return this.#discovery as never;
  }
  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizations.push(url);
    if (!this.present) return;
    const back = await this.#browser(url);
    // the client library does not check `state`: the application does, before finishAuth
    if (back.searchParams.get("state") !== this.#state)
      throw new Error(`the authorization response's state ${back.searchParams.get("state")} is not ours`);
    this.callback = back;
  }
  /** The `code` of the last authorization response (throws when it carried an error instead). */
  code(): string {
    const error = this.callback?.searchParams.get("error");
    if (error)
      throw new Error(
        `the authorization server answered ${error}: ${this.callback?.searchParams.get("error_description")}`,
      );
    const code = this.callback?.searchParams.get("code");
    if (!code) throw new Error("no authorization response came back");
    return code;
  }
}

/** The payload of a JWT, unverified (to read the grant id of an access token in a test). */
export function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8"));
}

/** A raw MCP ping with `token`: the HTTP status and the WWW-Authenticate header. */
export async function rawPing(resource: string, token: string) {
  const res = await fetch(resource, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await res.body?.cancel();
  return { status: res.status, challenge: res.headers.get("www-authenticate") };
}

/** A raw refresh-token request at the token endpoint: status and JSON body. */
export async function rawRefresh(issuer: string, clientId: string, refreshToken: string) {
  const res = await fetch(`${issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: clientId,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
