// Helpers of the crowd tests: clients on addresses of their own (every 127.0.0.<n> is loopback), as a
// `fetch` for the SDK clients, raw requests, silent sockets, and a real proxy hop that appends to
// X-Forwarded-For.
import { type Agent, createServer, Agent as HttpAgent, request as httpRequest, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { Readable } from "node:stream";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** The n-th address of the crowd (from 0): 127.1.0.2, 127.1.0.3, …, then 127.1.1.2, … (none in 127.0.0.0/24). */
export function crowdAddress(n: number): string {
  return `127.1.${Math.floor(n / 250)}.${(n % 250) + 2}`;
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/** A `fetch` whose connections leave from `localAddress`, over node:http (responses stream). */
export function boundFetch(localAddress: string): typeof fetch & { agent: Agent } {
  const agent = new HttpAgent({ keepAlive: true });
  const f = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const req = new Request(input, init);
    const body =
      req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.from(await req.arrayBuffer());
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => {
      headers[k] = v;
    });
    const send = (retry: boolean): Promise<Response> =>
      new Promise<Response>((resolve, reject) => {
        const r = httpRequest(req.url, { method: req.method, headers, localAddress, agent }, (res) => {
          const out = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            out.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          const status = res.statusCode!;
          if (NULL_BODY.has(status)) res.resume();
          const stream = NULL_BODY.has(status) ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
          resolve(new Response(stream, { status, headers: out }));
        });
        r.on("error", (error: NodeJS.ErrnoException) => {
          // a kept-alive socket the server closed as idle just as this request took it (the server's
          // keepAliveTimeout is 5 s, and a test that waits for a token to expire waits about as long):
          // the request never reached it, so it is sent again once, on a new socket (Node's own advice)
          if (retry && r.reusedSocket && error.code === "ECONNRESET") send(false).then(resolve, reject);
          else reject(error);
        });
        init?.signal?.addEventListener("abort", () => r.destroy(new Error("aborted")));
        r.end(body);
      });
    return send(true);
  };
  return Object.assign(f as typeof fetch, { agent });
}

/** A 2025-11-25 session of the SDK v1 client from `localAddress`. */
export async function v1From(url: string, localAddress: string): Promise<V1Client> {
  const client = new V1Client({ name: "crowd-v1", version: "1.0.0" });
  await client.connect(new V1Transport(new URL(url), { fetch: boundFetch(localAddress) }));
  return client;
}

/** The SDK v2 client pinned to 2026-07-28, from `localAddress`. */
export async function v2From(url: string, localAddress: string): Promise<V2Client> {
  const client = new V2Client(
    { name: "crowd-v2", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new V2Transport(new URL(url), { fetch: boundFetch(localAddress) }));
  return client;
}

/** A raw POST from `localAddress`: its status and body. */
export function postFrom(
  url: string,
  localAddress: string,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      url,
      {
        method: "POST",
        localAddress,
        agent: false,
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          ...headers,
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode!, body, headers: res.headers }));
      },
    );
    r.on("error", reject);
    r.end(JSON.stringify(message));
  });
}

/** Opens `n` sockets from `localAddress` that never send a byte; resolves once each is connected or closed. */
export async function silentSockets(url: string, localAddress: string, n: number): Promise<Socket[]> {
  const { hostname, port } = new URL(url);
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve) => {
          const s = connect({ host: hostname, port: Number(port), localAddress });
          s.on("error", () => {});
          s.once("connect", () => resolve(s));
          s.once("close", () => resolve(s));
        }),
    ),
  );
}

/**
 * A reverse proxy on 127.0.0.1 in front of `target`: it forwards every request, appending the
 * address it was connected from to X-Forwarded-For (as nginx's `$proxy_add_x_forwarded_for` does).
 */
export async function proxyTo(target: string): Promise<{ url: string; server: Server }> {
  const upstream = new URL(target);
  const agent = new HttpAgent({ keepAlive: true });
  const server = createServer((req, res) => {
    const headers = { ...req.headers };
    const seen = req.socket.remoteAddress!.replace(/^::ffff:/, "");
    const prior = req.headers["x-forwarded-for"];
    headers["x-forwarded-for"] = prior ? `${prior}, ${seen}` : seen;
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent },
      (up) => {
        res.writeHead(up.statusCode!, up.headers);
        up.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    res.on("close", () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}${upstream.pathname}`, server };
}
