// The whole federated sign-in, as an MCP client lives it: the official SDK client (v2) signs in to a
// protected picomcp server whose authorization server federates to a real OpenID provider (oidc-provider);
// chromium approves picomcp's consent page, then logs in and consents at the provider; a tool reads
// ctx.auth and acts upstream with upstreamToken(ctx.auth), refreshed once the upstream token has expired.
import { randomBytes } from "node:crypto";
import {
  Client,
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AuthorizationServer,
  createAuthorizationServer,
  createProtectedHandler,
  MemoryAuthStore,
  oidc,
  type ProtectedHandler,
  upstreamToken,
} from "../../src/auth/index.js";
import { toNodeListener } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { BROWSER_TIMEOUT, chromiumFor, launchBrowser, poll } from "../browser.js";
import { listenLater, OP_CLIENT, startOpenIdProvider } from "../upstream-helpers.js";

const chromium = await chromiumFor("the federated sign-in of an MCP client in chromium");

let op: Awaited<ReturnType<typeof startOpenIdProvider>>;
let site: Awaited<ReturnType<typeof listenLater>>;
let app: Awaited<ReturnType<typeof listenLater>>;
let as: AuthorizationServer;
let handler: ProtectedHandler;
let store: MemoryAuthStore;
let browser: BrowserContext;
const callbacks: URL[] = [];

beforeAll(async () => {
  site = await listenLater(); // picomcp: the MCP endpoint and its authorization server, one handler
  app = await listenLater(); // the MCP client's redirect URI
  app.serve((req, res) => {
    // only the callback itself (the browser may ask this origin for its favicon too)
    const url = new URL(req.url!, app.origin);
    if (url.pathname === "/callback") callbacks.push(url);
    res.writeHead(200, { "content-type": "text/plain" }).end("You can close this window.");
  });
  op = await startOpenIdProvider([`${site.origin}/oauth/callback`]);
  const resource = `${site.origin}/mcp`;
  const mcp = new McpServer({ name: "notes", version: "1.0.0" });
  mcp.tool("upstream_me", {
    description: "Who the caller is here and at their identity provider",
    run: async (_args, ctx) => {
      const token = await upstreamToken(ctx.auth);
      const me = await fetch(`${op.issuer}/me`, { headers: { authorization: `Bearer ${token}` } });
      // the token goes back only so that the test can compare it; a real tool never returns it
      return JSON.stringify({
        subject: ctx.auth?.subject,
        clientId: ctx.auth?.clientId,
        name: ctx.auth?.extra?.name,
        email: ctx.auth?.extra?.email,
        upstreamToken: token,
        upstreamStatus: me.status,
        upstreamMe: await me.json(),
      });
    },
  });
  store = new MemoryAuthStore();
  as = createAuthorizationServer({
    issuer: site.origin,
    resources: [resource],
    store,
    signIn: oidc({
      issuer: op.issuer,
      name: "Example Login",
      clientId: OP_CLIENT.id,
      clientSecret: OP_CLIENT.secret,
      allowHttp: true,
    }),
  });
  handler = createProtectedHandler(mcp, { resource, authorizationServer: as });
  site.serve(toNodeListener(handler));
  if (chromium) browser = await launchBrowser(chromium);
});
afterAll(async () => {
  await browser?.close();
  handler?.close();
  await as?.close();
  await site?.close();
  await app?.close();
  await op?.close();
});

/** The SDK client's OAuth side: registered by RFC 7591, its tokens in memory, the browser opened in chromium. */
function clientProvider(open: (url: URL) => Promise<void>) {
  const state = randomBytes(16).toString("base64url");
  const saved: {
    info?: Awaited<ReturnType<OAuthClientProvider["clientInformation"]>>;
    tokens?: Awaited<ReturnType<OAuthClientProvider["tokens"]>>;
    verifier?: string;
    discovery?: Awaited<ReturnType<NonNullable<OAuthClientProvider["discoveryState"]>>>;
  } = {};
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return `${app.origin}/callback`;
    },
    get clientMetadata() {
      return {
        client_name: "Federated test client",
        redirect_uris: [`${app.origin}/callback`],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    state: () => state,
    clientInformation: () => saved.info,
    saveClientInformation: (info) => {
      saved.info = info;
    },
    tokens: () => saved.tokens,
    saveTokens: (tokens) => {
      saved.tokens = tokens;
    },
    redirectToAuthorization: (url) => open(url),
    saveCodeVerifier: (verifier) => {
      saved.verifier = verifier;
    },
    codeVerifier: () => saved.verifier!,
    saveDiscoveryState: (discovery) => {
      saved.discovery = discovery;
    },
    discoveryState: () => saved.discovery,
  };
  return { provider, saved, state };
}

async function connected(resource: string, provider: OAuthClientProvider) {
  const client = new Client({ name: "federated-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider }));
  return client;
}

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  JSON.parse((result.content as { type: string; text: string }[])[0]!.text) as {
    subject: string;
    clientId: string;
    name: string;
    email: string;
    upstreamToken: string;
    upstreamStatus: number;
    upstreamMe: { sub: string; email: string };
  };

describe.skipIf(!chromium)(
  "an MCP client signs in through picomcp, federated to oidc-provider",
  { timeout: BROWSER_TIMEOUT },
  () => {
    it("consent at picomcp, login at the provider, a tool acting upstream; an expired upstream token is refreshed", async () => {
      const resource = `${site.origin}/mcp`;
      let page: Page | undefined;
      const { provider, saved, state } = clientProvider(async (url) => {
        page = await browser.newPage();
        await page.route(
          (u) => u.hostname !== "127.0.0.1",
          (route) => route.abort(),
        );
        await page.goto(url.href);
      });

      // 1. the first connection is refused (401) and the client sends the person to picomcp's /authorize
      const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider });
      const first = new Client({ name: "federated-test", version: "1.0.0" });
      await expect(first.connect(transport)).rejects.toThrow(UnauthorizedError);
      expect(page).toBeDefined();
      const p = page!;
      const upstreamCallbacks: string[] = [];
      p.on("request", (request) => {
        if (request.url().startsWith(`${site.origin}/oauth/callback?`)) upstreamCallbacks.push(request.url());
      });
      expect(new URL(p.url()).pathname).toBe("/authorize");

      // 2. picomcp's consent page names the client, where it sends the person back, and the provider
      const consent = (await p.locator("body").textContent()) ?? "";
      expect(consent).toContain("Federated test client");
      expect(consent).toContain(app.origin);
      expect(consent).toContain("You sign in withExample Login"); // a <dt> and its <dd>
      await p.locator('button[value="approve"]').click();

      // 3. the provider's login and consent
      await poll(() => new URL(p.url()).origin).toBe(op.issuer);
      // the cookie picomcp gave the browser for its callback, on the way to the provider
      const signInCookie = (await browser.cookies(`${site.origin}/oauth/callback`)).find((c) =>
        c.name.startsWith("picomcp-signin-"),
      );
      expect(signInCookie?.name).toMatch(/^picomcp-signin-[\w-]{43}$/);
      await p.locator('input[name="login"]').fill("carol");
      await p.locator('input[name="password"]').fill("any password");
      await p.locator('button[type="submit"]').click();
      await p.locator('input[name="prompt"][value="consent"]').waitFor({ state: "attached" });
      await p.locator('button[type="submit"]').click();

      // 4. back at the client with picomcp's code, its state and picomcp's iss (RFC 9207)
      await poll(() => callbacks.length).toBe(1);
      const back = callbacks[0]!;
      expect(back.searchParams.get("state")).toBe(state);
      expect(back.searchParams.get("iss")).toBe(site.origin);
      expect(back.searchParams.get("code")).toEqual(expect.any(String));
      await transport.finishAuth(back.searchParams);
      // the provider's callback to picomcp cleared the cookie that tied it to this browser; replayed
      // (with the cookie it carried), its authorization is spent
      expect(upstreamCallbacks).toHaveLength(1);
      // (cookies know no ports: the provider's, on 127.0.0.1 too, are there as well)
      const left = (await browser.cookies(`${site.origin}/oauth/callback`)).map((c) => c.name);
      expect(left.filter((name) => name.startsWith("picomcp-"))).toEqual([]);
      const cookie = `${signInCookie!.name}=${signInCookie!.value}`;
      const replay = await fetch(upstreamCallbacks[0]!, { headers: { cookie }, redirect: "manual" });
      expect(replay.status).toBe(400);
      expect(await replay.text()).toContain("is unknown or has expired: start again from the client");
      await p.close();

      // the MCP client holds picomcp's tokens only: nothing of the provider's
      const grants = await store.grantsOf(`${op.issuer}#carol`);
      expect(grants).toHaveLength(1);
      const grant = (await store.getGrant(grants[0]!))!;
      const upstream = grant.upstream!;
      expect(upstream.accessToken).toEqual(expect.any(String));
      expect(upstream.refreshToken).toEqual(expect.any(String));
      expect(saved.tokens).toMatchObject({
        token_type: expect.stringMatching(/^bearer$/i),
        access_token: expect.any(String),
      });
      const clientSide = JSON.stringify(saved.tokens);
      for (const secret of [upstream.accessToken, upstream.refreshToken!, upstream.idToken!])
        expect(clientSide).not.toContain(secret);

      // 5. a tool reads ctx.auth and calls the provider as the person, with the upstream token kept in the grant
      const client = await connected(resource, provider);
      const called = textOf(await client.callTool({ name: "upstream_me", arguments: {} }));
      expect(called).toEqual({
        subject: `${op.issuer}#carol`,
        clientId: saved.info!.client_id,
        name: "Person carol",
        email: "carol@example.test",
        upstreamToken: upstream.accessToken,
        upstreamStatus: 200,
        upstreamMe: expect.objectContaining({ sub: "carol", email: "carol@example.test" }),
      });

      // 6. the upstream access token expires: upstreamToken refreshes it at the provider and saves it in the grant
      const now = (await store.getGrant(grant.id))!;
      expect(
        await store.replaceGrant(
          { ...now, upstream: { ...upstream, expiresAt: Date.now() - 1000 } },
          now.refreshHash,
        ),
      ).toBe(true);
      const later = textOf(await client.callTool({ name: "upstream_me", arguments: {} }));
      expect(later.upstreamToken).not.toBe(upstream.accessToken);
      expect(later).toMatchObject({
        subject: `${op.issuer}#carol`,
        upstreamStatus: 200,
        upstreamMe: { sub: "carol" },
      });
      const refreshed = (await store.getGrant(grant.id))!.upstream!;
      expect(refreshed.accessToken).toBe(later.upstreamToken);
      expect(refreshed.expiresAt! - Date.now()).toBeGreaterThan(3500_000);
      // and, fresh now, it is used as it is
      expect(textOf(await client.callTool({ name: "upstream_me", arguments: {} })).upstreamToken).toBe(
        later.upstreamToken,
      );
      await client.close();
    });
  },
);
