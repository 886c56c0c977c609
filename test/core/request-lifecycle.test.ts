/** A request's life at its edges: a connection closed under it, a twin id, a question after its end. */
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { rawPeer, tick, twoQuestions, unhandledDuring } from "../helpers.js";
import { meta, modernPeer } from "../modern-helpers.js";

const CLOSED = { code: -32600, message: "Invalid Request: the connection is closed" };

function server() {
  const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
  const ran: string[] = [];
  s.tool("side_effect", {
    run: () => {
      ran.push("side_effect");
      return "done";
    },
  });
  s.resource("test://a", { read: () => "a" });
  return { s, ran };
}

describe("a request on a closed connection", () => {
  it("2026-07-28: subscriptions/listen is answered at once instead of staying open forever", async () => {
    const { s } = server();
    const p = modernPeer(s);
    p.connection.close();
    const listen = p.request("subscriptions/listen", { notifications: { toolsListChanged: true } });
    const settled = await Promise.race([listen, tick().then(() => "pending")]);
    expect(settled).toEqual({ answer: { jsonrpc: "2.0", id: 1, error: CLOSED }, stream: [] });
    // nothing was left open: a change reaches no stream
    s.tool("later", { run: () => "x" });
    await tick();
    expect((settled as { stream: unknown[] }).stream).toEqual([]);
  });

  it("2026-07-28: a tool is not run for a peer that is gone", async () => {
    const { s, ran } = server();
    const p = modernPeer(s);
    p.connection.close();
    expect((await p.request("tools/call", { name: "side_effect" })).answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: CLOSED,
    });
    expect(ran).toEqual([]);
  });

  it("initialize era: the answer says the connection is closed, not that it was never initialized", async () => {
    const { s, ran } = server();
    const p = rawPeer(s);
    await p.initialize();
    p.connection.close();
    expect(
      await p.send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "side_effect" } }),
    ).toEqual({ jsonrpc: "2.0", id: 5, error: CLOSED });
    expect(ran).toEqual([]);
  });
});

describe("2026-07-28: the same id twice at once", () => {
  it("the second is refused while the first is in flight, even when both may ask for input", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    s.tool("slow", {
      run: async () => {
        runs++;
        await gate;
        return "slow";
      },
    });
    const p = modernPeer(s);
    const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "slow", _meta: meta() } };
    const first = p.raw(call);
    const second = p.raw(call);
    await tick();
    release();
    expect((await second).answer).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32600, message: "Invalid Request: a request with this id is still in flight" },
    });
    expect((await first).answer.result.content).toEqual([{ type: "text", text: "slow" }]);
    expect(runs).toBe(1);
  });
});

describe("2026-07-28: a connection closed while a request's round opens", () => {
  it("runs no handler for it", async () => {
    const { s, ran } = server();
    const p = modernPeer(s);
    const call = p.request("tools/call", { name: "side_effect" });
    p.connection.close();
    expect((await call).answer).toEqual({ jsonrpc: "2.0", id: 1, error: CLOSED });
    expect(ran).toEqual([]);
  });
});

describe("initialize era: a connection closed while a handler has two questions open", () => {
  it("leaves no unhandled rejection behind (the handler awaited only the first)", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    twoQuestions(s, false);
    const p = rawPeer(s);
    await p.initialize("2025-11-25", { elicitation: {} });
    const unhandled = await unhandledDuring(async () => {
      const call = p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "two" } });
      await tick();
      expect(p.sent.filter((m) => m.method === "elicitation/create")).toHaveLength(2);
      p.connection.close();
      expect(await call).toBeUndefined();
    });
    expect(unhandled).toEqual([]);
  });
});

describe("initialize era: a question asked after the request was cancelled", () => {
  it("is refused without telling the client to cancel a request it never received", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", onError: () => {} });
    let outcome: unknown;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    s.tool("late", {
      run: async (_a, ctx) => {
        await new Promise((r) => ctx.signal.addEventListener("abort", r));
        outcome = await ctx
          .elicit({ message: "Still there?", requestedSchema: { type: "object", properties: {} } })
          .catch((e: Error) => e.message);
        done();
        return "late";
      },
    });
    const p = rawPeer(s);
    await p.initialize("2025-11-25", { elicitation: {} });
    const call = p.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "late" } });
    await tick();
    await p.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
    await finished;
    expect(await call).toBeUndefined();
    expect(outcome).toBe("Cancelled by the client");
    expect(p.sent).toEqual([]);
  });
});
