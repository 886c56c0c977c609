// A mounted server's own limits and errors through the parent: its share of requests in flight, its templates' lists; exact JSON.
import { describe, expect, it } from "vitest";
import { type ErrorInfo, McpError, McpServer } from "../src/index.js";
import { rawPeer } from "./helpers.js";

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000 });

const req = (id: number, method: string, params?: object) => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params ? { params } : {}),
});
const call = (id: number, name: string, args: object = {}) =>
  req(id, "tools/call", { name, arguments: args });
const app = (clientId: string) => ({ token: clientId, clientId, scopes: [] });

/**
 * A child allowed `requests` in flight: `wait` holds until the test opens its gate (then ends as
 * `end` says: a result, a thrown error, a rejection) or its request is cancelled; `ping` answers at once.
 */
function gated(requests: { perPrincipal?: number; total?: number }) {
  const gates: (() => void)[] = [];
  const child = new McpServer({ name: "slow", version: "1.0.0", limits: { requests }, onError: () => {} });
  child.tool("wait", {
    input: { type: "object", properties: { end: { type: "string" } } },
    run: async ({ end }: { end?: string }, ctx) => {
      await new Promise<void>((resolve, reject) => {
        gates.push(resolve);
        ctx.signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true });
      });
      if (end === "throw") throw new Error("went wrong");
      if (end === "reject") throw new McpError(-32001, "Refused late");
      return "done";
    },
  });
  child.tool("ping", { run: () => "pong" });
  const parent = new McpServer({ name: "main", version: "1.0.0" });
  parent.mount("m", child);
  return { child, parent, gates };
}

const refusal = (id: number, scope: "principal" | "server") => ({
  jsonrpc: "2.0",
  id,
  error: {
    code: -32000,
    message:
      scope === "principal"
        ? "Too Many Requests: this caller holds its share of requests in flight (1)"
        : "Service Unavailable: the server holds as many requests in flight as it may (1)",
    data: { limit: "requests", scope, max: 1, retryAfterMs: 1000 },
  },
});
const text = (id: number, t: string, isError?: true) => ({
  jsonrpc: "2.0",
  id,
  result: { content: [{ type: "text", text: t }], ...(isError ? { isError } : {}) },
});

describe("a mounted server's share of requests in flight", () => {
  it("refuses a caller's second call at the child's share, as the child does when called directly", async () => {
    const { child, parent, gates } = gated({ perPrincipal: 1 });
    const direct = rawPeer(child, app("app-1"));
    await direct.initialize();
    const held = direct.send(call(1, "wait"));
    await poll(() => gates.length).toBe(1);
    expect(await direct.send(call(2, "ping"))).toEqual(refusal(2, "principal"));
    gates.shift()!();
    expect(await held).toEqual(text(1, "done"));

    const p = rawPeer(parent, app("app-1"));
    await p.initialize();
    const first = p.send(call(1, "m_wait"));
    await poll(() => gates.length).toBe(1);
    expect(await p.send(call(2, "m_ping"))).toEqual(refusal(2, "principal"));
    expect(await p.send(call(3, "m_wait"))).toEqual(refusal(3, "principal"));
    // the parent's own tools are not the child's to count
    parent.tool("own", { run: () => "mine" });
    expect(await p.send(call(4, "own"))).toEqual(text(4, "mine"));
    gates.shift()!();
    expect(await first).toEqual(text(1, "done"));
    expect(await p.send(call(5, "m_ping"))).toEqual(text(5, "pong"));
  });

  it("lets two callers each hold their own share; the child's total counts both", async () => {
    const { parent, gates } = gated({ perPrincipal: 1 });
    const a = rawPeer(parent, app("app-1"));
    const b = rawPeer(parent, app("app-2"));
    await a.initialize();
    await b.initialize();
    const both = [a.send(call(1, "m_wait")), b.send(call(1, "m_wait"))];
    await poll(() => gates.length).toBe(2);
    for (const open of gates.splice(0)) open();
    expect(await Promise.all(both)).toEqual([text(1, "done"), text(1, "done")]);

    const total = gated({ total: 1 });
    const c = rawPeer(total.parent, app("app-1"));
    const d = rawPeer(total.parent, app("app-2"));
    await c.initialize();
    await d.initialize();
    const held = c.send(call(1, "m_wait"));
    await poll(() => total.gates.length).toBe(1);
    expect(await d.send(call(1, "m_ping"))).toEqual(refusal(1, "server"));
    total.gates.shift()!();
    expect(await held).toEqual(text(1, "done"));
    expect(await d.send(call(2, "m_ping"))).toEqual(text(2, "pong"));
  });

  it("gives the share back once the call ends: a result, a thrown error, a rejection, a cancellation", async () => {
    const { parent, gates } = gated({ perPrincipal: 1 });
    const p = rawPeer(parent, app("app-1"));
    await p.initialize();
    let id = 1;
    const ends: [string, unknown][] = [
      ["done", text(0, "done")],
      ["throw", text(0, "went wrong", true)],
      ["reject", { jsonrpc: "2.0", id: 0, error: { code: -32001, message: "Refused late" } }],
      ["cancel", undefined],
    ];
    for (const [end, answer] of ends) {
      const n = id++;
      const running = p.send(call(n, "m_wait", { end }));
      await poll(() => gates.length).toBe(1);
      expect(await p.send(call(id++, "m_ping"))).toEqual(refusal(id - 1, "principal"));
      if (end === "cancel") {
        await p.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: n } });
        gates.shift();
      } else gates.shift()!();
      expect(await running).toEqual(answer && { ...answer, id: n });
      const after = id++;
      expect(await p.send(call(after, "m_ping"))).toEqual(text(after, "pong"));
    }
  });
});

describe("a mounted template's list", () => {
  /** A child with two enumerating templates, one of whose lists throws while `broken` says so, and its `onError`. */
  function files(errors: [string, ErrorInfo][], limits?: object) {
    const state = { broken: true };
    const child = new McpServer({
      name: "files",
      version: "1.0.0",
      onError: (e, info) => void errors.push([String(e), info]),
      ...(limits ? { limits } : {}),
    });
    child.resource("file:///{name}", {
      list: () => {
        if (state.broken) throw new Error("disk gone");
        return [{ uri: "file:///a.txt", name: "a.txt" }];
      },
      read: ({ name }) => `contents of ${name}`,
    });
    child.resource("note://{id}", {
      list: async () => [{ uri: "note://1", name: "one" }],
      read: ({ id }) => `note ${id}`,
    });
    return { child, state };
  }

  it("that throws goes to the child's onError, not the parent's; the client gets what the child gives", async () => {
    const childErrors: [string, ErrorInfo][] = [];
    const parentErrors: unknown[] = [];
    const { child } = files(childErrors);
    const direct = rawPeer(child);
    await direct.initialize();
    const expected = { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "Internal error" } };
    expect(await direct.send(req(1, "resources/list"))).toEqual(expected);
    expect(childErrors).toEqual([["Error: disk gone", { method: "resources/list", requestId: 1 }]]);
    childErrors.length = 0;

    const parent = new McpServer({
      name: "main",
      version: "1.0.0",
      onError: (e) => void parentErrors.push(e),
    });
    parent.mount("files", child);
    const p = rawPeer(parent);
    await p.initialize();
    expect(await p.send(req(1, "resources/list"))).toEqual(expected);
    expect(childErrors).toEqual([["Error: disk gone", { method: "resources/list", requestId: 1 }]]);
    expect(parentErrors).toEqual([]);
  });

  it("runs inside the child's wrappers of resources/list, its rate rules spent once per list of the parent", async () => {
    const errors: [string, ErrorInfo][] = [];
    const { child, state } = files(errors, {
      rates: { methods: { "resources/list": { perMinute: 1, burst: 1 } } },
    });
    state.broken = false;
    const seen: string[] = [];
    child.use({
      id: "com.example/hide-notes",
      wrap: {
        "resources/list": async (_params, ctx, next) => {
          seen.push(ctx.caller);
          const page = (await next()) as { resources: { uri: string }[] };
          return { ...page, resources: page.resources.filter((r) => !r.uri.startsWith("note:")) };
        },
      },
    });
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.resource("main://readme", { read: () => "hello" });
    parent.mount("files", child);
    const p = rawPeer(parent, app("app-1"));
    await p.initialize();
    expect(await p.send(req(1, "resources/list"))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resources: [
          { uri: "main://readme", name: "main://readme" },
          { uri: "file:///a.txt", name: "a.txt" },
        ],
      },
    });
    expect(seen).toEqual(["principal:client::app-1", "principal:client::app-1"]);
    expect(await p.send(req(2, "resources/list"))).toMatchObject({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32000, data: { limit: "rate", scope: "principal" } },
    });
    expect(errors).toEqual([]);
  });
});

describe("a mounted server's share of requests to the client", () => {
  it("counts a 2025 elicit in the child's inputRounds, as when called directly", async () => {
    const child = new McpServer({
      name: "asker",
      version: "1.0.0",
      limits: { inputRounds: { perPrincipal: 1 } },
    });
    child.tool("ask", {
      run: async (_a, ctx) => {
        const r = await ctx.elicit({ message: "Sure?", requestedSchema: { type: "object", properties: {} } });
        return `said ${r.action}`;
      },
    });
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.mount("m", child);
    for (const [server, name] of [
      [child, "ask"],
      [parent, "m_ask"],
    ] as const) {
      const p = rawPeer(server, app("app-1"));
      await p.initialize("2025-11-25", { elicitation: {} });
      const first = p.send(call(1, name));
      await poll(() => p.sent.filter((m) => m.method === "elicitation/create").length).toBe(1);
      expect(await p.send(call(2, name))).toEqual({
        jsonrpc: "2.0",
        id: 2,
        error: {
          code: -32000,
          message: "Too Many Requests: this caller holds its share of open requests to the client (1)",
          data: { limit: "inputRounds", scope: "principal", max: 1, retryAfterMs: 1000 },
        },
      });
      const asked = p.sent.find((m) => m.method === "elicitation/create");
      await p.send({ jsonrpc: "2.0", id: asked.id, result: { action: "decline" } });
      expect(await first).toEqual(text(1, "said decline"));
      // given back: the next one is asked
      const again = p.send(call(3, name));
      await poll(() => p.sent.filter((m) => m.method === "elicitation/create").length).toBe(2);
      const next = p.sent.filter((m) => m.method === "elicitation/create")[1];
      await p.send({ jsonrpc: "2.0", id: next.id, result: { action: "cancel" } });
      expect(await again).toEqual(text(3, "said cancel"));
    }
  });
});
