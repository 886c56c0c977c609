// Abuse over real sockets on 127.0.0.1: slow readers, disconnects, huge and malformed bodies, abandoned
// sessions. The server must keep serving a well-behaved client, answer each with the right status, and
// give its memory back once abandoned sessions expire.
import { request as httpRequest } from "node:http";
import { type Socket, connect as tcpConnect } from "node:net";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type NodeServer, serve } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";
import { call, initBody } from "../http-helpers.js";

const HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };
let http: NodeServer;
let server: McpServer;
const seen = { cancelled: 0, finished: 0 };

beforeAll(async () => {
  server = new McpServer({ name: "abuse", version: "1.0.0", onError: () => {} });
  server.tool("echo", { description: "echo", run: (args: { text?: string }) => args.text ?? "ok" });
  server.tool("stream", {
    description: "logs every 10 ms for 200 ms",
    run: async (_a, ctx) => {
      for (let i = 0; i < 20 && !ctx.signal.aborted; i++) {
        ctx.log("info", `tick ${i}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      if (ctx.signal.aborted) seen.cancelled++;
      else seen.finished++;
      return "streamed";
    },
  });
  server.tool("blip", {
    description: "logs once",
    run: (_a, ctx) => {
      ctx.log("info", "blip");
      return "blipped";
    },
  });
  server.resource("note://x", { description: "x", read: () => "x" });
  http = await serve(server, { port: 0, maxBufferedBytes: 64 * 1024, keepAliveMs: 100 });
});
afterAll(() => http.close());

async function post(body: unknown, headers: { [k: string]: string } = {}, url = http.url) {
  return fetch(url, { method: "POST", headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) });
}
async function session(url = http.url): Promise<string> {
  const res = await post(initBody(), {}, url);
  await res.text();
  const sid = res.headers.get("mcp-session-id")!;
  const ack = await post(
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { "mcp-session-id": sid },
    url,
  );
  await ack.text();
  return sid;
}
/** A well-behaved client's round trip; fails the test if the server stopped serving. */
async function healthy(): Promise<number> {
  const t = performance.now();
  const sid = await session();
  const res = await post(call(1, "echo", { text: "still here" }), { "mcp-session-id": sid });
  expect(await res.json()).toEqual({
    jsonrpc: "2.0",
    id: 1,
    result: { content: [{ type: "text", text: "still here" }] },
  });
  return performance.now() - t;
}
/** Sends raw bytes on a fresh socket and resolves with the status line's code. */
function raw(
  text: string | Buffer,
  opts: { end?: boolean } = {},
): Promise<{ status: number; body: string; socket: Socket }> {
  const url = new URL(http.url);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(url.port), url.hostname);
    let data = "";
    socket.on("data", (c) => {
      data += c.toString("latin1");
      const head = data.indexOf("\r\n\r\n");
      if (head !== -1) resolve({ status: Number(data.slice(9, 12)), body: data.slice(head + 4), socket });
    });
    socket.on("error", reject);
    socket.write(text);
    if (opts.end) socket.end();
  });
}

// a test that holds Date still gives it back even when it fails
afterEach(() => {
  vi.useRealTimers();
});

describe("abuse over real sockets", () => {
  it("a client that never reads its GET stream is dropped; others are served meanwhile", async () => {
    const sid = await session();
    const uri = `note://x?${"p".repeat(4096)}`; // 4 KiB per notification
    await (
      await post(
        { jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri } },
        { "mcp-session-id": sid },
      )
    ).text();
    const url = new URL(http.url);
    const { status, socket } = await raw(
      `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid}\r\n\r\n`,
    );
    expect(status).toBe(200);
    socket.pause(); // never read again
    const before = process.memoryUsage().heapUsed;
    // 64 MiB of notifications: far more than socket buffers hold
    for (let round = 0; round < 64; round++) {
      for (let i = 0; i < 256; i++) server.resourceUpdated(uri);
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(await healthy()).toBeLessThan(1000);
    // dropped: the session accepts a new GET stream instead of 409
    const again = await fetch(http.url, { headers: { accept: "text/event-stream", "mcp-session-id": sid } });
    expect(again.status).toBe(200);
    await again.body!.cancel();
    socket.destroy();
    const grown = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
    console.log(
      `slow reader: 64 MiB of notifications for a client that never reads; heap grew ${grown.toFixed(1)} MiB`,
    );
  });

  it("a client that disconnects mid-stream: its request runs on, and the events wait for it", async () => {
    const sid = await session();
    const ctl = new AbortController();
    const res = await fetch(http.url, {
      method: "POST",
      headers: { ...HEADERS, "mcp-session-id": sid },
      body: JSON.stringify(call(3, "stream")),
      signal: ctl.signal,
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("tick 1")) text += (await reader.read()).value;
    ctl.abort();
    const priming = /^id: (\S+)/m.exec(text)![1]!;
    expect(await healthy()).toBeLessThan(1000);
    // the request runs on to its end with its client gone (the test's timeout bounds the wait)
    while (seen.finished < 1) await new Promise((r) => setTimeout(r, 10));
    expect(seen.finished).toBe(1);
    expect(seen.cancelled).toBe(0);
    const resumed = await fetch(http.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sid, "last-event-id": priming },
    });
    const all = await resumed.text();
    expect(all).toContain("tick 19");
    expect(all).toContain('"result":{"content":[{"type":"text","text":"streamed"}]}');
  });

  it("a huge body gets 413 without being read: declared, and chunked", async () => {
    const declared = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        http.url,
        { method: "POST", headers: { ...HEADERS, "content-length": 512 * 1024 * 1024 } },
        (res) => {
          resolve(res.statusCode!);
          res.resume();
          req.destroy();
        },
      );
      req.on("error", reject);
      req.write("x".repeat(1024));
    });
    expect(declared).toBe(413);
    let sent = 0;
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(http.url, { method: "POST", headers: HEADERS }, (res) => {
        resolve(res.statusCode!);
        res.resume();
        req.destroy();
      });
      req.on("error", () => {});
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (sent < 256 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
        req.end();
      };
      pump();
      setTimeout(() => reject(new Error("no answer")), 5000);
    });
    expect(chunked).toBe(413);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
    expect(await healthy()).toBeLessThan(1000);
  });

  it("malformed bodies get 400 with a JSON-RPC error; the server goes on", async () => {
    const bodies: (string | Buffer)[] = [
      "{",
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":',
      Buffer.from([0x7b, 0xc3, 0x28, 0x7d]),
      "[".repeat(100_000) + "]".repeat(100_000),
      "null",
    ];
    for (const body of bodies) {
      const res = await fetch(http.url, { method: "POST", headers: HEADERS, body: body as BodyInit });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBeLessThan(-31999);
    }
    // a body shorter than its Content-Length, then the client goes away
    const url = new URL(http.url);
    const head = `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc"`;
    const socket = tcpConnect(Number(url.port), url.hostname, () => socket.end(head));
    socket.resume();
    await new Promise((r) => socket.on("close", r));
    // garbage that is not HTTP at all
    const junk = await raw("\x00\x01\x02 not http\r\n\r\n");
    expect(junk.status).toBe(400);
    junk.socket.destroy();
    expect(await healthy()).toBeLessThan(1000);
  });

  it("1,000 sessions opened and abandoned expire, and the heap returns to its baseline", async () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    const heap = async () => {
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((r) => setTimeout(r, 10));
      }
      return process.memoryUsage().heapUsed;
    };
    // one anonymous caller opens them all: its share of sessions and its rate must hold 1,000
    const limits = { sessions: { perPrincipal: 1000 } };
    const own = await serve(server, {
      port: 0,
      sessionIdleMs: 12_000,
      limits,
      anonymousSessionsPerMinute: { perCaller: 1000 },
      maxConnectionsPerAddress: 1000,
    });
    // Sessions age by Date: it is held still while the 1,000 open (on a loaded machine that can take
    // longer than sessionIdleMs), then moved past it; the sweep runs on its real timer.
    vi.useFakeTimers({ toFake: ["Date"] });
    const baseline = await heap();
    const started = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < 1000; i += 100) {
      const batch = await Promise.all(
        Array.from({ length: 100 }, async () => {
          const init = await post(initBody(), {}, own.url);
          await init.text();
          const sid = init.headers.get("mcp-session-id")!;
          const res = await post(call(1, "blip"), { "mcp-session-id": sid }, own.url);
          expect(await res.text()).toContain("blipped");
          return sid;
        }),
      );
      ids.push(...batch);
    }
    const opening = performance.now() - started;
    expect(own.handler.sessionCount).toBe(1000);
    const peak = await heap();
    const latency = await healthy();
    vi.setSystemTime(Date.now() + 12_001);
    const expiring = performance.now();
    while (own.handler.sessionCount > 0 && performance.now() - expiring < 40_000) {
      await new Promise((r) => setTimeout(r, 100));
    }
    vi.useRealTimers();
    expect(own.handler.sessionCount).toBe(0);
    // what the sessions held is let go of at once; what the 2,000 requests left (the client's pooled
    // sockets, until their keep-alive ends) goes some seconds later: wait for the heap, not for a time
    const bound = baseline + (peak - baseline) / 4 + 1024 * 1024;
    let after = await heap();
    const settling = performance.now();
    while (after >= bound && performance.now() - settling < 30_000) {
      await new Promise((r) => setTimeout(r, 250));
      after = await heap();
    }
    const stale = await post(call(1, "echo"), { "mcp-session-id": ids[0]! }, own.url);
    expect(stale.status).toBe(404);
    await own.close();
    const mib = (n: number) => (n / 1024 / 1024).toFixed(2);
    console.log(
      `1,000 abandoned sessions (opened in ${opening.toFixed(0)} ms): baseline ${mib(baseline)} MiB, with sessions ${mib(peak)} MiB (+${mib(peak - baseline)}), ` +
        `after expiry ${mib(after)} MiB (${after >= baseline ? "+" : ""}${mib(after - baseline)}); a healthy round trip meanwhile took ${latency.toFixed(0)} ms`,
    );
    expect(peak - baseline).toBeGreaterThan(0);
    expect(after).toBeLessThan(bound);
  }, 180_000);
});
