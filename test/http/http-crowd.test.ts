// A public server without sign-in serves a crowd: with no option set, serve() tells anonymous callers
// apart by address (each client here binds an address of its own in 127.0.0.0/8), so one address is
// held to its share while thousands are served; behind a trusted proxy, the client it names.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { fileURLToPath } from "node:url";
import type { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createHttpHandler, withPeer } from "../../src/http/index.js";
import { type ServeOptions, serve, toNodeListener } from "../../src/http/node.js";
import type { LimitsOptions } from "../../src/index.js";
import {
  boundFetch,
  crowdAddress,
  postFrom,
  proxyTo,
  silentSockets,
  v1From,
  v2From,
} from "../crowd-helpers.js";
import { governed, META } from "../governor-helpers.js";
import { telemetry } from "../otel-helpers.js";

const closers: (() => unknown)[] = [];

/** A rate whose bucket holds `burst` and refills one an hour: no test run, however slow, sees a token come back. */
const HOURLY = (burst: number) => ({ perMinute: 1 / 60, burst });

/**
 * Holds the clock still for the rest of the test (the anonymous session buckets read `Date.now`, and
 * refill one a second by default): what a test asserts of a rate then holds on any machine's speed.
 */
function stillClock() {
  vi.useFakeTimers({ toFake: ["Date"] });
  closers.push(() => vi.useRealTimers());
}
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function crowdServer(options: Partial<ServeOptions> = {}, limits?: LimitsOptions) {
  const g = governed(limits);
  g.server.tool("whoami", { run: (_a, ctx) => ctx.clientAddress ?? "unknown" });
  const http = await serve(g.server, { port: 0, ...options });
  closers.push(() => http.close());
  return { ...g, http };
}

const call = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {}, _meta: META },
});
const modern = (name: string) => ({
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": name,
});
const init = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** A raw 2026-07-28 listen from `localAddress`: its status once the answer's head is in, and how to end it. */
async function listenFrom(url: string, localAddress: string, id: number) {
  const f = boundFetch(localAddress);
  const aborter = new AbortController();
  const res = await f(url, {
    method: "POST",
    signal: aborter.signal,
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "subscriptions/listen",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true }, _meta: META },
    }),
  });
  const close = () => {
    aborter.abort();
    f.agent.destroy();
  };
  closers.push(close);
  const body = res.status === 200 ? "" : await res.text();
  return { status: res.status, body, close };
}

describe("anonymous callers are told apart by address, with no option set", () => {
  it("20 addresses each hold a listen through the SDK v2 client (the 17th was refused 429 as someone else's share)", async () => {
    const { http } = await crowdServer();
    const heard: string[] = [];
    for (let n = 0; n < 20; n++) {
      const client = await v2From(http.url, crowdAddress(n));
      closers.push(() => client.close());
      const sub = await client.listen({ toolsListChanged: true });
      expect(sub.honoredFilter).toEqual({ toolsListChanged: true });
      heard.push(crowdAddress(n));
    }
    expect(heard).toHaveLength(20);
  });

  it("one greedy address is held to its 16 listens (429) and a newcomer from another address is served (200)", async () => {
    const { http } = await crowdServer();
    for (let i = 0; i < 16; i++) expect((await listenFrom(http.url, "127.0.0.30", i + 1)).status).toBe(200);
    const greedy = await listenFrom(http.url, "127.0.0.30", 17);
    expect(greedy.status).toBe(429);
    expect(JSON.parse(greedy.body)).toEqual({
      jsonrpc: "2.0",
      id: 17,
      error: {
        code: -32000,
        message: "Too Many Requests: this caller holds its share of listen streams (16)",
        data: { limit: "listens", scope: "principal", max: 16, retryAfterMs: 5000 },
      },
    });
    expect((await listenFrom(http.url, "127.0.0.31", 1)).status).toBe(200);
  });

  it("120 users each hold an idle 2025 session (SDK v1): the first is still served (it was 404 past the 100th)", async () => {
    const { http } = await crowdServer();
    const clients: V1Client[] = [];
    for (let n = 0; n < 120; n++) {
      const client = await v1From(http.url, crowdAddress(n));
      closers.push(() => client.close());
      clients.push(client);
    }
    expect(http.handler.sessionCount).toBe(120);
    const first = await clients[0]!.callTool({ name: "whoami", arguments: {} });
    expect(first.content).toEqual([{ type: "text", text: crowdAddress(0) }]);
    // one address is still held to its share: its 33rd session ends its least recently used idle one
    const sids: string[] = [];
    for (let i = 0; i < 33; i++) {
      const res = await postFrom(http.url, "127.0.0.40", init);
      expect(res.status).toBe(200);
      sids.push(res.headers["mcp-session-id"] as string);
    }
    const gone = await postFrom(
      http.url,
      "127.0.0.40",
      { jsonrpc: "2.0", id: 1, method: "ping" },
      {
        "mcp-session-id": sids[0]!,
        "mcp-protocol-version": "2025-11-25",
      },
    );
    expect(gone.status).toBe(404);
    const kept = await postFrom(
      http.url,
      "127.0.0.40",
      { jsonrpc: "2.0", id: 1, method: "ping" },
      {
        "mcp-session-id": sids[32]!,
        "mcp-protocol-version": "2025-11-25",
      },
    );
    expect(kept.status).toBe(200);
    expect(http.handler.sessionCount).toBe(152);
  });

  it("anonymous sessions are created at a rate per address, then in all", async () => {
    stillClock();
    const { http } = await crowdServer({ anonymousSessionsPerMinute: { perCaller: 2, total: 4 } });
    expect((await postFrom(http.url, "127.0.0.50", init)).status).toBe(200);
    expect((await postFrom(http.url, "127.0.0.50", init)).status).toBe(200);
    const spent = await postFrom(http.url, "127.0.0.50", init);
    expect(spent.status).toBe(429);
    expect(Number(spent.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // another address has a bucket of its own (it was refused: one bucket for every anonymous caller)
    expect((await postFrom(http.url, "127.0.0.51", init)).status).toBe(200);
    expect((await postFrom(http.url, "127.0.0.52", init)).status).toBe(200);
    // the total holds all of them
    expect((await postFrom(http.url, "127.0.0.53", init)).status).toBe(429);
  });

  it("by default one address creates 600 sessions a minute, and another is not refused for it", async () => {
    stillClock();
    const { http } = await crowdServer();
    for (let i = 0; i < 600; i++) expect((await postFrom(http.url, "127.0.0.60", init)).status).toBe(200);
    expect((await postFrom(http.url, "127.0.0.60", init)).status).toBe(429);
    expect((await postFrom(http.url, "127.0.0.61", init)).status).toBe(200);
  });

  it("one address with silent sockets holds at most maxConnectionsPerAddress: a newcomer still connects", async () => {
    const { http } = await crowdServer({ maxConnections: 300 });
    const sockets: Socket[] = await silentSockets(http.url, "127.0.0.70", 300);
    closers.push(() => {
      for (const s of sockets) s.destroy();
    });
    // the server closes each one past 256 as soon as it is accepted
    await expect.poll(() => sockets.filter((s) => s.destroyed).length, { timeout: 10_000 }).toBe(44);
    const newcomer = await postFrom(http.url, "127.0.0.71", call(1, "whoami"), modern("whoami"));
    expect(newcomer.status).toBe(200);
    expect(JSON.parse(newcomer.body).result.content).toEqual([{ type: "text", text: "127.0.0.71" }]);
  });

  it("toNodeListener on a server of your own keys them by address too", async () => {
    const { server } = governed({ rates: { methods: { "tools/call": HOURLY(1) } } });
    server.tool("whoami", { run: (_a, ctx) => ctx.clientAddress ?? "unknown" });
    const handler = createHttpHandler(server);
    const own = createServer(toNodeListener(handler));
    await new Promise<void>((r) => own.listen(0, "127.0.0.1", r));
    closers.push(
      () => new Promise((r) => own.close(r)),
      () => own.closeAllConnections(),
      () => handler.close(),
    );
    const url = `http://127.0.0.1:${(own.address() as AddressInfo).port}/mcp`;
    const whoami = async (from: string, id: number) => {
      const res = await postFrom(url, from, call(id, "whoami"), modern("whoami"));
      return res.status === 200 ? JSON.parse(res.body).result.content[0].text : res.status;
    };
    expect(await whoami("127.0.0.85", 1)).toBe("127.0.0.85");
    expect(await whoami("127.0.0.86", 2)).toBe("127.0.0.86");
    expect(await whoami("127.0.0.85", 3)).toBe(429);
  });

  it("limits.key still decides when given: every address the one key says", async () => {
    const listens = { listens: { perPrincipal: 1 } };
    const { http } = await crowdServer({ limits: { key: () => "everyone" } }, listens);
    expect((await listenFrom(http.url, "127.0.0.80", 1)).status).toBe(200);
    expect((await listenFrom(http.url, "127.0.0.81", 1)).status).toBe(429);
    const { http: own } = await crowdServer({}, listens);
    expect((await listenFrom(own.url, "127.0.0.80", 1)).status).toBe(200);
    expect((await listenFrom(own.url, "127.0.0.81", 1)).status).toBe(200);
  });
});

describe("behind a trusted proxy", () => {
  const rates = { methods: { "tools/call": HOURLY(2) } };

  it("the client the proxy appended is the caller, in ctx and the limits; what a client forges is never read", async () => {
    const { http } = await crowdServer({ trustProxy: ["127.0.0.1"] }, { rates });
    const proxy = await proxyTo(http.url);
    closers.push(
      () => new Promise((r) => proxy.server.close(r)),
      () => proxy.server.closeAllConnections(),
    );
    const whoami = async (from: string, id: number, headers: Record<string, string> = {}) => {
      const res = await postFrom(proxy.url, from, call(id, "whoami"), { ...modern("whoami"), ...headers });
      return res.status === 200 ? JSON.parse(res.body).result.content[0].text : res.status;
    };
    expect(await whoami("127.0.0.90", 1)).toBe("127.0.0.90");
    expect(await whoami("127.0.0.91", 2)).toBe("127.0.0.91");
    // a forged leftmost entry is ignored: the proxy appended the real address after it
    expect(await whoami("127.0.0.92", 3, { "x-forwarded-for": "6.6.6.6" })).toBe("127.0.0.92");
    expect(await whoami("127.0.0.92", 4, { "x-forwarded-for": "127.0.0.90, garbage" })).toBe("127.0.0.92");
    // ...and the forger spent its own bucket, not the one it named
    expect(await whoami("127.0.0.92", 5, { "x-forwarded-for": "127.0.0.91" })).toBe(429);
    expect(await whoami("127.0.0.90", 6)).toBe("127.0.0.90");
    expect(await whoami("127.0.0.90", 7)).toBe(429);
  });

  it("a trusted proxy's connections are not held to maxConnectionsPerAddress; a direct peer's are", async () => {
    const { http } = await crowdServer({ trustProxy: ["127.0.0.1"], maxConnectionsPerAddress: 2 });
    const proxy = await proxyTo(http.url);
    closers.push(
      () => new Promise((r) => proxy.server.close(r)),
      () => proxy.server.closeAllConnections(),
    );
    // five clients hold a listen open through the proxy: five connections from 127.0.0.1 at once
    for (let n = 0; n < 5; n++)
      expect((await listenFrom(proxy.url, `127.0.0.${100 + n}`, 1)).status).toBe(200);
    // a peer that is no trusted proxy holds two, and its third connection is closed as it is accepted
    expect((await listenFrom(http.url, "127.0.0.110", 1)).status).toBe(200);
    expect((await listenFrom(http.url, "127.0.0.110", 2)).status).toBe(200);
    await expect(listenFrom(http.url, "127.0.0.110", 3)).rejects.toThrow();
    // ...while another address, and the proxy's sixth, still connect
    expect((await listenFrom(http.url, "127.0.0.111", 1)).status).toBe(200);
    expect((await listenFrom(proxy.url, "127.0.0.105", 1)).status).toBe(200);
  });

  it("without trustProxy, every client behind the proxy is the proxy's address (one caller), and the log says why", async () => {
    const lines: string[] = [];
    const { http } = await crowdServer({ log: (l) => lines.push(l) }, { rates });
    const proxy = await proxyTo(http.url);
    closers.push(
      () => new Promise((r) => proxy.server.close(r)),
      () => proxy.server.closeAllConnections(),
    );
    const status = async (from: string, id: number) =>
      (await postFrom(proxy.url, from, call(id, "whoami"), modern("whoami"))).status;
    expect(await status("127.0.0.90", 1)).toBe(200);
    expect(await status("127.0.0.91", 2)).toBe(200);
    expect(await status("127.0.0.92", 3)).toBe(429);
    expect(lines).toEqual([
      expect.stringMatching(/^picomcp\/http: 127\.0\.0\.1 sends X-Forwarded-For but trustProxy/),
    ]);
  });

  it("a client that connects directly cannot name itself: X-Forwarded-For from an untrusted peer is ignored", async () => {
    const { http } = await crowdServer({ trustProxy: ["10.0.0.0/8"] });
    const res = await postFrom(http.url, "127.0.0.95", call(1, "whoami"), {
      ...modern("whoami"),
      "x-forwarded-for": "203.0.113.9",
    });
    expect(JSON.parse(res.body).result.content).toEqual([{ type: "text", text: "127.0.0.95" }]);
  });

  it("telemetry records the client the proxy named as client.address", async () => {
    const g = governed();
    const t = telemetry(g.server);
    const http = await serve(g.server, { port: 0, trustProxy: 1 });
    closers.push(() => http.close());
    const proxy = await proxyTo(http.url);
    closers.push(
      () => new Promise((r) => proxy.server.close(r)),
      () => proxy.server.closeAllConnections(),
    );
    const res = await postFrom(proxy.url, "127.0.0.96", call(1, "echo"), {
      ...modern("echo"),
      "x-forwarded-for": "6.6.6.6",
    });
    expect(res.status).toBe(200);
    await expect.poll(() => t.spans().length).toBeGreaterThan(0);
    const span = t.spans().find((s) => s.name.startsWith("tools/call"))!;
    expect(span.attributes["client.address"]).toBe("127.0.0.96");
    expect(span.attributes["client.port"]).toBeUndefined();
  });
});

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Starts test/runtimes/crowd-server.js under `bin`; its URL once it listens. */
async function runtimeServer(bin: string, args: string[]): Promise<string> {
  const child = spawn(bin, [...args, "test/runtimes/crowd-server.js"], {
    cwd: root,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  closers.push(() => child.kill());
  let out = "";
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (c) => {
      out += c;
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on("data", (c) => {
      out += c;
    });
    child.on("exit", (code) => reject(new Error(`${bin} exited (${code}): ${out}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

describe("other runtimes: withPeer, and IPv6 by prefix", () => {
  it.each([
    ["Bun (server.requestIP)", `${root}node_modules/.bin/bun`, []],
    [
      "Deno (info.remoteAddr)",
      `${root}node_modules/.bin/deno`,
      ["run", "--allow-net=127.0.0.1", "--allow-read=.", "--no-prompt"],
    ],
  ])(
    "%s: each address is a caller of its own, and ctx.clientAddress names it",
    async (_name, bin, args) => {
      const url = await runtimeServer(bin, args as string[]);
      const whoami = async (from: string, id: number) => {
        const res = await postFrom(url, from, call(id, "whoami"), modern("whoami"));
        return res.status === 200 ? JSON.parse(res.body).result.content[0].text : res.status;
      };
      expect(await whoami("127.0.0.2", 1)).toBe("127.0.0.2");
      expect(await whoami("127.0.0.3", 2)).toBe("127.0.0.3");
      expect(await whoami("127.0.0.2", 3)).toBe(429);
    },
    30_000,
  );

  it("Workers: the CF-Connecting-IP that Cloudflare sets names the caller (the recipe's line)", async () => {
    const { server } = governed({ rates: { methods: { "tools/call": HOURLY(1) } } });
    server.tool("whoami", { run: (_a, ctx) => ctx.clientAddress ?? "unknown" });
    const mcp = createHttpHandler(server, { sessions: false });
    closers.push(() => mcp.close());
    const worker = { fetch: (req: Request) => mcp(withPeer(req, req.headers.get("cf-connecting-ip"))) };
    const from = async (ip: string, id: number) => {
      const r = req(id);
      const res = await worker.fetch(
        new Request(r, { headers: { ...Object.fromEntries(r.headers), "cf-connecting-ip": ip } }),
      );
      return res.status === 200 ? (await res.json()).result.content[0].text : res.status;
    };
    expect(await from("198.51.100.7", 1)).toBe("198.51.100.7");
    expect(await from("2001:db8:5:6::9", 2)).toBe("2001:db8:5:6::9");
    expect(await from("2001:db8:5:6::a", 3)).toBe(429);
    expect(await from("198.51.100.7", 4)).toBe(429);
  });

  const req = (id: number) =>
    new Request("http://127.0.0.1:3000/mcp", {
      method: "POST",
      headers: {
        host: "127.0.0.1:3000",
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        ...modern("whoami"),
      },
      body: JSON.stringify(call(id, "whoami")),
    });

  it("an IPv6 crowd: one /64 is one caller, each /64 a caller of its own; IPv4-mapped is IPv4", async () => {
    const { server } = governed({ rates: { methods: { "tools/call": HOURLY(1) } } });
    server.tool("whoami", { run: (_a, ctx) => ctx.clientAddress ?? "unknown" });
    const handler = createHttpHandler(server);
    closers.push(() => handler.close());
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++)
      statuses.push((await handler(withPeer(req(i), `2001:db8:aa:1::${(i + 1).toString(16)}`))).status);
    expect(statuses).toEqual([200, ...new Array(19).fill(429)]);
    for (let i = 0; i < 20; i++)
      expect((await handler(withPeer(req(i), `2001:db8:bb:${i.toString(16)}::1`))).status).toBe(200);
    expect((await handler(withPeer(req(1), "::ffff:192.0.2.7"))).status).toBe(200);
    expect((await handler(withPeer(req(2), "192.0.2.7"))).status).toBe(429);
    const named = await handler(withPeer(req(3), { address: "192.0.2.8", port: 5555 }));
    expect((await named.json()).result.content).toEqual([{ type: "text", text: "192.0.2.8" }]);
    // a plain Request names no peer: the one shared anonymous caller
    expect((await handler(req(4))).status).toBe(200);
    expect((await handler(req(5))).status).toBe(429);
  });

  it("trustProxy on the fetch handler: repeated headers read as one list, Forwarded when told, garbage falls back", async () => {
    const { server } = governed();
    server.tool("whoami", { run: (_a, ctx) => ctx.clientAddress ?? "unknown" });
    const xff = createHttpHandler(server, { trustProxy: ["10.0.0.0/8"] });
    const fwd = createHttpHandler(server, { trustProxy: { hops: 1, header: "forwarded" } });
    closers.push(
      () => xff.close(),
      () => fwd.close(),
    );
    const whoami = async (handler: typeof xff, peer: string, headers: [string, string][]) => {
      const r = req(1);
      const h = new Headers(r.headers);
      for (const [k, v] of headers) h.append(k, v);
      const res = await handler(withPeer(new Request(r, { headers: h }), peer));
      return (await res.json()).result.content[0].text;
    };
    const two: [string, string][] = [
      ["x-forwarded-for", "6.6.6.6, 198.51.100.1"],
      ["x-forwarded-for", "10.1.1.1"],
    ];
    expect(await whoami(xff, "10.0.0.1", two)).toBe("198.51.100.1");
    expect(await whoami(xff, "::ffff:10.0.0.1", [["x-forwarded-for", "%%%"]])).toBe("10.0.0.1");
    // X-Forwarded-For is not read when the proxies write Forwarded, and a forged Forwarded element is left of theirs
    const both: [string, string][] = [
      ["x-forwarded-for", "6.6.6.6"],
      ["forwarded", 'for="_forged"'],
      ["forwarded", 'for="[2001:db8::7]:4711";proto=https'],
    ];
    expect(await whoami(fwd, "10.0.0.1", both)).toBe("2001:db8::7");
    expect(await whoami(fwd, "10.0.0.1", [["forwarded", "for=unknown"]])).toBe("10.0.0.1");
    expect(await whoami(fwd, "10.0.0.1", [])).toBe("10.0.0.1");
  });

  it("without trustProxy, an IPv4-mapped peer (a dual-stack listener's) is its IPv4 address in ctx and telemetry", async () => {
    const g = governed();
    g.server.tool("whoami", { run: (_a, ctx) => ctx.clientAddress ?? "unknown" });
    const t = telemetry(g.server);
    const handler = createHttpHandler(g.server);
    closers.push(() => handler.close());
    const res = await handler(withPeer(req(1), { address: "::ffff:192.0.2.9", port: 4711 }));
    expect((await res.json()).result.content).toEqual([{ type: "text", text: "192.0.2.9" }]);
    await expect.poll(() => t.spans().length).toBeGreaterThan(0);
    const span = t.spans().find((s) => s.name.startsWith("tools/call"))!;
    expect(span.attributes["client.address"]).toBe("192.0.2.9");
    expect(span.attributes["client.port"]).toBe(4711);
  });

  it("a local peer that sends X-Forwarded-For or Forwarded without trustProxy is told to the log, once per handler", async () => {
    const { server } = governed();
    const from = (peer: string, headers: [string, string][] = []) => {
      const r = req(1);
      const h = new Headers(r.headers);
      for (const [k, v] of headers) h.append(k, v);
      return withPeer(new Request(r, { headers: h }), peer);
    };
    const handlerLogging = (options: Parameters<typeof createHttpHandler>[1] = {}) => {
      const lines: string[] = [];
      const handler = createHttpHandler(server, { ...options, log: (l) => lines.push(l) });
      closers.push(() => handler.close());
      return { handler, lines };
    };
    const a = handlerLogging();
    expect((await a.handler(from("::ffff:127.0.0.1"))).status).toBe(200);
    expect((await a.handler(from("203.0.113.5", [["x-forwarded-for", "1.2.3.4"]]))).status).toBe(200);
    expect(a.lines).toEqual([]);
    expect((await a.handler(from("::ffff:10.1.2.3", [["x-forwarded-for", "198.51.100.1"]]))).status).toBe(
      200,
    );
    expect((await a.handler(from("127.0.0.1", [["forwarded", "for=198.51.100.2"]]))).status).toBe(200);
    expect(a.lines).toEqual([
      "picomcp/http: 10.1.2.3 sends X-Forwarded-For but trustProxy is not set, so every client behind it is one caller (10.1.2.3); if it is your proxy, set the trustProxy option of the HTTP handler (or of serve) to its hops or addresses",
    ]);
    const b = handlerLogging();
    expect((await b.handler(from("::1", [["forwarded", "for=198.51.100.2"]]))).status).toBe(200);
    expect(b.lines).toEqual([
      expect.stringMatching(/^picomcp\/http: ::1 sends Forwarded but trustProxy is not set/),
    ]);
    // with trustProxy set, nothing to say
    const c = handlerLogging({ trustProxy: ["10.0.0.0/8"] });
    expect((await c.handler(from("127.0.0.1", [["x-forwarded-for", "198.51.100.1"]]))).status).toBe(200);
    expect(c.lines).toEqual([]);
  });

  it("limits.ipv6Prefix groups more or less of an address", async () => {
    const { server } = governed({ rates: { methods: { "tools/call": HOURLY(1) } } });
    const handler = createHttpHandler(server, { limits: { ipv6Prefix: 48 } });
    closers.push(() => handler.close());
    expect((await handler(withPeer(req(1), "2001:db8:aa:1::1"))).status).toBe(200);
    expect((await handler(withPeer(req(2), "2001:db8:aa:2::1"))).status).toBe(429);
    expect((await handler(withPeer(req(3), "2001:db8:ab:1::1"))).status).toBe(200);
    expect(() => createHttpHandler(server, { limits: { ipv6Prefix: 0 } })).toThrow(/ipv6Prefix/);
  });
});
