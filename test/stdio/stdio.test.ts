import { PassThrough, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { serveStdio } from "../../src/stdio.js";
import { spawnProcess } from "../helpers.js";

const fixture = fileURLToPath(new URL("../fixtures/stdio-server.js", import.meta.url));
const init = (id: number | string = 0, v = "2025-11-25") =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "t", version: "1" } },
  });

/** An in-process stdio pair: write chunks in, read parsed lines out. */
function pipe(server: McpServer, options: { maxLineBytes?: number } = {}) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines: any[] = [];
  let buf = "";
  const waiters: (() => void)[] = [];
  stdout.on("data", (c) => {
    buf += c.toString("utf8");
    let nl = buf.indexOf("\n");
    while (nl !== -1) {
      lines.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
      nl = buf.indexOf("\n");
    }
    for (const w of waiters.splice(0)) w();
  });
  const handle = serveStdio(server, { stdin, stdout, ...options, onEnd: () => {} });
  const waitFor = async (n: number) => {
    while (lines.length < n) await new Promise<void>((r) => waiters.push(r));
    return lines;
  };
  return { stdin, stdout, lines, waitFor, handle };
}

function echoServer() {
  const s = new McpServer({ name: "t", version: "1" });
  s.tool("echo", { run: (_a, ctx) => `ok ${ctx.requestId}` });
  return s;
}

describe("stdio framing", () => {
  it("serves a message split across many chunks, byte by byte", async () => {
    const p = pipe(echoServer());
    const text = init() + "\n";
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i++) p.stdin.write(bytes.subarray(i, i + 1));
    const [answer] = await p.waitFor(1);
    expect(answer.result.protocolVersion).toBe("2025-11-25");
  });

  it("accepts CRLF line ends and several messages in one chunk", async () => {
    const p = pipe(echoServer());
    p.stdin.write(
      `${init()}\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n`,
    );
    const lines = await p.waitFor(3);
    expect(lines.slice(1)).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, result: {} },
    ]);
  });

  it("decodes a multi-byte UTF-8 character split between chunks", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("echo", {
      input: { type: "object", properties: { t: { type: "string" } } },
      run: ({ t }) => String(t),
    });
    const p = pipe(s);
    p.stdin.write(init() + "\n");
    await p.waitFor(1);
    const bytes = Buffer.from(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "echo", arguments: { t: "żółw 🐢" } },
      }) + "\n",
    );
    const cut = bytes.indexOf(Buffer.from("🐢")) + 2;
    p.stdin.write(bytes.subarray(0, cut));
    p.stdin.write(bytes.subarray(cut));
    const lines = await p.waitFor(2);
    expect(lines[1].result.content[0].text).toBe("żółw 🐢");
  });

  it("answers invalid JSON and invalid UTF-8 with -32700 and serves the next line", async () => {
    const p = pipe(echoServer());
    p.stdin.write("{not json\n");
    p.stdin.write(Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
    p.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    const lines = await p.waitFor(3);
    const parseError = {
      jsonrpc: "2.0",
      error: { code: -32700, message: "Parse error: the message is not valid JSON" },
    };
    expect(lines).toEqual([parseError, parseError, { jsonrpc: "2.0", id: 1, result: {} }]);
  });

  it("serves a line holding U+FFFD itself, and answers bytes that decode to it with -32700", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("say", {
      input: { type: "object", properties: { text: { type: "string" } } },
      run: (a) => `${a.text}`,
    });
    const p = pipe(s);
    const call = (id: number, text: string) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "say", arguments: { text } },
      });
    p.stdin.write(`${init()}\n${call(1, "a\uFFFDb")}\n`);
    p.stdin.write(Buffer.from(`${call(2, "\u00ff")}\n`));
    p.stdin.write(Buffer.from(`${call(3, "\uFFFD")}\n`));
    // 0xc3 alone is not UTF-8: a decoder shows it as U+FFFD
    const bad = Buffer.from(call(4, "#"));
    bad[bad.indexOf("#")] = 0xc3;
    p.stdin.write(Buffer.concat([bad, Buffer.from("\n")]));
    const lines = await p.waitFor(5);
    expect(lines.slice(1, 4).map((l) => l.result.content[0].text)).toEqual(["a\uFFFDb", "\u00ff", "\uFFFD"]);
    expect(lines[4]).toEqual({
      jsonrpc: "2.0",
      error: { code: -32700, message: "Parse error: the message is not valid JSON" },
    });
  });

  it("drops a byte order mark that opens a line", async () => {
    const p = pipe(echoServer());
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    p.stdin.write(
      Buffer.concat([
        bom,
        Buffer.from(`${init()}\n`),
        bom,
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'),
      ]),
    );
    const lines = await p.waitFor(2);
    expect(lines[1]).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  });

  it("reads Uint8Array and string chunks as well as Buffers", async () => {
    const s = echoServer();
    const listeners: { [event: string]: ((arg?: any) => void)[] } = {};
    const stdin = {
      on(event: string, f: (arg?: any) => void) {
        listeners[event] = [...(listeners[event] ?? []), f];
      },
    };
    const stdout = new PassThrough();
    let out = "";
    stdout.on("data", (c) => (out += c));
    const handle = serveStdio(s, { stdin, stdout, onEnd: () => {} });
    const emit = (event: string, arg?: unknown) => {
      for (const f of listeners[event] ?? []) f(arg);
    };
    emit("data", `${init()}\n{"jsonrpc":"2.0","id":1,`);
    emit("data", new TextEncoder().encode('"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n'));
    emit("end");
    await handle.closed;
    expect(
      out
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).id),
    ).toEqual([0, 1, 2]);
  });

  it("answers a line over the limit with -32600 once, skips it, and goes on", async () => {
    const p = pipe(echoServer(), { maxLineBytes: 1000 });
    p.stdin.write(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${"x".repeat(600)}`);
    p.stdin.write(`${"y".repeat(600)}`);
    p.stdin.write(`${"z".repeat(5000)}"}}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n`);
    const lines = await p.waitFor(2);
    expect(lines).toEqual([
      {
        jsonrpc: "2.0",
        error: { code: -32600, message: "Invalid Request: the message is longer than 1000 bytes" },
      },
      { jsonrpc: "2.0", id: 2, result: {} },
    ]);
  });

  it("ignores blank lines", async () => {
    const p = pipe(echoServer());
    p.stdin.write('\n\r\n   \n{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    expect(await p.waitFor(1)).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
  });

  it("waits for drain when stdout's buffer is full, and loses no answer", async () => {
    const written: string[] = [];
    let full = false;
    let writesWhileFull = 0;
    let pendingDrain: (() => void) | undefined;
    const stdout = new Writable({
      highWaterMark: 64,
      write(chunk, _enc, cb) {
        written.push(chunk.toString());
        setTimeout(cb, 1);
      },
    });
    const origWrite = stdout.write.bind(stdout);
    (stdout as any).write = (chunk: any, cb?: any) => {
      if (full) writesWhileFull++;
      const ok = origWrite(chunk, cb);
      if (!ok) {
        full = true;
        pendingDrain = () => (full = false);
        stdout.once("drain", () => pendingDrain?.());
      }
      return ok;
    };
    const stdin = new PassThrough();
    const s = echoServer();
    const handle = serveStdio(s, { stdin, stdout: stdout as any, onEnd: () => {} });
    stdin.write(init() + "\n");
    for (let i = 1; i <= 300; i++) stdin.write(`{"jsonrpc":"2.0","id":${i},"method":"ping"}\n`);
    stdin.end();
    await handle.closed;
    const ids = written
      .join("")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).id);
    expect(ids).toHaveLength(301);
    expect(new Set(ids).size).toBe(301);
    expect(writesWhileFull).toBe(0);
  });

  it("finishes in-flight work after end of input, then closes", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.tool("slow", { run: () => new Promise((r) => setTimeout(() => r("late"), 50)) });
    const p = pipe(s);
    p.stdin.write(init() + "\n");
    p.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}\n');
    p.stdin.end();
    await p.handle.closed;
    expect(p.lines[1]).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "late" }] },
    });
    expect(p.handle.connection.closed).toBe(true);
  });
});

describe("stdio process", () => {
  it("keeps console.log off stdout, and exits 0 on EOF after in-flight work", async () => {
    const f = spawnProcess(fixture);
    f.child.stdin.write(init() + "\n");
    f.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noisy"}}\n');
    f.child.stdin.write(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":300}}}\n',
    );
    f.child.stdin.end();
    expect(await f.exited).toBe(0);
    const answers = f.lines.map((l) => JSON.parse(l));
    expect(answers.map((a) => a.id)).toEqual([0, 1, 2]);
    expect(answers[2].result.content[0].text).toBe("slow done");
    expect(f.stderr()).toContain("this must not reach stdout");
    expect(f.rest()).toBe("");
  });

  it("guardConsole: false gives console.log back to stdout at serveStdio (what came before went to stderr)", async () => {
    const chatty = fileURLToPath(new URL("../fixtures/stdio-chatty.js", import.meta.url));
    const f = spawnProcess(chatty, { GUARD: "off" });
    f.child.stdin.write(init() + "\n");
    f.child.stdin.end();
    expect(await f.exited).toBe(0);
    expect(f.lines[0]).toBe("after serveStdio, on stdout as asked");
    expect(JSON.parse(f.lines[1]!)).toMatchObject({ id: 0, result: { serverInfo: { name: "chatty" } } });
    expect(f.stderr()).toBe("starting up\nloading the catalog\n");
  });

  it("a module that logs at import: before picomcp/stdio it reaches stdout; after it (the fix) stderr", async () => {
    const run = async (name: string) => {
      const f = spawnProcess(fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url)));
      f.child.stdin.write(init() + "\n");
      f.child.stdin.end();
      expect(await f.exited).toBe(0);
      return f;
    };
    const first = await run("stdio-noisy-first.js");
    expect(first.lines[0]).toBe("connected to the catalog db");
    expect(JSON.parse(first.lines[1]!)).toMatchObject({ id: 0, result: { serverInfo: { name: "noisy" } } });
    const fixed = await run("stdio-guard-first.js");
    expect(fixed.lines.map((l) => JSON.parse(l).id)).toEqual([0]);
    expect(fixed.stderr()).toBe("connected to the catalog db\n");
  });

  it("answers every request line of a hostile stream exactly once and stays up", async () => {
    const f = spawnProcess(fixture, { MAX_LINE: "65536" });
    const send: string[] = [init("init")];
    const expectIds = new Map<string, number>(); // id -> expected answers
    let anonymous = 0; // answers without id expected
    expectIds.set(JSON.stringify("init"), 1);
    const rnd = mulberry32(42);
    for (let i = 0; i < 3000; i++) {
      const kind = Math.floor(rnd() * 9);
      const id = i;
      switch (kind) {
        case 0:
          send.push("garbage " + i + " }{");
          anonymous++;
          break;
        case 1:
          send.push(
            JSON.stringify({
              jsonrpc: "2.0",
              id,
              method: "tools/call",
              params: { name: "echo", arguments: { text: "t" } },
            }).slice(0, 30),
          );
          anonymous++;
          break;
        case 2:
          send.push(JSON.stringify({ jsonrpc: "2.0", id, method: 42 }));
          expectIds.set(String(id), 1);
          break;
        case 3:
          send.push(
            JSON.stringify({
              jsonrpc: "2.0",
              id,
              method: "tools/call",
              params: { name: "echo", arguments: { text: 5 } },
            }),
          );
          expectIds.set(String(id), 1);
          break;
        case 4:
          send.push(
            JSON.stringify({
              jsonrpc: "2.0",
              id,
              method: "ping",
              params: { pad: "x".repeat(70_000 + (i % 7) * 10_000) },
            }),
          );
          anonymous++;
          break;
        case 5:
          send.push(JSON.stringify({ jsonrpc: "2.0", method: "notifications/whatever", params: { i } }));
          break;
        case 6:
          send.push(
            JSON.stringify({
              jsonrpc: "2.0",
              id: `s${id}`,
              method: "tools/call",
              params: { name: "echo", arguments: { text: `v${i}` } },
            }),
          );
          expectIds.set(JSON.stringify(`s${id}`), 1);
          break;
        case 7:
          send.push(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "crash" } }));
          expectIds.set(String(id), 1);
          break;
        default:
          send.push(JSON.stringify([1, 2, 3]));
          anonymous++;
      }
    }
    // write in random-sized chunks
    const all = Buffer.from(send.join("\n") + "\n");
    let at = 0;
    while (at < all.length) {
      const n = 1 + Math.floor(rnd() * 40_000);
      f.child.stdin.write(all.subarray(at, at + n));
      at += n;
    }
    f.child.stdin.end();
    expect(await f.exited).toBe(0);
    const answers = f.lines.map((l) => JSON.parse(l));
    let gotAnonymous = 0;
    const got = new Map<string, number>();
    for (const a of answers) {
      expect(a.jsonrpc).toBe("2.0");
      expect("result" in a !== "error" in a).toBe(true);
      if (a.id === undefined) gotAnonymous++;
      else got.set(JSON.stringify(a.id), (got.get(JSON.stringify(a.id)) ?? 0) + 1);
    }
    expect(gotAnonymous).toBe(anonymous);
    expect(got).toEqual(expectIds);
    const echo = answers.find((a) => typeof a.id === "string" && a.id.startsWith("s"));
    expect(echo.result.content[0].text).toMatch(/^v\d+$/);
  }, 60_000);
});

function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("stdio: the end of input ends the session gracefully, once", () => {
  it("end of input, then server.close() while a request still runs: the sessionEnd hook runs once", async () => {
    const ended: string[] = [];
    const s = new McpServer({ name: "t", version: "1" });
    s.use({
      id: "com.example/held",
      sessionEnd: ({ sessionId }) => void ended.push(sessionId),
      methods: {
        // held until cancelled: the hook gives it nothing, so the connection stays open after the input ends
        "hold/stuck": {
          era: "session",
          run: (_p, ctx) =>
            new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({}), { once: true })),
        },
      },
    });
    const p = pipe(s);
    p.stdin.write(`${init()}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n`);
    await p.waitFor(1);
    p.stdin.write(`{"jsonrpc":"2.0","id":1,"method":"hold/stuck"}\n`);
    await expect.poll(() => p.handle.connection.inflight.has(1)).toBe(true);
    p.stdin.end();
    await expect.poll(() => ended.length).toBe(1);
    s.close();
    await p.handle.closed;
    expect(ended).toEqual([p.handle.connection.id]);
    expect(p.lines).toHaveLength(1);
  });
});
describe("stdio under an observer that throws", () => {
  it("answers every request once; onError hears the observer's error", async () => {
    const errors: unknown[] = [];
    const s = new McpServer({
      name: "t",
      version: "1",
      onError: (e, info) => void errors.push([String(e), info]),
    });
    s.use({
      id: "com.example/audit",
      observer: {
        message: () => {
          throw new Error("audit log down");
        },
      },
    });
    const p = pipe(s);
    p.stdin.write(`${init()}\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n`);
    const lines = await p.waitFor(2);
    expect(lines.map((l) => l.id)).toEqual([0, 1]);
    expect(lines[1]).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(errors[0]).toEqual([
      "Error: audit log down",
      { method: "message", requestId: "observer", name: "com.example/audit" },
    ]);
  });
});
