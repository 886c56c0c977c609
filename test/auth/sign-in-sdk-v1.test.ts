// Interop: the official SDK client v1 (@modelcontextprotocol/sdk) signs in end to end over Streamable
// HTTP to picomcp's own authorization server, served with the MCP server by one createProtectedHandler
// on 127.0.0.1: by Client ID Metadata Document and by dynamic registration, through the consent page
// (followed with fetch, and once in headless chromium); then a tool reads ctx.auth, the client
// refreshes when its access token expires, and is refused after revocation (RFC 7009 endpoint).
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { describe, expect, it } from "vitest";
import { BROWSER_TIMEOUT, chromiumFor, launchBrowser, poll } from "../browser.js";
import { boundFetch } from "../crowd-helpers.js";
import {
  chromiumBrowser,
  claimsOf,
  clientMetadataDocument,
  fetchBrowser,
  rawPing,
  rawRefresh,
  SignInProvider,
  signInServer,
  type WhoAmI,
} from "../sign-in-helpers.js";

type Provider = SignInProvider<OAuthTokens, OAuthClientInformationMixed>;

/** The first connection sends the person through the consent page; the second gets in with the code's tokens. */
async function signIn(resource: string, provider: Provider, address: string): Promise<Client> {
  const fetch = boundFetch(address);
  const first = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider, fetch });
  await expect(new Client({ name: "sign-in-v1", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  await first.finishAuth(provider.code());
  const client = new Client({ name: "sign-in-v1", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider, fetch }),
  );
  return client;
}

async function whoami(client: Client): Promise<WhoAmI> {
  const result = await client.callTool({ name: "whoami", arguments: {} });
  const [first] = result.content as { type: string; text: string }[];
  return JSON.parse(first!.text) as WhoAmI;
}

describe("the SDK v1 client signs in to picomcp's authorization server", () => {
  it("by Client ID Metadata Document: its client_id is the document's URL; the tool reads who signed in", async () => {
    const { issuer, resource, hook } = await signInServer();
    const doc = await clientMetadataDocument("Notes for v1 (CIMD)");
    const provider: Provider = new SignInProvider(fetchBrowser("127.0.0.12"), { clientMetadataUrl: doc.url });
    const client = await signIn(resource, provider, "127.0.0.12");

    expect(provider.clientInformation()?.client_id).toBe(doc.url);
    expect(doc.fetches).toBe(1);
    expect(hook).toEqual({ calls: 1, refused: 0 });
    expect(Object.fromEntries(provider.authorizations[0]!.searchParams)).toMatchObject({
      client_id: doc.url,
      resource,
      scope: "notes:read",
      code_challenge_method: "S256",
    });
    expect(provider.callback!.searchParams.get("iss")).toBe(issuer);
    expect(await whoami(client)).toEqual({
      subject: "alice",
      clientId: doc.url,
      scopes: ["notes:read"],
      issuer,
      name: "Alice Liddell",
    });
    await client.close();
  });

  it("by dynamic registration, then refreshes when the access token expires (no new consent)", async () => {
    const { resource, hook } = await signInServer({ accessTokenTtl: 1 });
    const provider: Provider = new SignInProvider(fetchBrowser("127.0.0.13", "bob-session"), {
      clientName: "Notes for v1 (DCR)",
    });
    const client = await signIn(resource, provider, "127.0.0.13");
    const clientId = provider.clientInformation()!.client_id;
    expect(clientId).not.toMatch(/^https?:/);
    expect(await whoami(client)).toMatchObject({
      subject: "bob",
      clientId,
      scopes: ["notes:read"],
      name: "Bob",
    });

    const before = provider.tokens()!;
    const saves = provider.saved.length;
    await poll(async () => (await rawPing(resource, before.access_token)).status).toBe(401);
    expect(await whoami(client)).toMatchObject({ subject: "bob", clientId, scopes: ["notes:read"] });
    const after = provider.tokens()!;
    expect(provider.saved.length).toBeGreaterThan(saves);
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(claimsOf(after.access_token).gid).toBe(claimsOf(before.access_token).gid);
    expect(provider.authorizations).toHaveLength(1);
    expect(hook.calls).toBe(1);
    await client.close();
  });

  it("is refused after its refresh token is revoked at the RFC 7009 endpoint: 401 invalid_token, and it asks the person again", async () => {
    const { issuer, resource } = await signInServer();
    const provider: Provider = new SignInProvider(fetchBrowser("127.0.0.14"));
    const client = await signIn(resource, provider, "127.0.0.14");
    expect((await whoami(client)).subject).toBe("alice");
    const tokens = provider.tokens()!;
    const clientId = provider.clientInformation()!.client_id;

    const revoked = await fetch(`${issuer}/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: tokens.refresh_token!,
        token_type_hint: "refresh_token",
        client_id: clientId,
      }),
    });
    expect(revoked.status).toBe(200);
    // the grant is gone: its access token stops within the revocation delay (at once on this instance)
    await poll(async () => (await rawPing(resource, tokens.access_token)).status).toBe(401);
    expect((await rawPing(resource, tokens.access_token)).challenge).toBe(
      `Bearer error="invalid_token", error_description="Unauthorized: the access token was revoked", resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp", scope="notes:read"`,
    );
    expect(await rawRefresh(issuer, clientId, tokens.refresh_token!)).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
    provider.present = false;
    await expect(client.callTool({ name: "whoami", arguments: {} })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(provider.authorizations).toHaveLength(2);
    await client.close();
  });

  it("in headless chromium: the person approves on the consent page", {
    timeout: BROWSER_TIMEOUT,
  }, async () => {
    const chromium = await chromiumFor("sign-in v1");
    if (!chromium) return;
    const { issuer, resource } = await signInServer();
    const context = await launchBrowser(chromium);
    try {
      const provider: Provider = new SignInProvider(chromiumBrowser(context, issuer, "bob-session"), {
        clientName: "Notes for v1 (chromium)",
      });
      const client = await signIn(resource, provider, "127.0.0.15");
      expect(await whoami(client)).toMatchObject({
        subject: "bob",
        scopes: ["notes:read"],
        issuer,
        name: "Bob",
      });
      await client.close();
    } finally {
      await context.close();
    }
  });
});
