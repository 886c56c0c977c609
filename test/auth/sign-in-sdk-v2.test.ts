// Interop: the official SDK client v2 (@modelcontextprotocol/client) signs in end to end over Streamable
// HTTP to picomcp's own authorization server, served with the MCP server by one createProtectedHandler
// on 127.0.0.1: by Client ID Metadata Document and by dynamic registration, through the consent page
// (followed with fetch, and once in headless chromium); then a tool reads ctx.auth, the client
// refreshes when its access token expires, and is refused after revocation.
import {
  Client,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { BROWSER_TIMEOUT, chromiumFor, launchBrowser, poll } from "../browser.js";
import { boundFetch } from "../crowd-helpers.js";
import {
  type Browser,
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

type Provider = SignInProvider<StoredOAuthTokens, StoredOAuthClientInformation>;

/** The first connection sends the person through the consent page; the second gets in with the code's tokens. */
async function signIn(resource: string, provider: Provider, address: string): Promise<Client> {
  const fetch = boundFetch(address);
  const first = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider, fetch });
  await expect(new Client({ name: "sign-in-v2", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  await first.finishAuth(provider.callback!.searchParams);
  const client = new Client({ name: "sign-in-v2", version: "1.0.0" });
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

describe("the SDK v2 client signs in to picomcp's authorization server", () => {
  it("by Client ID Metadata Document: its client_id is the document's URL, fetched once; the tool reads who signed in", async () => {
    const { issuer, resource, hook } = await signInServer();
    const doc = await clientMetadataDocument("Notes for v2 (CIMD)");
    const pages: { url: string; status: number; html: string }[] = [];
    const provider: Provider = new SignInProvider(
      fetchBrowser("127.0.0.2", "alice-session", "approve", pages),
      {
        clientMetadataUrl: doc.url,
      },
    );
    const client = await signIn(resource, provider, "127.0.0.2");
    // the consent page names the client as its document does, where its document is published, and who signs in
    const text = pages[0]!.html.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ");
    expect(text).toContain("Allow Notes for v2 (CIMD) to use 127.0.0.1:");
    expect(text).toContain(`Published at ${new URL(doc.url).host}`);
    expect(text).toContain("It sends you back to http://127.0.0.1:33418");
    expect(text).toContain("Signed in as alice");

    expect(provider.clientInformation()?.client_id).toBe(doc.url);
    expect(doc.fetches).toBe(1);
    expect(hook).toEqual({ calls: 1, refused: 0 });
    const [asked] = provider.authorizations;
    expect(asked!.origin + asked!.pathname).toBe(`${issuer}/authorize`);
    expect(Object.fromEntries(asked!.searchParams)).toMatchObject({
      client_id: doc.url,
      resource,
      scope: "notes:read",
      code_challenge_method: "S256",
      response_type: "code",
    });
    // the response names its issuer (RFC 9207), which the SDK checked in finishAuth
    expect(provider.callback!.searchParams.get("iss")).toBe(issuer);
    expect(await whoami(client)).toEqual({
      subject: "alice",
      clientId: doc.url,
      scopes: ["notes:read"],
      issuer,
      name: "Alice Liddell",
    });
    const tokens = provider.tokens()!;
    expect(tokens.token_type).toMatch(/^bearer$/i);
    expect(tokens.refresh_token).toMatch(/^[^.]+\.[^.]+$/);
    expect(claimsOf(tokens.access_token)).toMatchObject({
      iss: issuer,
      aud: resource,
      sub: "alice",
      client_id: doc.url,
      scope: "notes:read",
    });
    await client.close();
  });

  it("by dynamic registration, then refreshes when the access token expires (no new consent)", async () => {
    const { issuer, resource, hook } = await signInServer({ accessTokenTtl: 1 });
    const provider: Provider = new SignInProvider(fetchBrowser("127.0.0.3"), {
      clientName: "Notes for v2 (DCR)",
    });
    const client = await signIn(resource, provider, "127.0.0.3");
    const clientId = provider.clientInformation()!.client_id;
    expect(clientId).not.toMatch(/^https?:/);
    expect(await whoami(client)).toMatchObject({ subject: "alice", clientId, scopes: ["notes:read"] });

    const before = provider.tokens()!;
    const saves = provider.saved.length;
    // the access token expires (1 s, and the verifier's few seconds of clock tolerance): refused raw
    await poll(async () => (await rawPing(resource, before.access_token)).status).toBe(401);
    expect(await whoami(client)).toMatchObject({ subject: "alice", clientId, scopes: ["notes:read"] });
    const after = provider.tokens()!;
    expect(provider.saved.length).toBeGreaterThan(saves);
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    // the same grant, refreshed: one consent, one sign-in
    expect(claimsOf(after.access_token).gid).toBe(claimsOf(before.access_token).gid);
    expect(provider.authorizations).toHaveLength(1);
    expect(hook.calls).toBe(1);
    expect(claimsOf(after.access_token).iss).toBe(issuer);
    await client.close();
  });

  it("is refused after revoke({ grant }): 401 invalid_token, its refresh token is dead, and it asks the person again", async () => {
    const { issuer, resource, as } = await signInServer();
    const provider: Provider = new SignInProvider(fetchBrowser("127.0.0.4"));
    const client = await signIn(resource, provider, "127.0.0.4");
    expect((await whoami(client)).subject).toBe("alice");
    const tokens = provider.tokens()!;

    await as.revoke({ grant: String(claimsOf(tokens.access_token).gid) });
    const refused = await rawPing(resource, tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toBe(
      `Bearer error="invalid_token", error_description="Unauthorized: the access token was revoked", resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp", scope="notes:read"`,
    );
    expect(
      await rawRefresh(issuer, provider.clientInformation()!.client_id, tokens.refresh_token!),
    ).toMatchObject({
      status: 400,
      body: { error: "invalid_grant" },
    });
    // the client tries its refresh token, fails, and sends the person to sign in again: nobody is there
    provider.present = false;
    await expect(client.callTool({ name: "whoami", arguments: {} })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(provider.authorizations).toHaveLength(2);
    expect(provider.invalidated).toContain("tokens");
    await client.close();
  });

  it("a person who denies, or whom the authenticate hook does not know, sends the client back with access_denied and no code", async () => {
    const { issuer, resource, hook } = await signInServer();
    for (const [browser, description] of [
      [fetchBrowser("127.0.0.6", "alice-session", "deny"), "The person denied the request"],
      [fetchBrowser("127.0.0.6", "nobody-session"), "The person could not be signed in"],
    ] as const) {
      const provider: Provider = new SignInProvider(browser);
      const transport = new StreamableHTTPClientTransport(new URL(resource), {
        authProvider: provider,
        fetch: boundFetch("127.0.0.6"),
      });
      await expect(
        new Client({ name: "sign-in-v2", version: "1.0.0" }).connect(transport),
      ).rejects.toBeInstanceOf(UnauthorizedError);
      expect(Object.fromEntries(provider.callback!.searchParams)).toEqual({
        error: "access_denied",
        error_description: description,
        state: provider.storedState(),
        iss: issuer,
      });
      expect(() => provider.code()).toThrow(/access_denied/);
      expect(provider.saved).toEqual([]);
    }
    expect(hook).toEqual({ calls: 2, refused: 1 });
  });

  it("in headless chromium: the person approves on the consent page", {
    timeout: BROWSER_TIMEOUT,
  }, async () => {
    const chromium = await chromiumFor("sign-in v2");
    if (!chromium) return;
    const { issuer, resource } = await signInServer();
    const doc = await clientMetadataDocument("Notes for v2 (chromium)");
    const context = await launchBrowser(chromium);
    try {
      const browser: Browser = chromiumBrowser(context, issuer);
      const provider: Provider = new SignInProvider(browser, { clientMetadataUrl: doc.url });
      const client = await signIn(resource, provider, "127.0.0.5");
      expect(await whoami(client)).toEqual({
        subject: "alice",
        clientId: doc.url,
        scopes: ["notes:read"],
        issuer,
        name: "Alice Liddell",
      });
      await client.close();
    } finally {
      await context.close();
    }
  });
});
