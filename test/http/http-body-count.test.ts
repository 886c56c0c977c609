// Bodies still arriving count against their caller's share of `requestBytes` and the total, from their
// declared length (or as their bytes come, chunked) before a byte is buffered: over real sockets on
// 127.0.0.x through the node:http bridge, and through the web-standard handler with streams that stall.
import { type ChildProcess, fork } from "node:child_process";
import { type Socket, connect as tcpConnect } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler } from "../../src/http/index.js";
import { remoteAddress, type ServeOptions, serve } from "../../src/http/node.js";
import { McpServer, MemoryCountStore } from "../../src/index.js";
import { POST_HEADERS, URL_ } from "../http-helpers.js";
import { meta, V } from "../modern-helpers.js";

const MiB = 1024 * 1024;
/** How long a condition may take on a loaded machine (a test waits for it, never for a time). */
const WAIT = { timeout: 30_000 };
const running: (() => unknown)[] = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
});

function mcp() {
  const server = new McpServer({ name: "bodies", version: "1.0.0", onError: () => {} });
  server.tool("ping", { run: () => "pong" });
  return server;
}

async function start(options: Partial<ServeOptions> = {}) {
  const store = new MemoryCountStore();
  const http = await serve(mcp(), {
    port: 0,
    sessions: false,
    ...options,
    limits: { store, ...options.limits },
  });
  running.push(() => http.close());
  return { http, store, port: Number(new URL(http.url).port) };
}

const HEAD =
  "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

/** A raw client from `from`: what it received, whether the server closed it, and how many bytes it sent. */
function client(port: number, from = "127.0.0.1") {
  const socket: Socket = tcpConnect({ port, host: "127.0.0.1", localAddress: from });
  const seen = { data: "", closed: false };
  socket.on("data", (c) => {
    seen.data += c.toString("latin1");
  });
  socket.on("error", () => {});
  socket.once("close", () => {
    seen.closed = true;
  });
  running.push(() => socket.destroy());
  return { socket, seen };
}

/** A POST declaring `declared` bytes that sends only `sent` of them (JSON whitespace), then stalls. */
function stalled(port: number, declared: number, sent: number, from?: string) {
  const c = client(port, from);
  c.socket.write(`${HEAD}Content-Length: ${declared}\r\n\r\n`);
  c.socket.write(Buffer.alloc(sent, 0x20));
  return c;
}

/** A whole POST of a ping padded with whitespace to `size` bytes. */
function padded(port: number, size: number, from?: string) {
  const c = client(port, from);
  c.socket.write(`${HEAD}Content-Length: ${size}\r\n\r\n${PING}`);
  c.socket.write(Buffer.alloc(size - PING.length, 0x20));
  return c;
}

/** Status, lower-cased headers and parsed body of a raw HTTP/1.1 answer. */
function parse(data: string) {
  const split = data.indexOf("\r\n\r\n");
  const [line, ...rest] = data.slice(0, split).split("\r\n");
  const headers: { [k: string]: string } = {};
  for (const h of rest)
    headers[h.slice(0, h.indexOf(":")).toLowerCase()] = h.slice(h.indexOf(":") + 1).trim();
  return { status: Number(line!.split(" ")[1]), headers, body: JSON.parse(data.slice(split + 4)) };
}

const refusal = (scope: "principal" | "server", max: number) => ({
  jsonrpc: "2.0",
  error: {
    code: -32000,
    message:
      scope === "principal"
        ? `Too Many Requests: this caller holds its share of bytes of request bodies in flight (${max})`
        : `Service Unavailable: the server holds as many bytes of request bodies in flight as it may (${max})`,
    data: { limit: "requestBytes", scope, max, retryAfterMs: 1000 },
  },
});

describe("the node bridge counts a body from its declared length", () => {
  it("60 stalled POSTs of Content-Length 4194304 from one anonymous client hold 16 MiB; the other 56 get 429 and are closed unread", async () => {
    // no 408 while the test runs, however loaded the machine: the four stalled bodies stay accepted
    const { store, port } = await start({ bodyTimeoutMs: 600_000 });
    const clients = Array.from({ length: 60 }, () => stalled(port, 4 * MiB, 4 * MiB - 64 * 1024));
    await expect.poll(() => clients.filter((c) => c.seen.closed).length, WAIT).toBe(56);
    // exactly the caller's share is held, by the four bodies it let in, and nothing more arrives for the rest
    expect(store.total("requestBytes")).toBe(16 * MiB);
    // the server closes a refused connection with the rest of its body unread: a client still sending may
    // find it reset before it reads the answer (TCP drops it then); an answer that arrives is this one
    const answered = clients.filter((c) => c.seen.closed && c.seen.data !== "");
    expect(answered.length).toBeGreaterThan(0);
    for (const c of answered) {
      const answer = parse(c.seen.data);
      expect(answer.status).toBe(429);
      expect(answer.headers.connection).toBe("close");
      expect(answer.headers["retry-after"]).toBe("1");
      expect(answer.body).toEqual(refusal("principal", 16 * MiB));
    }
    // the four stalled ones give their bytes back when their clients leave
    for (const c of clients) c.socket.destroy();
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(0);
    const next = padded(port, 4 * MiB);
    await expect.poll(() => next.seen.data.includes('"result"'), WAIT).toBe(true);
    expect(parse(next.seen.data).status).toBe(200);
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(0);
  }, 60_000);

  it("a client gone while an async authenticate hook runs gives the declared bytes back once the hook returns", async () => {
    let let_through: () => void = () => {};
    const hook = new Promise<void>((resolve) => {
      let_through = resolve;
    });
    let asked = 0;
    const { http, store, port } = await start({
      authenticate: async () => {
        asked++;
        await hook;
        return undefined;
      },
    });
    let open = 0;
    http.server.on("connection", (socket) => {
      open++;
      socket.once("close", () => open--);
    });
    const gone = Array.from({ length: 4 }, () => stalled(port, 4 * MiB, 4096));
    await expect.poll(() => asked, WAIT).toBe(4);
    for (const c of gone) c.socket.destroy();
    // the server saw them leave before the hook let them through to the body
    await expect.poll(() => open, WAIT).toBe(0);
    let_through();
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(0);
    // the share is whole again: a 4 MiB body of the same caller is served
    const next = padded(port, 4 * MiB);
    await expect.poll(() => next.seen.data.includes('"result"'), WAIT).toBe(true);
    expect(parse(next.seen.data).status).toBe(200);
  });

  it("a body that times out (408) gives its bytes back, and its caller is served again", async () => {
    const { store, port } = await start({
      // long enough that the third request is refused while the two still hold the share
      bodyTimeoutMs: 2000,
      limits: { requestBytes: { perPrincipal: 2 * MiB } },
    });
    const held = [stalled(port, MiB, 4096), stalled(port, MiB, 4096)];
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(2 * MiB);
    const third = stalled(port, MiB, 4096);
    await expect.poll(() => third.seen.closed, WAIT).toBe(true);
    expect(parse(third.seen.data).status).toBe(429);
    await expect.poll(() => held.every((c) => c.seen.closed), WAIT).toBe(true);
    for (const c of held) expect(parse(c.seen.data).status).toBe(408);
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(0);
    const next = padded(port, MiB);
    await expect.poll(() => next.seen.data.includes('"result"'), WAIT).toBe(true);
  });

  it("past the total, another address gets 503; its own share still bounds each address first", async () => {
    const { store, port } = await start({
      limits: { key: remoteAddress, requestBytes: { perPrincipal: 2 * MiB, total: 4 * MiB } },
    });
    const a = [stalled(port, 1.5 * MiB, 4096, "127.0.0.2"), stalled(port, 1.5 * MiB, 4096, "127.0.0.3")];
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(3 * MiB);
    const own = stalled(port, MiB, 4096, "127.0.0.2");
    await expect.poll(() => own.seen.closed, WAIT).toBe(true);
    expect(parse(own.seen.data).body).toEqual(refusal("principal", 2 * MiB));
    const other = stalled(port, 1.5 * MiB, 4096, "127.0.0.4");
    await expect.poll(() => other.seen.closed, WAIT).toBe(true);
    const answer = parse(other.seen.data);
    expect(answer.status).toBe(503);
    expect(answer.headers.connection).toBe("close");
    expect(answer.body).toEqual(refusal("server", 4 * MiB));
    expect(store.total("requestBytes")).toBe(3 * MiB);
    for (const c of a) c.socket.destroy();
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(0);
  });

  it("a chunked body is counted as its bytes come: refused at the share mid-body, and closed", async () => {
    const { store, port } = await start({ limits: { requestBytes: { perPrincipal: 2 * MiB } } });
    const c = client(port);
    c.socket.write(`${HEAD}Transfer-Encoding: chunked\r\n\r\n`);
    const chunk = 256 * 1024;
    // chunks until the answer comes: each is counted before it is kept
    let sent = 0;
    const over = () => c.seen.data !== "" || c.seen.closed;
    while (!over() && sent < 4 * MiB) {
      c.socket.write(`${chunk.toString(16)}\r\n${" ".repeat(chunk)}\r\n`);
      sent += chunk;
      await expect.poll(() => over() || store.total("requestBytes") >= sent, WAIT).toBe(true);
    }
    await expect.poll(() => c.seen.closed, WAIT).toBe(true);
    // refused mid-chunk, the rest unread: the answer, unless the close reset it first (see above)
    if (c.seen.data !== "") {
      expect(parse(c.seen.data).status).toBe(429);
      expect(parse(c.seen.data).headers.connection).toBe("close");
    }
    expect(sent).toBeLessThanOrEqual(2 * MiB + chunk);
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(0);
  });
});

/** A body that sends `chunks` of `size` bytes and then stalls (no end); `cancelled` tells whether its reader let go. */
function stallingBody(chunks: number, size: number) {
  const state = {
    cancelled: false,
    controller: undefined as ReadableStreamDefaultController<Uint8Array> | undefined,
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      state.controller = controller;
      for (let i = 0; i < chunks; i++) controller.enqueue(new Uint8Array(size).fill(0x20));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe("the web-standard handler counts a body before it buffers it", () => {
  function handler(perPrincipal: number) {
    const store = new MemoryCountStore();
    const h = createHttpHandler(mcp(), {
      sessions: false,
      limits: { store, requestBytes: { perPrincipal } },
    });
    running.push(() => h.close());
    return { h, store };
  }
  const request = (body: ReadableStream<Uint8Array>, headers: { [k: string]: string } = {}) =>
    new Request(URL_, {
      method: "POST",
      headers: { ...POST_HEADERS, ...headers },
      body,
      duplex: "half",
    } as RequestInit);

  it("a declared length past the share is 429 with Connection: close, its stream cancelled unread", async () => {
    const { h, store } = handler(2 * MiB);
    const held = stallingBody(1, 1024);
    void h(request(held.stream, { "content-length": String(2 * MiB) }));
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(2 * MiB);
    const over = stallingBody(0, 0);
    const res = await h(request(over.stream, { "content-length": String(4096) }));
    expect(res.status).toBe(429);
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toEqual(refusal("principal", 2 * MiB));
    expect(over.state.cancelled).toBe(true);
    // the stalled one's client leaves: its read fails, it is answered, and its bytes come back
    held.state.controller!.error(new Error("gone"));
    await expect.poll(() => store.total("requestBytes"), WAIT).toBe(0);
  });

  it("a body without a length is counted as it arrives; 2026-07-28 and 2025 alike", async () => {
    for (const version of ["2026-07-28", "2025-06-18"]) {
      const { h, store } = handler(2 * MiB);
      const body = stallingBody(12, 256 * 1024);
      const res = await h(request(body.stream, { "mcp-protocol-version": version }));
      expect(res.status).toBe(429);
      expect(res.headers.get("connection")).toBe("close");
      expect((await res.json()).error.data).toEqual({
        limit: "requestBytes",
        scope: "principal",
        max: 2 * MiB,
        retryAfterMs: 1000,
      });
      expect(body.state.cancelled).toBe(true);
      expect(store.total("requestBytes")).toBe(0);
    }
  });
});

describe("a body's bytes come back once it is parsed, not at the end of a long request", () => {
  function holding() {
    const store = new MemoryCountStore();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = mcp();
    let runs = 0;
    server.tool("hold", {
      run: async () => {
        runs++;
        await held;
        return "done";
      },
    });
    const h = createHttpHandler(server, {
      sessions: false,
      limits: { store, requestBytes: { perPrincipal: 2 * MiB } },
    });
    running.push(() => {
      release();
      h.close();
    });
    return { h, store, release, runs: () => runs };
  }
  const padded = (message: object, size: number, headers: { [k: string]: string }) => {
    const text = JSON.stringify(message);
    return new Request(URL_, {
      method: "POST",
      headers: { ...POST_HEADERS, ...headers },
      body: text + " ".repeat(size - text.length),
    });
  };
  const listen = (id: number) =>
    padded(
      {
        jsonrpc: "2.0",
        id,
        method: "subscriptions/listen",
        params: { _meta: meta(), notifications: { toolsListChanged: true } },
      },
      2 * MiB,
      { "mcp-protocol-version": V, "mcp-method": "subscriptions/listen" },
    );

  it("two open listens of 2 MiB bodies each: the share is free while both stream", async () => {
    const { h, store } = holding();
    const first = await h(listen(1));
    expect([first.status, first.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
    expect(store.total("requestBytes")).toBe(0);
    const second = await h(listen(2));
    expect([second.status, second.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
    expect(store.total("requestBytes")).toBe(0);
    await first.body?.cancel();
    await second.body?.cancel();
  });

  it("a 2025 call that runs long holds no bytes while it runs", async () => {
    const { h, store, release, runs } = holding();
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hold", arguments: {} } };
    const answer = h(padded(call, 2 * MiB, { "mcp-protocol-version": "2025-06-18" }));
    await expect.poll(runs, WAIT).toBe(1);
    expect(store.total("requestBytes")).toBe(0);
    release();
    expect((await answer).status).toBe(200);
  });
});

/** The served memory (heap and buffers after a full GC) of a server in a child process, and the bytes it read per client port. */
function child(): Promise<{
  url: string;
  ask(what: "memory"): Promise<number>;
  ask(what: "read"): Promise<{ [port: string]: number }>;
}> {
  const script = fileURLToPath(new URL("../fixtures/body-server.js", import.meta.url));
  const p: ChildProcess = fork(script, [], {
    execArgv: ["--expose-gc"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  running.push(() => p.kill());
  return new Promise((resolve) => {
    p.once("message", (m) => {
      const ask = (what: string) =>
        new Promise<never>((r) => {
          p.once("message", (a) => r((a as { [k: string]: never })[what]!));
          p.send(what);
        });
      resolve({ url: (m as { url: string }).url, ask: ask as never });
    });
  });
}

describe("the server's memory under stalled bodies (dist, in a child process)", () => {
  it("60 stalled 4 MiB POSTs from one anonymous client cost the server about its 16 MiB share, not 240 MiB", async () => {
    const server = await child();
    const port = Number(new URL(server.url).port);
    const before = await server.ask("memory");
    const sent = 4 * MiB - 64 * 1024;
    const clients = Array.from({ length: 60 }, () => stalled(port, 4 * MiB, sent));
    // each is refused and closed, or the server has read all it sent
    await expect
      .poll(
        async () => {
          const read = await server.ask("read");
          return clients.every((c) => c.seen.closed || (read[c.socket.localPort!] ?? 0) >= sent);
        },
        { timeout: 60_000, interval: 50 },
      )
      .toBe(true);
    const grown = (await server.ask("memory")) - before;
    expect(grown).toBeLessThan(28 * MiB);
    expect(clients.filter((c) => c.seen.closed).length).toBe(56);
  }, 90_000);
});
