// The governor on the wire of stdio and HTTP: the exact JSON-RPC error line of a refusal over stdio,
// and rate limits per principal, method and tool (429 with the bucket's Retry-After), anonymous
// callers sharing one bucket unless the HTTP handler's limits.key names them.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { serveStdio } from "../../src/stdio.js";
import { governed, httpOf, modern, until } from "../governor-helpers.js";

function stdio(limits: object) {
  const { server, seen, open } = governed(limits);
  const stdin = new PassThrough();
  const lines: string[] = [];
  const stdout = new PassThrough();
  stdout.on("data", (c: Buffer) => lines.push(...c.toString().split("\n").filter(Boolean)));
  const served = serveStdio(server, { stdin, stdout, onEnd: () => {} });
  const send = (m: object) => stdin.write(`${JSON.stringify(m)}\n`);
  send({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  });
  return { send, lines, seen, open, stdin, served };
}

const tool = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} },
});

describe("over stdio", () => {
  it("a request past the share of requests in flight gets the exact -32000 line; the next one after is served", async () => {
    const s = stdio({ requests: { perPrincipal: 1 } });
    s.send(tool(1, "wait"));
    await until(() => s.seen.waiting === 1);
    s.send(tool(2, "wait"));
    await until(() => s.lines.length === 2);
    expect(s.lines[1]).toBe(
      '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Too Many Requests: this caller holds its share of requests in flight (1)","data":{"limit":"requests","scope":"principal","max":1,"retryAfterMs":1000}}}',
    );
    s.open();
    await until(() => s.lines.length === 3);
    s.send(tool(3, "echo"));
    await until(() => s.lines.length === 4);
    expect(JSON.parse(s.lines[3]!)).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { content: [{ type: "text", text: "" }] },
    });
    s.stdin.end();
    await s.served.closed;
  });

  it("a spent rate is the same error, naming the rules, with the wait until a token is back", async () => {
    const s = stdio({ rates: { tools: { search: { perMinute: 1 } } } });
    s.send(tool(1, "search"));
    s.send(tool(2, "search"));
    s.send(tool(3, "echo"));
    await until(() => s.lines.length === 4);
    const byId = new Map(s.lines.map((l) => [JSON.parse(l).id, JSON.parse(l)]));
    expect(byId.get(2)).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32000,
        message: "Too Many Requests: this caller's rate of tools/call:search is spent",
        data: {
          limit: "rate",
          scope: "principal",
          max: 1,
          retryAfterMs: expect.any(Number),
          rules: ["tools/call:search"],
        },
      },
    });
    expect(byId.get(2).error.data.retryAfterMs).toBeGreaterThan(59_000);
    expect(byId.get(1).result.content[0].text).toBe("found");
    expect(byId.get(3).result.content[0].text).toBe("");
    s.stdin.end();
    await s.served.closed;
  });
});

describe("rate limits over HTTP", () => {
  it("per principal, method and tool: 429 with the Retry-After of the bucket, in both eras", async () => {
    const { server } = governed({
      rates: {
        methods: { "tools/call": { perMinute: 60, burst: 3 } },
        tools: { search: { perMinute: 6, burst: 1 } },
      },
    });
    const handler = httpOf(server);
    const call = (who: string, id: number, name: string) =>
      modern(handler, who, id, "tools/call", { name, arguments: {} });
    expect((await call("alice", 1, "search")).status).toBe(200);
    const spent = await call("alice", 2, "search");
    expect([spent.status, spent.headers.get("retry-after")]).toEqual([429, "10"]);
    expect(await spent.json()).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32000,
        message: "Too Many Requests: this caller's rate of tools/call and tools/call:search is spent",
        data: {
          limit: "rate",
          scope: "principal",
          max: 1,
          retryAfterMs: expect.any(Number),
          rules: ["tools/call", "tools/call:search"],
        },
      },
    });
    // the refused call took nothing from tools/call: two echoes are left in its burst of three
    expect((await call("alice", 3, "echo")).status).toBe(200);
    expect((await call("alice", 4, "echo")).status).toBe(200);
    const method = await call("alice", 5, "echo");
    expect([method.status, method.headers.get("retry-after")]).toEqual([429, "1"]);
    expect((await call("bob", 6, "search")).status).toBe(200);
  });

  it("anonymous callers share one bucket, unless limits.key names them", async () => {
    const rates = { methods: { "tools/call": { perMinute: 1 } } };
    const from = (c: string) => ({ "x-client": c });
    for (const key of [undefined, (r: Request) => r.headers.get("x-client") ?? undefined]) {
      const { server } = governed({ rates });
      const handler = httpOf(server, key ? { limits: { key } } : {});
      const call = (id: number, c: string) =>
        modern(handler, undefined, id, "tools/call", { name: "echo", arguments: {} }, undefined, from(c));
      expect((await call(1, "a")).status).toBe(200);
      expect((await call(2, "b")).status).toBe(key ? 200 : 429);
      expect((await call(3, "a")).status).toBe(429);
    }
  });
});
