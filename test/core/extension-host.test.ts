/**
 * `Extension.attach(host)`: what an application's extension reaches outside a request — the open
 * sessions (notified, their slots read), `onError`, the caller limits — the same host the built-ins
 * use; and `sessionEnd(session)`, once per session with its slots. Raw JSON-RPC through the seam.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  type Extension,
  type ExtensionHost,
  McpServer,
  type SessionHandle,
  sessionSlot,
} from "../../src/index.js";
import { connect } from "../../src/testing.js";

const TAG = sessionSlot("com.example/tag", () => ({ tag: "" }));

function setup(options: object = {}) {
  const errors: unknown[] = [];
  const server = new McpServer({
    name: "t",
    version: "1.0.0",
    onError: (e, info) => void errors.push([String(e), info]),
    ...options,
  });
  const attached: ExtensionHost[] = [];
  const ended: { id: string; tag: string | undefined }[] = [];
  const ext: Extension = {
    id: "com.example/host",
    attach: (h) => void attached.push(h),
    sessionEnd: (s: SessionHandle) => void ended.push({ id: s.sessionId, tag: s.peek(TAG)?.tag }),
    methods: {
      "tag/set": {
        era: "session",
        run: (p, ctx) => {
          ctx.sessionState(TAG).tag = String(p.tag);
          return {};
        },
      },
      "hold/take": {
        run: (p, ctx) => {
          attached[0]!.limits.take("listens", ctx.caller, Number(p.units ?? 1));
          return { took: Number(p.units ?? 1) };
        },
      },
    },
  };
  server.use(ext);
  return { server, errors, attached, ended };
}

const send = (c: { send(t: string): Promise<unknown> }, id: number, method: string, params: object = {}) =>
  c.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));

describe("Extension.attach: the host", () => {
  it("is given once, when the extension is added; the same host to every extension of the server", () => {
    const { server, attached } = setup();
    expect(attached).toHaveLength(1);
    const other: ExtensionHost[] = [];
    server.use({ id: "com.example/other", attach: (h) => void other.push(h) });
    expect(other).toEqual([attached[0]]);
    expect(Object.isFrozen(attached[0])).toBe(true);
  });

  it("an attach that throws: server.use throws it and the extension is not added", async () => {
    const { server } = setup();
    const ext: Extension = {
      id: "com.example/bad",
      attach: () => {
        throw new Error("no room");
      },
      methods: { "bad/call": { run: () => ({}) } },
    };
    expect(() => server.use(ext)).toThrow("no room");
    const c = await connect(server);
    expect(await send(c, 1, "bad/call")).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32601, message: "Method not found: bad/call" },
    });
    const { attach: _, ...without } = ext;
    expect(() => server.use(without)).not.toThrow();
  });

  it("sessions(): the open, initialized sessions; notify reaches each, their slots are read without being made", async () => {
    const { server, attached } = setup();
    const host = attached[0]!;
    const a = await connect(server);
    const b = await connect(server);
    const pending = server.connect({ send: () => {} }); // no initialize yet: not a session
    expect(await send(a, 1, "tag/set", { tag: "alpha" })).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    const seen = [...host.sessions()].map((s) => [s.sessionId, s.peek(TAG)?.tag, s.features.version]);
    expect(seen).toEqual([
      [a.connection.id, "alpha", "2025-11-25"],
      [b.connection.id, undefined, "2025-11-25"],
    ]);
    expect(b.connection.peek(TAG)).toBeUndefined();
    const from = [a.notifications.length, b.notifications.length];
    for (const s of host.sessions()) s.notify("notifications/example/hello", { to: s.peek(TAG)?.tag ?? "?" });
    expect(a.notifications.slice(from[0])).toEqual([
      { jsonrpc: "2.0", method: "notifications/example/hello", params: { to: "alpha" } },
    ]);
    expect(b.notifications.slice(from[1])).toEqual([
      { jsonrpc: "2.0", method: "notifications/example/hello", params: { to: "?" } },
    ]);
    b.close();
    expect([...host.sessions()].map((s) => s.sessionId)).toEqual([a.connection.id]);
    pending.close();
  });

  it("report: onError hears it, as the extension names it", () => {
    const { errors, attached } = setup();
    attached[0]!.report(new Error("lost"), { method: "example/sync", name: "com.example/host" });
    expect(errors).toEqual([
      ["Error: lost", { method: "example/sync", requestId: "host", name: "com.example/host" }],
    ]);
  });

  it("limits: a caller at its share of a named share is refused on the wire; an unknown share throws", async () => {
    const { server, attached } = setup({ limits: { listens: { perPrincipal: 2 } } });
    const c = await connect(server);
    expect(await send(c, 1, "hold/take", { units: 2 })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { took: 2 },
    });
    expect(await send(c, 2, "hold/take")).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32000,
        message: "Too Many Requests: this caller holds its share of listen streams (2)",
        data: { limit: "listens", scope: "principal", max: 2, retryAfterMs: 5000 },
      },
    });
    const limits = attached[0]!.limits;
    expect(() => limits.take("widgets" as never, "k")).toThrow(
      "Unknown share widgets: one of requests, inputRounds, tasks, runningTasks, listens, subscriptionBytes",
    );
    const give = limits.claim("subscriptionBytes", "k", 10);
    give();
    give();
    expect(() => limits.claim("subscriptionBytes", "k", 2 ** 20)).not.toThrow();
  });
});

describe("Extension.sessionEnd: the session's handle, once", () => {
  it("reads the session's slots; endGracefully then close() call it once", async () => {
    const { server, ended } = setup();
    const a = await connect(server);
    const b = await connect(server);
    await send(a, 1, "tag/set", { tag: "alpha" });
    server.endGracefully(a.connection);
    server.endGracefully(a.connection);
    expect(ended).toEqual([{ id: a.connection.id, tag: "alpha" }]);
    server.close();
    expect(ended).toEqual([
      { id: a.connection.id, tag: "alpha" },
      { id: b.connection.id, tag: undefined },
    ]);
    server.close();
    expect(ended).toHaveLength(2);
  });
});

describe("the built-ins hold nothing an application's extension cannot get", () => {
  it("no built-in names the governor or the core's connections: they reach the server through the host", () => {
    const dirs = ["src/ext", "src/resources", "src/tools", "src/prompts"];
    const found: string[] = [];
    for (const dir of dirs)
      for (const f of readdirSync(dir).filter((n) => n.endsWith(".ts"))) {
        const text = readFileSync(`${dir}/${f}`, "utf8");
        if (/limits\/governor\.js|\bconnections\b|\breportError\b|\bgovernor:\s*Governor/.test(text))
          found.push(`${dir}/${f}`);
      }
    expect(found).toEqual([]);
  });
});
