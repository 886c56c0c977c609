/**
 * The `@example` blocks of src/'s JSDoc, type-checked: each region between `// @example FILE#N` and
 * `// @end` is the N-th example of that file, word for word (test/core/jsdoc-examples.test.ts compares
 * them; `npm run docs:sync` copies these regions into the comments). What surrounds a region is
 * there to give it a context, and is not shown.
 */
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import { createClient } from "redis";
import { expect } from "vitest";
import { z } from "zod";
import {
  createAuthorizationServer,
  createProtectedHandler,
  github,
  google,
  type Identity,
  jwtVerifier,
  MemoryAuthStore,
  oidc,
  upstreamToken,
} from "../src/auth/index.js";
import { directoryResources } from "../src/fs/index.js";
import { createHttpHandler, withPeer } from "../src/http/index.js";
import { remoteAddress, serve } from "../src/http/node.js";
import {
  type Context,
  extendContext,
  link,
  McpServer,
  parseUriTemplate,
  requestSlot,
  safeJoin,
  sessionSlot,
  type UriParams,
} from "../src/index.js";
import { instrument } from "../src/otel/index.js";
import { createProxy } from "../src/proxy/index.js";
import {
  RedisAuthStore,
  RedisBus,
  RedisEventStore,
  RedisRateStore,
  RedisSessionStore,
  RedisTaskStore,
} from "../src/redis/index.js";
import { TemplateRouter } from "../src/resources/router.js";
import { compileSchema } from "../src/schema/schema.js";
import { serveStdio } from "../src/stdio.js";
import { connect } from "../src/testing.js";

declare const server: McpServer;
declare const ctx: Context;
declare const db: { user(id: string): string };
declare const html: string;
declare const tracerProvider: TracerProvider;
declare const meterProvider: MeterProvider;
/** The part of Bun's global that the Bun recipe uses. */
declare const Bun: {
  serve(options: {
    fetch(
      request: Request,
      server: { requestIP(request: Request): { address: string } | null },
    ): Promise<Response>;
  }): unknown;
};

// @example http/index.ts#1
const handle = createHttpHandler(server);
export default { fetch: handle };
// @end

/** Each example in a function of its own, so that their names do not meet. */
export const examples = [
  () => {
    // @example http/request.ts#1
    Bun.serve({ fetch: (r, s) => handle(withPeer(r, s.requestIP(r)?.address)) });
    // @end
  },
  () => {
    // @example fs/index.ts#1
    const files = directoryResources(server, "/srv/docs", { exclude: /(^|\/)drafts$/ });
    files.uriOf("guide.md"); // "file:///srv/docs/guide.md"
    // @end
  },
  async () => {
    // @example proxy/index.ts#1
    const proxy = await createProxy(
      { command: "node", args: ["server.js"] },
      { tools: { hide: ["delete_all"] } },
    );
    const handle = createHttpHandler(proxy);
    // @end
    return handle;
  },
  () => {
    // @example otel/index.ts#1
    instrument(server); // spans and metrics go to the providers the Node SDK registered
    instrument(server, { tracerProvider, meterProvider }); // or to these
    // @end
  },
  async () => {
    // @example auth/index.ts#1
    const handle = createProtectedHandler(server, {
      resource: "https://mcp.example.com/mcp",
      authorizationServers: ["https://auth.example.com"],
      verifyToken: jwtVerifier({
        issuer: "https://auth.example.com",
        audience: "https://mcp.example.com/mcp",
        jwks: "https://auth.example.com/jwks",
      }),
    });
    // @end
    return handle;
  },
  async () => {
    const sessionOf = (_request: Request): Identity | undefined => ({ subject: "alice" });
    // @example auth/authorization-server.ts#1
    const authorizationServer = createAuthorizationServer({
      issuer: "https://mcp.example.com",
      resources: ["https://mcp.example.com/mcp"],
      authenticate: (request) => sessionOf(request), // your own sign-in: an Identity, or undefined
    });
    // @end
    return authorizationServer;
  },
  async () => {
    const issuer = "https://mcp.example.com";
    const resources = ["https://mcp.example.com/mcp"];
    const authenticate = () => ({ subject: "alice" });
    // @example auth/memory-store.ts#1
    const store = new MemoryAuthStore({ maxGrants: 10_000 });
    const authorizationServer = createAuthorizationServer({ issuer, resources, authenticate, store });
    // @end
    return authorizationServer;
  },
  () => {
    // @example auth/upstream-token.ts#1
    server.tool("my_repos", {
      run: async (_args, ctx) => {
        const token = await upstreamToken(ctx.auth);
        const res = await fetch("https://api.github.com/user/repos", {
          headers: { authorization: `Bearer ${token}` },
        });
        return JSON.stringify(await res.json());
      },
    });
    // @end
  },
  async () => {
    // @example auth/jwt.ts#1
    const verifyToken = jwtVerifier({
      issuer: "https://auth.example.com",
      audience: "https://mcp.example.com/mcp",
      jwks: "https://auth.example.com/.well-known/jwks.json",
    });
    // @end
    return verifyToken;
  },
  () => {
    // @example auth/upstream-github.ts#1
    const signIn = github({
      clientId: process.env.GITHUB_CLIENT_ID!,
      clientSecret: process.env.GITHUB_CLIENT_SECRET!,
    });
    // @end
    return signIn;
  },
  () => {
    // @example auth/upstream-oidc.ts#1
    const signIn = oidc({
      issuer: "https://login.example.com/realms/staff",
      clientId: "mcp",
      clientSecret: process.env.OIDC_CLIENT_SECRET!,
    });
    // @end
    return signIn;
  },
  () => {
    // @example auth/upstream-oidc.ts#2
    const signIn = google({
      clientId: process.env.GOOGLE_CLIENT_ID!,
      clientSecret: process.env.GOOGLE_CLIENT_SECRET!,
    });
    // @end
    return signIn;
  },
  async () => {
    // @example connection.ts#1
    const seen = sessionSlot("deprecation-warned", () => new Set<string>());
    // @end
    return seen;
  },
  async () => {
    // @example request/slot.ts#1
    const started = requestSlot("started-at", () => Date.now());
    // @end
    return started;
  },
  async () => {
    // @example views/context-view.ts#1
    const view = extendContext(ctx, { uri: "file:///a.txt" });
    // @end
    return view;
  },
  async () => {
    // @example http/node.ts#1
    const { url } = await serve(server, { port: 3000 });
    console.error(`MCP server at ${url}`);
    // @end
  },
  async () => {
    // @example redis/bus.ts#1
    const bus = new RedisBus(createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }));
    const server = new McpServer({ name: "notes", version: "1.0.0", bus });
    // @end
    return server;
  },
  async () => {
    // @example redis/rate-store.ts#1
    const redis = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
    const rates = { methods: { "tools/call": { perMinute: 60 } }, store: new RedisRateStore(redis) };
    const server = new McpServer({ name: "search", version: "1.0.0", limits: { rates } });
    // @end
    return server;
  },
  async () => {
    // @example redis/session-store.ts#1
    const redis = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
    const bus = new RedisBus(redis);
    const server = new McpServer({ name: "notes", version: "1.0.0", bus });
    const sessions = new RedisSessionStore(redis, { bus });
    await serve(server, { port: 3000, sessions, eventStore: new RedisEventStore(redis) });
    // @end
  },
  async () => {
    // @example redis/task-store.ts#1
    const redis = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
    const tasks = { store: new RedisTaskStore(redis), ttlMs: 86_400_000 };
    const server = new McpServer({ name: "reports", version: "1.0.0", tasks });
    // @end
    return server;
  },
  async () => {
    const [issuer, resources] = ["https://mcp.example.com", ["https://mcp.example.com/mcp"]];
    const authenticate = (_request: Request) => ({ subject: "ada" });
    // @example redis/auth-store.ts#1
    const redis = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
    // every replica: the same issuer, a store of its own on the same prefix
    const store = new RedisAuthStore(redis);
    const authorizationServer = createAuthorizationServer({ issuer, resources, authenticate, store });
    // @end
    return authorizationServer;
  },
  async () => {
    // @example http/node-request.ts#1
    await serve(server, { port: 3000, limits: { key: remoteAddress } });
    // @end
  },
  async () => {
    // @example resources/params.ts#1
    type P = UriParams<"github://{owner}/{repo}/readme{?ref}">;
    //   ^? { owner: string; repo: string; ref?: string }
    // @end
    const p: P = { owner: "o", repo: "r" };
    return p;
  },
  async () => {
    // @example resources/path-safety.ts#1
    safeJoin("/srv/docs", "guides/../intro.md"); // "/srv/docs/intro.md"
    safeJoin("/srv/docs", "../etc/passwd"); // throws PathEscapeError
    // @end
  },
  async () => {
    // @example resources/router.ts#1
    const router = new TemplateRouter<string>();
    router.add(parseUriTemplate("files://{+path}"), "any file");
    router.add(parseUriTemplate("files://docs/{name}"), "a doc");
    router.match("files://docs/a.md")?.value; // "a doc"
    // @end
  },
  async () => {
    // @example resources/template.ts#1
    const t = parseUriTemplate("github://{owner}/{repo}/readme{?ref}");
    t.match("github://octo/hello/readme?ref=main"); // { owner: "octo", repo: "hello", ref: "main" }
    t.expand({ owner: "octo", repo: "hello" }); // "github://octo/hello/readme"
    // @end
  },
  async () => {
    // @example schema/schema.ts#1
    const input = compileSchema(z.object({ query: z.string() }), "input");
    input.jsonSchema; // { $schema: "…/2020-12/schema", type: "object", properties: { query: … }, … }
    await input.validate({ query: 1 }); // { ok: false, issues: [{ path: "query", message: "Invalid input: …" }] }
    // @end
  },
  async () => {
    // @example server.ts#1
    const server = new McpServer({ name: "bookshop", version: "1.0.0" });
    server.tool("hello", { run: () => "Hello!" });
    await serveStdio(server);
    // @end
  },
  async () => {
    // @example server.ts#2
    server.use({
      id: "com.example/echo",
      settings: (f) => (f.stateless ? {} : undefined),
      methods: { "echo/say": { run: (params) => ({ said: params.text }) } },
    });
    // @end
  },
  async () => {
    // @example server.ts#3
    server.tool("add", {
      input: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }) => String(a + b),
    });
    // @end
  },
  async () => {
    // @example server.ts#4
    server.resource("users://{id}", { read: ({ id }) => db.user(id) });
    // @end
  },
  async () => {
    // @example server.ts#5
    server.prompt("greet", { args: [{ name: "who", required: true }], get: ({ who }) => `Greet ${who}` });
    // @end
  },
  async () => {
    // @example server.ts#6
    server.resourcesAsTools();
    // @end
  },
  async () => {
    // @example server.ts#7
    server.skill("code-review", { description: "Reviews a diff", instructions: "# Steps\n…" });
    // @end
  },
  async () => {
    // @example server.ts#8
    server.app("show_chart", { ui: { uri: "ui://charts/bar.html", html }, run: () => "Chart shown" });
    // @end
  },
  () => {
    const weatherServer = new McpServer({ name: "weather", version: "1.0.0" });
    // @example server.ts#9
    const weather = server.mount("weather", weatherServer);
    weather.remove();
    // @end
  },
  async () => {
    // @example stdio.ts#1
    await serveStdio(server);
    // @end
  },
  async () => {
    // @example testing.ts#1
    const client = await connect(server);
    expect(await client.callTool("add", { a: 1, b: 2 })).toEqual({ content: [{ type: "text", text: "3" }] });
    // @end
  },
  () =>
    server.tool("report", {
      // @example content.ts#1
      run: async () => link("reports://2026-q3", "Q3 report", { mimeType: "application/pdf" }),
      // @end
    }),
];
