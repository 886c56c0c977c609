// The bench's clients: a stdio peer that drives a child process, and a raw-socket HTTP/1.1 load generator
// with keep-alive connections. Both are lean on purpose (no promise per request) so that the client,
// which shares the machine with the server, costs less than the servers it measures.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";

const SERVERS = fileURLToPath(new URL("./servers/", import.meta.url));
export const INIT_PARAMS = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "bench", version: "1.0.0" },
};
const initLine = (id) => JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: INIT_PARAMS });
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';

/** Server CPU time (user + system) of a process so far, in µs, from /proc (10 ms ticks). */
export function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Resident set size of a process, in MiB. */
export function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

/** The server file and environment of a contender; `baseline` is picomcp from the build `--baseline` names. */
function serverOf(name) {
  if (name !== "baseline") return { file: `${SERVERS}${name}.js`, env: process.env };
  return {
    file: `${SERVERS}picomcp.js`,
    env: { ...process.env, PICOMCP_DIST: process.env.PICOMCP_BASELINE },
  };
}

/** A contender over stdio: spawned, initialized, and ready for `call` and `load`. */
export class StdioPeer {
  /** `node`: options for node itself, before the server's file (the heap phase's probe). */
  static async start(name, args = [], node = []) {
    const t0 = performance.now();
    const { file, env } = serverOf(name);
    const child = spawn(process.execPath, [...node, file, "stdio", ...args], {
      stdio: ["pipe", "pipe", "ignore"],
      env,
    });
    const peer = new StdioPeer(child);
    const init = await peer.call(initLine(0), 0);
    peer.coldMs = performance.now() - t0;
    peer.init = init;
    child.stdin.write(`${INITIALIZED}\n`);
    return peer;
  }

  constructor(child) {
    this.child = child;
    this.pid = child.pid;
    this.rest = "";
    this.onLine = () => {};
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text) => {
      const lines = (this.rest + text).split("\n");
      this.rest = lines.pop();
      this.onLine(lines);
    });
    this.exited = new Promise((resolve) => child.on("exit", resolve));
  }

  /** Sends one line and resolves with the parsed answer whose id is `id`. */
  call(line, id) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${line.slice(0, 80)}`)), 30_000);
      this.onLine = (lines) => {
        for (const l of lines) {
          const m = JSON.parse(l);
          if (m.id === id) {
            clearTimeout(timer);
            this.onLine = () => {};
            resolve(m);
          }
        }
      };
      this.child.stdin.write(`${line}\n`);
    });
  }

  /**
   * Keeps `inflight` requests outstanding for `ms` (or `count` answers), each `make(id)` a line.
   * Resolves with answers per second and server CPU µs per answer.
   */
  load(make, { inflight = 64, ms = 1000, count = Infinity } = {}) {
    return new Promise((resolve) => {
      let id = 1;
      let answered = 0;
      let done = false;
      const batch = (n) => {
        let out = "";
        for (let i = 0; i < n; i++) out += `${make(id++)}\n`;
        this.child.stdin.write(out);
      };
      const cpu0 = cpuMicros(this.pid);
      const t0 = performance.now();
      const finish = () => {
        if (done) return;
        done = true;
        const elapsed = performance.now() - t0;
        const cpu = cpuMicros(this.pid) - cpu0;
        // answers still in flight are read and dropped before the next phase
        let left = id - 1 - answered;
        this.onLine = (lines) => {
          left -= lines.length;
          if (left <= 0) {
            this.onLine = () => {};
            resolve({ rps: (answered * 1000) / elapsed, cpuUs: cpu / answered, answered, sent: id - 1 });
          }
        };
        if (left <= 0) this.onLine([]);
      };
      this.onLine = (lines) => {
        answered += lines.length;
        // at least one full window of answers, however slow the server
        if (answered >= count || (performance.now() - t0 >= ms && answered >= inflight)) finish();
        else batch(lines.length);
      };
      setTimeout(() => answered >= inflight && finish(), ms);
      batch(inflight);
    });
  }

  /** One request at a time, `n` times: the round-trip latencies in µs, sorted. */
  async latency(make, n) {
    const times = [];
    for (let i = 0; i < n; i++) {
      const id = 1_000_000 + i;
      const t0 = performance.now();
      await this.call(make(id), id);
      times.push((performance.now() - t0) * 1000);
    }
    return times.sort((a, b) => a - b);
  }

  async stop() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill(), 2000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Spawns `command` and resolves once it printed `PORT <n>`: the child and the port. */
export async function listening(command, args, env = process.env) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "ignore"], env });
  const port = await new Promise((resolve, reject) => {
    let text = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (t) => {
      text += t;
      const m = /PORT (\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    child.on("exit", () => reject(new Error(`${args.at(-1)} exited before listening`)));
  });
  return { child, port };
}

/** A contender over Streamable HTTP: spawned, listening on 127.0.0.1. */
export class HttpPeer {
  static async start(name, args = [], node = []) {
    const { file, env } = serverOf(name);
    const { child, port } = await listening(process.execPath, [...node, file, "http", ...args], env);
    return new HttpPeer(child, port);
  }

  constructor(child, port) {
    this.child = child;
    this.pid = child.pid;
    this.port = port;
    this.exited = new Promise((resolve) => child.on("exit", resolve));
  }

  async stop() {
    this.child.kill();
    await this.exited;
  }
}

/**
 * One keep-alive HTTP/1.1 connection that sends POSTs to /mcp and parses the answers; `localAddress`
 * (a 127.0.0.<n>) makes it a caller of its own, as a distinct user on another machine would be.
 */
export class HttpConnection {
  constructor(port, localAddress) {
    this.port = port;
    this.headers = {};
    this.buf = null;
    this.pending = null;
    this.socket = connect({ port, host: "127.0.0.1", ...(localAddress ? { localAddress } : {}) });
    this.socket.setNoDelay(true);
    this.ready = new Promise((resolve, reject) => {
      this.socket.once("connect", resolve);
      this.socket.once("error", reject);
    });
    this.socket.on("data", (chunk) => this.#data(chunk));
    this.socket.on("error", () => {});
  }

  /** Sends `body` (a JSON text); `done(status, headers, bodyText)` is called with the answer. */
  post(body, done) {
    let head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${this.port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
    for (const [k, v] of Object.entries(this.headers)) head += `${k}: ${v}\r\n`;
    this.pending = { done, status: 0, headers: null, length: -1, chunked: false, body: [] };
    this.socket.write(`${head}\r\n${body}`);
  }

  /** `post` as a promise of `{ status, headers, body }`. */
  request(body) {
    return new Promise((resolve) =>
      this.post(body, (status, headers, text) => resolve({ status, headers, body: text })),
    );
  }

  #data(chunk) {
    this.buf = this.buf ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      const p = this.pending;
      if (!p) return;
      if (!p.headers) {
        const end = this.buf.indexOf("\r\n\r\n");
        if (end === -1) return;
        const lines = this.buf.latin1Slice(0, end).split("\r\n");
        this.buf = this.buf.subarray(end + 4);
        p.status = Number(lines[0].slice(9, 12));
        p.headers = {};
        for (let i = 1; i < lines.length; i++) {
          const c = lines[i].indexOf(":");
          p.headers[lines[i].slice(0, c).toLowerCase()] = lines[i].slice(c + 1).trim();
        }
        if (p.headers["content-length"] !== undefined) p.length = Number(p.headers["content-length"]);
        else if (p.headers["transfer-encoding"] === "chunked") p.chunked = true;
        else p.length = 0;
      }
      if (!p.chunked) {
        if (this.buf.length < p.length) return;
        p.body.push(this.buf.subarray(0, p.length));
        this.buf = this.buf.subarray(p.length);
      } else {
        let complete = false;
        for (;;) {
          const nl = this.buf.indexOf("\r\n");
          if (nl === -1) break;
          const size = Number.parseInt(this.buf.latin1Slice(0, nl), 16);
          if (this.buf.length < nl + 2 + size + 2) break;
          if (size === 0) {
            this.buf = this.buf.subarray(nl + 4);
            complete = true;
            break;
          }
          p.body.push(this.buf.subarray(nl + 2, nl + 2 + size));
          this.buf = this.buf.subarray(nl + 2 + size + 2);
        }
        if (!complete) return;
      }
      this.pending = null;
      p.done(p.status, p.headers, Buffer.concat(p.body).toString("utf8"));
    }
  }

  close() {
    this.socket.destroy();
  }
}

/** The JSON-RPC answer in an HTTP body: plain JSON, or the first `data:` line of an SSE stream. */
export function answerOf(headers, body) {
  if ((headers["content-type"] ?? "").startsWith("text/event-stream")) {
    const data = body.split("\n").find((l) => l.startsWith("data:"));
    return data ? JSON.parse(data.slice(5)) : undefined;
  }
  return body ? JSON.parse(body) : undefined;
}

/**
 * Opens `n` connections, each from a loopback address of its own (127.0.0.2, .3, …: n clients, not one
 * client with n sessions, which a per-caller session cap rightly refuses); with sessions, each
 * initializes its own session first; 2026-07-28 needs none.
 */
export async function openConnections(port, n, { sessions, modern = false }) {
  const conns = [];
  for (let i = 0; i < n; i++) {
    const c = new HttpConnection(port, `127.0.0.${2 + i}`);
    await c.ready;
    if (modern) {
      Object.assign(c.headers, {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "echo",
      });
      conns.push(c);
      continue;
    }
    const init = await c.request(initLine(0));
    if (init.status !== 200)
      throw new Error(`initialize answered ${init.status}: ${init.body.slice(0, 200)}`);
    const version = answerOf(init.headers, init.body)?.result?.protocolVersion;
    c.headers["MCP-Protocol-Version"] = version;
    if (sessions) {
      const id = init.headers["mcp-session-id"];
      if (!id) throw new Error("no Mcp-Session-Id on the initialize answer");
      c.headers["Mcp-Session-Id"] = id;
      await c.request(INITIALIZED);
    }
    conns.push(c);
  }
  return conns;
}

/** Closed-loop load over `conns` for `ms`: req/s, latency p50/p99 in µs, and the count of bad answers. */
export function httpLoad(conns, make, ms, check) {
  return new Promise((resolve) => {
    const latencies = [];
    let bad = 0;
    let id = 1;
    let stopping = false;
    let open = conns.length;
    const t0 = performance.now();
    const next = (c) => {
      if (stopping) {
        if (--open === 0) {
          const elapsed = performance.now() - t0;
          latencies.sort((a, b) => a - b);
          resolve({
            rps: (latencies.length * 1000) / elapsed,
            p50: latencies[latencies.length >> 1],
            p99: latencies[Math.floor(latencies.length * 0.99)],
            count: latencies.length,
            bad,
          });
        }
        return;
      }
      const sent = performance.now();
      const n = id++;
      c.post(make(n), (status, headers, body) => {
        latencies.push((performance.now() - sent) * 1000);
        if (status !== 200 || (check && (n & 1023) === 1 && !check(answerOf(headers, body)))) bad++;
        next(c);
      });
    };
    setTimeout(() => (stopping = true), ms);
    for (const c of conns) next(c);
  });
}
