// Interop: @ai-sdk/mcp, with its default settings, signs in end to end over Streamable HTTP to picomcp's
// own authorization server (served with the MCP server by one createProtectedHandler on 127.0.0.1).
// Its OAuth provider has no client metadata URL, so it registers (RFC 7591); then a tool reads
// ctx.auth, it refreshes when its access token expires, and is refused after revoke({ subject }).
import {
  auth,
  createMCPClient,
  type OAuthClientInformation,
  type OAuthTokens,
  UnauthorizedError,
} from "@ai-sdk/mcp";
import { describe, expect, it } from "vitest";
import { poll } from "../browser.js";
import { boundFetch } from "../crowd-helpers.js";
import {
  claimsOf,
  fetchBrowser,
  rawPing,
  SignInProvider,
  signInServer,
  type WhoAmI,
} from "../sign-in-helpers.js";

type Provider = SignInProvider<OAuthTokens, OAuthClientInformation>;
type McpClient = Awaited<ReturnType<typeof createMCPClient>>;

/** The first client sends the person through the consent page; `auth` redeems the code; the second gets in. */
async function signIn(resource: string, provider: Provider, address: string): Promise<McpClient> {
  const fetch = boundFetch(address);
  const transport = { type: "http" as const, url: resource, authProvider: provider, fetch };
  await expect(createMCPClient({ transport })).rejects.toBeInstanceOf(UnauthorizedError);
  const back = provider.callback!.searchParams;
  expect(
    await auth(provider, {
      serverUrl: resource,
      authorizationCode: provider.code(),
      callbackState: back.get("state")!,
      callbackIssuer: back.get("iss")!,
      fetchFn: fetch,
    }),
  ).toBe("AUTHORIZED");
  return createMCPClient({ transport });
}

async function whoami(client: McpClient): Promise<WhoAmI> {
  const result = await client.callTool({ name: "whoami", arguments: {} });
  const [first] = result.content as { type: string; text: string }[];
  return JSON.parse(first!.text) as WhoAmI;
}

describe("@ai-sdk/mcp signs in to picomcp's authorization server", () => {
  it("by dynamic registration; refreshes when the access token expires; is refused after revoke({ subject })", async () => {
    const { issuer, resource, as, hook } = await signInServer({ accessTokenTtl: 1 });
    const provider: Provider = new SignInProvider(fetchBrowser("127.0.0.22"), {
      clientName: "Notes for the AI SDK",
    });
    const client = await signIn(resource, provider, "127.0.0.22");
    const clientId = provider.clientInformation()!.client_id;
    expect(clientId).not.toMatch(/^https?:/);
    expect(Object.fromEntries(provider.authorizations[0]!.searchParams)).toMatchObject({
      client_id: clientId,
      resource,
      code_challenge_method: "S256",
    });
    expect(await whoami(client)).toMatchObject({ subject: "alice", clientId, issuer, name: "Alice Liddell" });

    const before = provider.tokens()!;
    await poll(async () => (await rawPing(resource, before.access_token)).status).toBe(401);
    expect(await whoami(client)).toMatchObject({ subject: "alice", clientId });
    const after = provider.tokens()!;
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(claimsOf(after.access_token).gid).toBe(claimsOf(before.access_token).gid);
    expect(provider.authorizations).toHaveLength(1);
    expect(hook.calls).toBe(1);

    await as.revoke({ subject: "alice" });
    const refused = await rawPing(resource, after.access_token);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toBe(
      `Bearer error="invalid_token", error_description="Unauthorized: the access token was revoked", resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp", scope="notes:read"`,
    );
    provider.present = false;
    // the library wraps it: its cause is the UnauthorizedError that asked the person to sign in again
    const refusedCall = await client.callTool({ name: "whoami", arguments: {} }).catch((e: unknown) => e);
    expect((refusedCall as Error).cause).toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizations).toHaveLength(2);
    await client.close();
  });
});
