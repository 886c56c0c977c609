// Two authorization servers (one issuer, two replicas) on one redis-server through RedisAuthStore serve
// the steps of one sign-in alternately: registration and authorize on A, consent on B, the code on A,
// each refresh on the other, tokens verified on both; a code replayed or a rotated-out refresh token
// presented on the other replica revokes the grant everywhere; a key rotation on one signs on both; a
// replica whose Redis does not answer fails its step in time and loses nothing; and the whole sign-in
// and the MCP calls after it over HTTP, through a round-robin balancer in front of both.
// Without redis-server (and REDIS_URL) it is skipped, as test/redis-setup.ts says in one line.
import { once } from "node:events";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AuthorizationServer,
  createAuthorizationServer,
  createProtectedHandler,
} from "../../src/auth/index.js";
import { toNodeListener } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { RedisAuthStore } from "../../src/redis/index.js";
import {
  authorizeUrl,
  REDIRECT as HELPER_REDIRECT,
  locationOf,
  openConsent,
  pkce as pkcePair,
  registerClient,
  standard,
  submitConsent,
  tokenRequest,
} from "../auth/as-helpers.js";
import { type Fault, faulty, useRedis, withRedis } from "../redis-helpers.js";

const ISSUER = "http://127.0.0.1:7777";
const RESOURCE = "http://127.0.0.1:7777/mcp";
const REDIRECT = "http://127.0.0.1:33418/callback";
let runs = 0;

const b64url = (bytes: ArrayBuffer | Uint8Array) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: b64url(digest) };
}

/** Asks `server` as a caller on 127.0.0.1 would; every path under test is one of its routes. */
async function ask(server: AuthorizationServer, path: string, init: RequestInit = {}): Promise<Response> {
  const response = await server.handle(new Request(`${ISSUER}${path}`, init), { address: "127.0.0.1" });
  if (!response) throw new Error(`${path} is not a route of the authorization server`);
  return response;
}

const form = (fields: { [k: string]: string }) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
});

describe.runIf(withRedis)("two authorization servers on one Redis", () => {
  let redis: Awaited<ReturnType<typeof useRedis>>;
  const clients: { destroy(): void }[] = [];
  const lines: string[] = [];
  beforeAll(async () => {
    redis = await useRedis();
  }, 30_000);
  afterAll(async () => {
    for (const c of clients) c.destroy();
    await redis?.stop();
  });

  /** Replicas A and B: one issuer, each with its own store on its own client, one prefix. */
  async function replicas(options: { keysCacheMs?: number } = {}, fault?: Fault) {
    const prefix = `picomcp:test:auth-server:${process.pid}:${++runs}:`;
    const make = async (faults?: Fault) => {
      const client = createClient({ url: redis.url });
      clients.push(client);
      await client.connect();
      const store = new RedisAuthStore(faults ? faulty(client, faults) : client, {
        prefix,
        timeoutMs: 500,
        log: (l) => lines.push(l),
      });
      const server = createAuthorizationServer({
        issuer: ISSUER,
        resources: [RESOURCE],
        authenticate: () => ({ subject: "ada", claims: { name: "Ada" } }),
        store,
        // a revocation on one replica stops the other's access tokens at their next check
        revocationDelayMs: 1,
        ...options,
        onError: (e) => lines.push(String(e)),
      });
      return { server, store };
    };
    const [a, b] = [await make(fault), await make()];
    return { a: a.server, b: b.server, stores: [a.store, b.store] as const };
  }

  /** Registers a client on `on`, and takes one sign-in to a code: authorize on `first`, consent on `second`. */
  async function code(on: AuthorizationServer, first: AuthorizationServer, second: AuthorizationServer) {
    const registered = await ask(on, "/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: "none",
        client_name: "Notes",
      }),
    });
    expect(registered.status).toBe(201);
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const { verifier, challenge } = await pkce();
    const query = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      state: "st-1",
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: RESOURCE,
    });
    const page = await ask(first, `/authorize?${query}`);
    expect(page.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1];
    const cookie = page.headers.get("set-cookie")?.split(";")[0];
    expect(csrf && cookie).toBeTruthy();
    const approved = await ask(second, "/consent", {
      ...form({ csrf: csrf!, decision: "approve" }),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: new URL(ISSUER).origin,
        cookie: cookie!,
      },
    });
    expect(approved.status).toBe(303);
    const back = new URL(approved.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get("state")).toBe("st-1");
    expect(back.searchParams.get("iss")).toBe(ISSUER);
    return { clientId, verifier, code: back.searchParams.get("code")! };
  }

  const redeem = (on: AuthorizationServer, c: { clientId: string; verifier: string; code: string }) =>
    ask(
      on,
      "/token",
      form({
        grant_type: "authorization_code",
        code: c.code,
        redirect_uri: REDIRECT,
        client_id: c.clientId,
        code_verifier: c.verifier,
        resource: RESOURCE,
      }),
    );

  const refresh = (on: AuthorizationServer, clientId: string, token: string) =>
    ask(on, "/token", form({ grant_type: "refresh_token", refresh_token: token, client_id: clientId }));

  interface Tokens {
    access_token: string;
    refresh_token: string;
    token_type: string;
  }

  const verify = (on: AuthorizationServer, token: string) =>
    Promise.resolve(on.verifyToken(token, new Request(RESOURCE, { method: "POST" })));
  /** What `on` says of `token`: "accepted", or why it refused it. */
  const verdict = (on: AuthorizationServer, token: string) =>
    verify(on, token).then(
      (info) => (info ? "accepted" : "unknown"),
      (e: unknown) => (e as Error).message,
    );

  it("serves the steps of one sign-in alternately: authorize on A, consent on B, code on A, refresh on B, then A", async () => {
    const { a, b } = await replicas();
    const c = await code(a, a, b);
    const first = await redeem(a, c);
    expect(first.status).toBe(200);
    const t1 = (await first.json()) as Tokens;
    expect(t1.token_type).toMatch(/^bearer$/i);
    for (const on of [a, b])
      expect(await verify(on, t1.access_token)).toMatchObject({ subject: "ada", clientId: c.clientId });

    const second = await refresh(b, c.clientId, t1.refresh_token);
    expect(second.status).toBe(200);
    const t2 = (await second.json()) as Tokens;
    expect(t2.refresh_token).not.toBe(t1.refresh_token);
    const third = await refresh(a, c.clientId, t2.refresh_token);
    expect(third.status).toBe(200);
    const t3 = (await third.json()) as Tokens;
    for (const on of [a, b])
      for (const t of [t1, t2, t3])
        expect(await verify(on, t.access_token)).toMatchObject({ subject: "ada" });
    expect(lines).toEqual([]);
  });

  it("a code redeemed on A and replayed on B is refused there, and revokes the grant on both", async () => {
    const { a, b } = await replicas();
    const c = await code(b, a, b);
    const first = await redeem(a, c);
    expect(first.status).toBe(200);
    const t1 = (await first.json()) as Tokens;
    const replay = await redeem(b, c);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
    for (const on of [a, b])
      await expect.poll(() => verdict(on, t1.access_token)).toBe("the access token was revoked");
    expect((await refresh(a, c.clientId, t1.refresh_token)).status).toBe(400);
    expect(lines).toEqual([]);
  });

  it("a refresh token rotated out on B and presented on A revokes the grant everywhere", async () => {
    const { a, b } = await replicas();
    const c = await code(a, b, a);
    const t1 = (await (await redeem(b, c)).json()) as Tokens;
    const t2 = (await (await refresh(b, c.clientId, t1.refresh_token)).json()) as Tokens;
    const stale = await refresh(a, c.clientId, t1.refresh_token);
    expect(stale.status).toBe(400);
    expect(await stale.json()).toMatchObject({ error: "invalid_grant" });
    // the current one is revoked too
    expect((await refresh(b, c.clientId, t2.refresh_token)).status).toBe(400);
    for (const on of [a, b])
      await expect.poll(() => verdict(on, t2.access_token)).toBe("the access token was revoked");
    expect(lines).toEqual([]);
  });

  it(`of 20 concurrent refreshes with one token, split over A and B, one wins`, async () => {
    const { a, b } = await replicas();
    const c = await code(a, a, b);
    const t1 = (await (await redeem(a, c)).json()) as Tokens;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => refresh(i % 2 ? a : b, c.clientId, t1.refresh_token)),
    );
    expect(answers.map((r) => r.status).filter((s) => s === 200)).toHaveLength(1);
    expect(lines).toEqual([]);
  });

  it("a key rotated on B signs on both, and tokens signed before still verify on both", async () => {
    const { a, b } = await replicas({ keysCacheMs: 300 });
    const c = await code(a, a, b);
    const t1 = (await (await redeem(a, c)).json()) as Tokens;
    const kid = await b.rotateKeys();
    const kidOf = (t: Tokens) =>
      JSON.parse(atob(t.access_token.split(".")[0]!.replaceAll("-", "+").replaceAll("_", "/"))).kid;
    expect(kidOf(t1)).not.toBe(kid);
    const t2 = (await (await refresh(b, c.clientId, t1.refresh_token)).json()) as Tokens;
    expect(kidOf(t2)).toBe(kid);
    // A reads the keys again once its copy is older than keysCacheMs
    await expect
      .poll(async () =>
        ((await (await ask(a, "/jwks")).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid),
      )
      .toContain(kid);
    const t3 = (await (await refresh(a, c.clientId, t2.refresh_token)).json()) as Tokens;
    expect(kidOf(t3)).toBe(kid);
    for (const on of [a, b])
      for (const t of [t1, t2, t3])
        expect(await verify(on, t.access_token)).toMatchObject({ subject: "ada" });
    expect(lines).toEqual([]);
  });

  it("revoking a subject on B stops its grants on A", async () => {
    const { a, b } = await replicas();
    const c = await code(a, a, b);
    const t1 = (await (await redeem(a, c)).json()) as Tokens;
    await b.revoke({ subject: "ada" });
    await expect.poll(() => verdict(a, t1.access_token)).toBe("the access token was revoked");
    expect((await refresh(a, c.clientId, t1.refresh_token)).status).toBe(400);
    expect(lines).toEqual([]);
  });

  it("while A's Redis does not answer, A's token step fails within the deadline with a server error, and B serves it", async () => {
    let down = false;
    const { a, b } = await replicas({}, () => (down ? "hang" : undefined));
    const c = await code(b, b, b);
    down = true;
    const started = performance.now();
    const failed = await redeem(a, c);
    expect(performance.now() - started).toBeLessThan(500 + 1_500);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({
      error: "server_error",
      error_description: "The authorization server failed; try again",
    });
    expect(lines).toEqual([
      "picomcp/redis: Redis is unreachable (picomcp/redis: Redis did not answer within 500 ms); sign-in steps fail until it is back",
      "RedisTimeoutError: picomcp/redis: Redis did not answer within 500 ms",
    ]);
    lines.length = 0;
    // nothing was half done: the code is still whole, and B redeems it
    const redeemed = await redeem(b, c);
    expect(redeemed.status).toBe(200);
    const t = (await redeemed.json()) as Tokens;
    expect(await verify(b, t.access_token)).toMatchObject({ subject: "ada" });
    down = false;
  });

  it("behind a round-robin balancer, over HTTP: every request of a sign-in and of the MCP calls after it alternates between the replicas", async () => {
    const prefix = `picomcp:test:auth-server:${process.pid}:${++runs}:`;
    const listening: Server[] = [];
    const listen = async (server: Server) => {
      listening.push(server);
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      return (server.address() as AddressInfo).port;
    };
    // the replicas' listeners wait for the balancer's origin, which is their issuer
    const handlers: Parameters<typeof createServer>[1][] = [];
    const ports = await Promise.all(
      [0, 1].map((i) => listen(createServer((req, res) => handlers[i]!(req, res)))),
    );
    let next = 0;
    const served: number[] = [];
    const balancer = createServer((req, res) => {
      const index = next++ % 2;
      served.push(index);
      const upstream = httpRequest(
        { host: "127.0.0.1", port: ports[index], path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    });
    const origin = `http://127.0.0.1:${await listen(balancer)}`;
    const resource = `${origin}/mcp`;
    try {
      for (const i of [0, 1]) {
        const client = createClient({ url: redis.url });
        clients.push(client);
        await client.connect();
        const authorizationServer = createAuthorizationServer({
          issuer: origin,
          resources: [resource],
          authenticate: () => ({ subject: "ada" }),
          store: new RedisAuthStore(client, { prefix, log: (l) => lines.push(l) }),
          onError: (e) => lines.push(String(e)),
        });
        const mcp = new McpServer({ name: "notes", version: "1.0.0" });
        mcp.tool("whoami", {
          description: "Who the caller is, and which replica answers",
          run: (_args, ctx) => `${ctx.auth?.subject} on ${"AB"[i]}`,
        });
        handlers[i] = toNodeListener(createProtectedHandler(mcp, { resource, authorizationServer }));
      }
      const whoami = async (token: string) => {
        const res = await fetch(resource, {
          method: "POST",
          headers: {
            accept: "application/json, text/event-stream",
            "content-type": "application/json",
            authorization: `Bearer ${token}`,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "whoami",
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: {
              name: "whoami",
              arguments: {},
              _meta: {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
              },
            },
          }),
        });
        const raw = await res.text();
        expect(res.status, raw).toBe(200);
        const data = raw.includes("data:") ? raw.split("data:")[1]!.trim() : raw;
        return (JSON.parse(data) as { result: { content: { text: string }[] } }).result.content[0]!.text;
      };

      const clientId = await registerClient(origin); // A
      const { verifier, challenge } = pkcePair();
      const form = await openConsent(authorizeUrl(origin, standard(clientId, challenge, resource))); // B
      const code = locationOf(await submitConsent(origin, form)).searchParams.get("code")!; // A
      const tokens = await tokenRequest(origin, {
        grant_type: "authorization_code",
        code,
        code_verifier: verifier,
        redirect_uri: HELPER_REDIRECT,
        client_id: clientId,
        resource,
      }); // B
      expect(tokens.status).toBe(200);
      const access = tokens.body.access_token as string;
      expect([await whoami(access), await whoami(access)]).toEqual(["ada on A", "ada on B"]);
      const refreshed = await tokenRequest(origin, {
        grant_type: "refresh_token",
        refresh_token: tokens.body.refresh_token as string,
        client_id: clientId,
      }); // A
      expect(refreshed.status).toBe(200);
      const again = refreshed.body.access_token as string;
      expect([await whoami(again), await whoami(again)]).toEqual(["ada on B", "ada on A"]);
      expect(served).toEqual([0, 1, 0, 1, 0, 1, 0, 1, 0]);
      expect(lines).toEqual([]);
    } finally {
      for (const server of listening) {
        server.closeAllConnections();
        server.close();
      }
    }
  });
});
