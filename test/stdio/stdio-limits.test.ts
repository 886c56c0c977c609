// stdio limits: reading holds while stdout has not drained (a client that does not read its answers
// cannot make the server queue them), and batches are capped.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { type StdioWritable, serveStdio } from "../../src/stdio.js";

const init = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});
const callLine = (id: number) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "big", arguments: {} } });
const tick = () => new Promise((r) => setImmediate(r));

/** A stdout whose buffer is always full: every write says "wait for drain" until `drain()`. */
class StuckStdout implements StdioWritable {
  readonly lines: string[] = [];
  #listeners: (() => void)[] = [];
  write(chunk: string, callback?: (error?: Error | null) => void): boolean {
    for (const line of chunk.split("\n")) if (line) this.lines.push(line);
    callback?.();
    return false;
  }
  once(_event: "drain", listener: () => void): unknown {
    this.#listeners.push(listener);
    return this;
  }
  drain(): void {
    for (const l of this.#listeners.splice(0)) l();
  }
}

function setup(options: { maxBatchSize?: number } = {}) {
  const server = new McpServer({ name: "stdio-limits", version: "1.0.0" });
  const runs = { n: 0 };
  server.tool("big", {
    run: () => {
      runs.n++;
      return "b".repeat(1000);
    },
  });
  const stdin = new PassThrough();
  const stdout = new StuckStdout();
  const handle = serveStdio(server, { stdin, stdout, onEnd: () => {}, ...options });
  return { stdin, stdout, runs, handle };
}

describe("stdio backpressure", () => {
  it("stops reading while stdout has not drained, and serves everything once it does", async () => {
    const { stdin, stdout, runs, handle } = setup();
    const lines = [init, ...Array.from({ length: 1000 }, (_, i) => callLine(i + 1))];
    stdin.write(`${lines.join("\n")}\n`);
    for (let i = 0; i < 20; i++) await tick();
    // at most one yield's worth of requests ran; the rest waits unread
    expect(runs.n).toBeLessThanOrEqual(64);
    expect(stdin.isPaused()).toBe(true);
    for (let i = 0; i < 20; i++) await tick();
    expect(runs.n).toBeLessThanOrEqual(64);
    while (stdout.lines.length < 1001) {
      stdout.drain();
      await tick();
    }
    expect(runs.n).toBe(1000);
    const ids = stdout.lines.map((l) => JSON.parse(l).id).sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: 1001 }, (_, i) => i));
    stdin.end();
    while (!(await Promise.race([handle.closed.then(() => true), tick().then(() => false)]))) stdout.drain();
  });
});

/** A server over a {@link CountingStdout}, its initialize answered (the first write). */
async function initializedWrites() {
  const server = new McpServer({ name: "stdio-writes", version: "1.0.0" });
  server.tool("big", { run: () => "b" });
  const stdin = new PassThrough();
  const stdout = new CountingStdout();
  const handle = serveStdio(server, { stdin, stdout, onEnd: () => {} });
  stdin.write(`${init}\n`);
  while (stdout.writes.length < 1) await tick();
  return { stdin, stdout, handle };
}

/** A stdout that always takes its input, and records each write as it came. */
class CountingStdout implements StdioWritable {
  readonly writes: string[] = [];
  write(chunk: string, callback?: (error?: Error | null) => void): boolean {
    if (chunk) this.writes.push(chunk);
    callback?.();
    return true;
  }
  once(): unknown {
    return this;
  }
}

describe("stdio writes", () => {
  it("the answers that finish in one turn of the event loop go out in one write, in the order they finished", async () => {
    const { stdin, stdout, handle } = await initializedWrites();
    stdin.write(`${Array.from({ length: 10 }, (_, i) => callLine(i + 1)).join("\n")}\n`);
    while (stdout.writes.length < 2) await tick();
    for (let i = 0; i < 5; i++) await tick();
    expect(stdout.writes.length).toBe(2);
    const ids = stdout.writes[1]!.split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).id);
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    stdin.end();
    await handle.closed;
  });
});

describe("stdio writes, many at once", () => {
  it("the answers of one chunk go out 32 per write, so the client reads the first while the rest are made", async () => {
    const { stdin, stdout, handle } = await initializedWrites();
    stdin.write(`${Array.from({ length: 70 }, (_, i) => callLine(i + 1)).join("\n")}\n`);
    while (stdout.writes.length < 4) await tick();
    for (let i = 0; i < 5; i++) await tick();
    const ids = stdout.writes.slice(1).map((w) =>
      w
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).id),
    );
    expect(ids.map((w) => w.length)).toEqual([32, 32, 6]);
    expect(ids.flat()).toEqual(Array.from({ length: 70 }, (_, i) => i + 1));
    stdin.end();
    await handle.closed;
  });
});

/** The answer that is not initialize's. */
const other = (stdout: StuckStdout) =>
  stdout.lines.map((l) => JSON.parse(l)).find((m) => Array.isArray(m) || m.id !== 0);

describe("stdio batches", () => {
  it("a batch over maxBatchSize (default 100) gets one -32600 answer and runs nothing", async () => {
    const { stdin, stdout, runs } = setup();
    stdin.write(`${init}\n`);
    const batch = Array.from({ length: 101 }, (_, i) => JSON.parse(callLine(i + 1)));
    stdin.write(`${JSON.stringify(batch)}\n`);
    while (stdout.lines.length < 2) {
      stdout.drain();
      await tick();
    }
    expect(other(stdout)).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid Request: a batch may hold at most 100 messages" },
    });
    expect(runs.n).toBe(0);
  });

  it("maxBatchSize: 0 turns batches off; a batch within the cap is served", async () => {
    const off = setup({ maxBatchSize: 0 });
    off.stdin.write(`${init}\n[${callLine(1)}]\n`);
    while (off.stdout.lines.length < 2) {
      off.stdout.drain();
      await tick();
    }
    expect(other(off.stdout).error.message).toBe("Invalid Request: batches are off");
    const on = setup({ maxBatchSize: 2 });
    on.stdin.write(`${init}\n[${callLine(1)},${callLine(2)}]\n`);
    while (on.stdout.lines.length < 2) {
      on.stdout.drain();
      await tick();
    }
    expect(other(on.stdout)).toHaveLength(2);
    expect(() => setup({ maxBatchSize: -1 })).toThrow("maxBatchSize must be a non-negative integer");
  });
});
