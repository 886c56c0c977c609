// Helpers of the upstream sign-in tests: a real OpenID provider (oidc-provider) on 127.0.0.1, and a
// small relying party that runs a SignIn's begin and finish the way the authorization server does.
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import type { SignIn, SignInFinished } from "../src/auth/sign-in.js";
import type { PendingAuthorization } from "../src/auth/store.js";
import { toNodeListener } from "../src/http/node.js";

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A server on 127.0.0.1 whose listener is set once the origin is known (a provider's issuer is its own URL). */
export async function listenLater(): Promise<{
  server: Server;
  origin: string;
  serve(listener: Listener): void;
  close(): Promise<void>;
}> {
  let current: Listener = (_req, res) => {
    res.writeHead(503).end();
  };
  const server = createServer((req, res) => current(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve(listener) {
      current = listener;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const OP_CLIENT = { id: "picomcp-test", secret: "a-secret-only-the-test-knows" };
/** A public client of the provider: no secret, PKCE alone. */
export const OP_PUBLIC_CLIENT = "picomcp-public";

/**
 * oidc-provider 9 as the upstream identity provider: a confidential and a public client, its development login and
 * consent pages (any login, any password), refresh tokens for every code, and two claims per account.
 */
export async function startOpenIdProvider(redirectUris: string[], options: { accessTokenTtl?: number } = {}) {
  const at = await listenLater();
  const provider = new Provider(at.origin, {
    clients: [
      {
        client_id: OP_CLIENT.id,
        client_secret: OP_CLIENT.secret,
        redirect_uris: redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
      {
        client_id: OP_PUBLIC_CLIENT,
        token_endpoint_auth_method: "none",
        redirect_uris: redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    ],
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    claims: { openid: ["sub"], profile: ["name"], email: ["email", "email_verified"] },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({
        sub,
        name: `Person ${sub}`,
        email: `${sub}@example.test`,
        email_verified: true,
      }),
    }),
    cookies: { keys: [randomBytes(16).toString("hex")] },
    // every lifetime given, so that the provider does not print a notice for each default it uses
    ttl: {
      AccessToken: options.accessTokenTtl ?? 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      RefreshToken: 86400,
    },
  });
  // its notices about development keys and interactions are expected here
  provider.on("server_error", (_ctx, error) => console.error("oidc-provider server_error", error));
  at.serve(provider.callback() as Listener);
  return { issuer: at.origin, provider, close: at.close };
}

/** What the relying party saw of one callback. */
export type Finished = SignInFinished | { error: string };

/**
 * A relying party running a `SignIn` as the authorization server does: `GET /start` makes an authorization
 * in progress and answers with `begin`'s response; the callback route answers 200 with `finish`'s result
 * or 400 with its error's message.
 */
export async function relyingParty(callbackPath = "/oauth/callback") {
  const at = await listenLater();
  const callbackUrl = `${at.origin}${callbackPath}`;
  let signIn!: SignIn;
  const pendings = new Map<string, PendingAuthorization>();
  const finished: Finished[] = [];
  const redirects: URL[] = [];
  const held: { url: string; cookie: string }[] = [];
  let holding = false;
  let made = 0;
  at.serve(
    toNodeListener(async (request) => {
      const url = new URL(request.url);
      if (url.pathname === "/start") {
        const pending: PendingAuthorization = {
          id: `pending-${++made}-${randomBytes(12).toString("base64url")}`,
          clientId: "https://client.example/metadata.json",
          redirectUri: "http://127.0.0.1:1/callback",
          codeChallenge: "x".repeat(43),
          resource: "http://127.0.0.1:1/mcp",
          scopes: [],
          createdAt: Date.now(),
          consented: true,
        };
        try {
          const answer = await signIn.begin({ request, pending, callbackUrl });
          if (!(answer instanceof Response)) return new Response("begin gave an identity", { status: 500 });
          pendings.set(pending.id, pending);
          redirects.push(new URL(answer.headers.get("location")!));
          return answer;
        } catch (error) {
          return new Response((error as Error).message, { status: 502 });
        }
      }
      if (url.pathname === callbackPath) {
        if (holding) {
          holding = false;
          held.push({ url: request.url, cookie: request.headers.get("cookie") ?? "" });
          return new Response("held");
        }
        try {
          const result = await signIn.finish!({ request, load: async (id) => pendings.get(id), callbackUrl });
          finished.push(result);
          return new Response(`signed in as ${result.identity.subject}`);
        } catch (error) {
          finished.push({ error: `${(error as Error).name}: ${(error as Error).message}` });
          return new Response((error as Error).message, { status: 400 });
        }
      }
      return new Response("not here", { status: 404 });
    }),
  );
  return {
    origin: at.origin,
    callbackUrl,
    pendings,
    finished,
    redirects,
    held,
    signIn: () => signIn,
    /** The next callback is only kept in `held` (url and cookies), not finished: a test then tries variants of it. */
    holdNext() {
      holding = true;
    },
    /** Sets the SignIn the routes run. */
    use(next: SignIn) {
      signIn = next;
    },
    close: at.close,
  };
}

/** The body of a node:http request, as text. */
export async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The PKCE S256 challenge of a verifier. */
export const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

/** What a provider's stand-in saw. */
export interface Seen {
  authorize: Record<string, string>[];
  token: { form: Record<string, string>; authorization: string | undefined; accept: string | undefined }[];
  user: Record<string, string | undefined>[];
}

/** The person's browser, by fetch: `/start` at the relying party, the provider's consent (approved at once by the stand-in), the callback. */
export async function browse(
  rp: Awaited<ReturnType<typeof relyingParty>>,
): Promise<{ status: number; text: string }> {
  const start = await fetch(`${rp.origin}/start`, { redirect: "manual" });
  if (start.status !== 303) throw new Error(`/start answered ${start.status}: ${await start.text()}`);
  const cookie = start.headers.get("set-cookie")!.split(";")[0]!;
  const consent = await fetch(start.headers.get("location")!, { redirect: "manual" });
  if (consent.status !== 302) throw new Error(`the provider answered ${consent.status}`);
  const callback = await fetch(consent.headers.get("location")!, { headers: { cookie } });
  return { status: callback.status, text: await callback.text() };
}

/** The last result the relying party saw. */
export const last = (finished: Finished[]) => finished.at(-1)!;
