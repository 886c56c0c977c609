/**
 * The one seam, as a third party uses it: an extension built from the public API only adds methods
 * and a notification, keeps per-session state in a slot of its own, wraps a built-in method and
 * declares itself per revision; checked on the wire in both eras, and through the official SDK client.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type Extension, McpError, McpServer, sessionSlot } from "../../src/index.js";
import { rawPeer } from "../helpers.js";
import { meta, modernPeer, SERVER_META } from "../modern-helpers.js";
import { BridgeTransport } from "../sdk-bridge.js";

const NOTES = "com.example/notes";

/** What an application would write: notes kept per session, a call counter around tools/call. */
function notesExtension(): Extension {
  const notes = sessionSlot("notes", () => [] as string[]);
  const calls = sessionSlot("calls", () => ({ n: 0 }));
  return {
    id: NOTES,
    settings: () => ({ maxNotes: 3 }),
    methods: {
      "notes/add": {
        clientMustDeclare: true,
        run: (params, ctx) => {
          const list = ctx.sessionState(notes);
          if (typeof params.text !== "string") throw new McpError(-32602, "notes/add needs a text string");
          if (list.length >= 3) throw new McpError(-32602, "At most 3 notes");
          list.push(params.text);
          return { count: list.length };
        },
      },
      "notes/list": { run: (_params, ctx) => ({ notes: ctx.sessionState(notes) }) },
      "notes/revision": {
        era: "session",
        run: (_params, ctx) => ({ stateless: ctx.features.stateless, version: ctx.client.protocolVersion }),
      },
    },
    notifications: {
      "notes/clear": (_params, ctx) => void ctx.sessionState(notes).splice(0),
    },
    wrap: {
      "tools/call": async (_params, ctx, next) => {
        const count = ++ctx.sessionState(calls).n;
        const result = (await next()) as { _meta?: object };
        return { ...result, _meta: { ...result._meta, [`${NOTES}/calls`]: count } };
      },
    },
  };
}

function server() {
  const s = new McpServer({ name: "t", version: "1.0.0" });
  s.tool("echo", { run: () => "hi" });
  return { s, registration: s.use(notesExtension()) };
}

describe("a third-party extension through server.use, in a session (2025-11-25)", () => {
  it("is declared at initialize, keeps state per session, handles its notification and wraps tools/call", async () => {
    const { s } = server();
    const a = rawPeer(s);
    const init = await a.initialize();
    expect(init.result.capabilities.extensions).toEqual({ [NOTES]: { maxNotes: 3 } });
    expect(await a.send({ jsonrpc: "2.0", id: 1, method: "notes/add", params: { text: "x" } })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { count: 1 },
    });
    await a.send({ jsonrpc: "2.0", id: 2, method: "notes/add", params: { text: "y" } });
    // another session has its own slot
    const b = rawPeer(s);
    await b.initialize();
    expect(await b.send({ jsonrpc: "2.0", id: 1, method: "notes/list" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { notes: [] },
    });
    expect((await a.send({ jsonrpc: "2.0", id: 3, method: "notes/list" })).result).toEqual({
      notes: ["x", "y"],
    });
    await a.send({ jsonrpc: "2.0", method: "notes/clear" });
    expect((await a.send({ jsonrpc: "2.0", id: 4, method: "notes/list" })).result).toEqual({ notes: [] });
    // its errors are the client's errors, as for a built-in method
    expect(await a.send({ jsonrpc: "2.0", id: 5, method: "notes/add", params: {} })).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32602, message: "notes/add needs a text string" },
    });
    // the wrapper runs around the built-in tools/call, counting per session
    for (const id of [6, 7])
      expect(await a.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo" } })).toEqual({
        jsonrpc: "2.0",
        id,
        result: { content: [{ type: "text", text: "hi" }], _meta: { [`${NOTES}/calls`]: id - 5 } },
      });
    expect((await a.send({ jsonrpc: "2.0", id: 8, method: "notes/revision" })).result).toEqual({
      stateless: false,
      version: "2025-11-25",
    });
  });

  it("is gone once removed: a new session is not told of it and its methods answer -32601", async () => {
    const { s, registration } = server();
    registration.remove();
    const a = rawPeer(s);
    const init = await a.initialize();
    expect(init.result.capabilities.extensions).toBeUndefined();
    expect(await a.send({ jsonrpc: "2.0", id: 1, method: "notes/list" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32601, message: "Method not found: notes/list" },
    });
    // and can be added again
    s.use(notesExtension());
    const b = rawPeer(s);
    expect((await b.initialize()).result.capabilities.extensions).toEqual({ [NOTES]: { maxNotes: 3 } });
  });

  it("works with the official SDK client's custom requests", async () => {
    const { s } = server();
    const client = new Client({ name: "sdk", version: "1" });
    await client.connect(new BridgeTransport(s));
    const added = await client.request(
      { method: "notes/add", params: { text: "from the SDK" } },
      z.object({ count: z.number() }),
    );
    expect(added).toEqual({ count: 1 });
    await client.notification({ method: "notes/clear" });
    const listed = await client.request({ method: "notes/list" }, z.object({ notes: z.array(z.string()) }));
    expect(listed).toEqual({ notes: [] });
    await client.close();
  });
});

describe("a third-party extension in stateless requests (2026-07-28)", () => {
  it("needs the client to declare it (-32021), then answers with resultType and the server's _meta", async () => {
    const { s } = server();
    const p = modernPeer(s);
    const refused = await p.request("notes/add", { text: "x" });
    expect(refused.answer.error.code).toBe(-32021);
    expect(refused.answer.error.data).toEqual({ requiredCapabilities: { extensions: { [NOTES]: {} } } });
    const caps = { extensions: { [NOTES]: {} } };
    for (const id of [1, 2]) {
      // a stateless request has no session: each one starts its slots afresh
      const added = await p.raw({
        jsonrpc: "2.0",
        id,
        method: "notes/add",
        params: { text: "x", _meta: meta(caps) },
      });
      expect(added.answer).toEqual({
        jsonrpc: "2.0",
        id,
        result: { count: 1, resultType: "complete", _meta: SERVER_META },
      });
    }
    // declared in server/discover; a session-only method does not exist here
    const discover = await p.request("server/discover");
    expect(discover.answer.result.capabilities.extensions).toEqual({ [NOTES]: { maxNotes: 3 } });
    expect((await p.request("notes/revision", {}, caps)).answer.error).toEqual({
      code: -32601,
      message: "Method not found: notes/revision",
    });
  });
});

describe("the seam refuses mistakes", () => {
  it("refuses a taken method, a taken id and a method without run, naming them", () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    expect(() => s.use({ id: "x", methods: { "tools/list": { run: () => ({}) } } })).toThrow(
      "Method tools/list is already added (by picomcp/tools)",
    );
    expect(() => s.use({ id: "picomcp/tools", requires: [] })).toThrow(
      "Extension picomcp/tools is already added",
    );
    expect(() => s.use({ id: "y", methods: { "y/z": {} as never } })).toThrow(
      "Method y/z of y needs a run function",
    );
  });

  it("runs the method once when a wrapper calls next() twice, and reports the mistake", async () => {
    const errors: unknown[] = [];
    const s = new McpServer({ name: "t", version: "1.0.0", onError: (e) => void errors.push(e) });
    let runs = 0;
    s.tool("count", { run: () => String(++runs) });
    s.use({
      id: "twice",
      wrap: {
        "tools/call": async (_p, _ctx, next) => {
          await next();
          return next();
        },
      },
    });
    const a = rawPeer(s);
    await a.initialize();
    expect(await a.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "count" } })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32603, message: "Internal error" },
    });
    expect(runs).toBe(1);
    expect(String(errors[0])).toContain("twice: next() called twice in its wrapper of tools/call");
  });

  it("wraps in the order extensions were added, the first outermost", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    const order: string[] = [];
    s.tool("t", {
      run: () => {
        order.push("run");
        return "ok";
      },
    });
    for (const name of ["outer", "inner"])
      s.use({
        id: name,
        wrap: {
          "tools/call": async (_p, _c, next) => {
            order.push(`${name} in`);
            const r = await next();
            order.push(`${name} out`);
            return r;
          },
        },
      });
    const a = rawPeer(s);
    await a.initialize();
    await a.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
    expect(order).toEqual(["outer in", "inner in", "run", "inner out", "outer out"]);
  });
});
