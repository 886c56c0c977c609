/**
 * An observer's hook that throws (an audit log whose store is down): reported to `onError`, and the
 * message is handled and answered exactly once, as without that observer.
 */
import { describe, expect, it } from "vitest";
import type { MessageObservation, Observer } from "../../src/index.js";
import { McpServer } from "../../src/index.js";
import { rawPeer, unhandledDuring } from "../helpers.js";

const boom = (): never => {
  throw new Error("audit log down");
};

/** A tool that logs once, served beside `observer`; what onError heard. */
function server(observer?: Observer) {
  const errors: unknown[] = [];
  const s = new McpServer({
    name: "t",
    version: "1.0.0",
    onError: (e: unknown, info: unknown) => void errors.push([String(e), info]),
  });
  s.tool("echo", {
    run: async (_args, ctx) => {
      await ctx.log("info", "working");
      return "hi";
    },
  });
  if (observer) s.use({ id: "com.example/audit", observer });
  return { s, errors };
}

/** What a client sees over one session: the answers and everything else sent to it. */
async function session(observer?: Observer) {
  const { s, errors } = server(observer);
  const peer = rawPeer(s);
  const unhandled = await unhandledDuring(async () => {
    await peer.initialize();
    await peer.send({ jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "debug" } });
  });
  const answers = [
    await peer.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo" } }),
    await peer.send({ jsonrpc: "2.0", id: 3, method: "ping" }),
    await peer.send({ jsonrpc: "2.0", id: 4, method: "no/such" }),
  ];
  return { answers, sent: peer.sent, errors, unhandled };
}

const pass = <T>(run: () => T) => run();
const keep = (a: unknown) => a as never;
const observation = (o: Partial<MessageObservation>): MessageObservation => ({ run: pass, end: keep, ...o });

const FAULTY: [hook: string, observer: Observer][] = [
  ["message", { message: boom }],
  ["run", { message: () => observation({ run: boom }) }],
  [
    "run",
    {
      message: () =>
        observation({
          run: (run) => {
            run();
            return boom();
          },
        }),
    },
  ],
  ["end", { message: () => observation({ end: boom }) }],
  ["send", { message: () => observation({ send: boom }) }],
  ["send", { message: () => observation({ send: () => boom }) }],
  [
    "send",
    {
      message: () =>
        observation({
          send: (send) => (m) => {
            send(m);
            boom();
          },
        }),
    },
  ],
];

describe("an observer's hook that throws", () => {
  it.each(FAULTY)(
    "%s: reported to onError; every message answered once, as without the observer",
    async (hook, observer) => {
      const plain = await session();
      const faulty = await session(observer);
      expect(faulty.unhandled).toEqual([]);
      expect(faulty.answers).toEqual(plain.answers);
      expect(faulty.sent).toEqual(plain.sent);
      expect(plain.sent).toHaveLength(1); // the log message, sent once
      expect(faulty.errors.length).toBeGreaterThan(0);
      expect(faulty.errors).toContainEqual([
        "Error: audit log down",
        { method: hook, requestId: "observer", name: "com.example/audit" },
      ]);
      expect(plain.errors).toEqual([]);
    },
  );

  it("response, connect and change: reported, and the server goes on", async () => {
    const { s, errors } = server({ response: boom, connect: boom, change: boom });
    const peer = rawPeer(s);
    await peer.initialize("2025-11-25", { roots: {} });
    const roots = s.tool("roots", { run: async (_a, ctx) => JSON.stringify(await ctx.roots()) });
    const call = peer.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "roots" } });
    await expect.poll(() => peer.sent.find((m) => m.method === "roots/list")).toBeDefined();
    const ask = peer.sent.find((m) => m.method === "roots/list");
    await peer.send({ jsonrpc: "2.0", id: ask.id, result: { roots: [] } });
    expect((await call).result.content).toEqual([{ type: "text", text: "[]" }]);
    roots.remove();
    expect(errors.map((e) => (e as [string, { method: string }])[1].method).sort()).toEqual([
      "change",
      "connect",
      "response",
    ]);
  });

  it("a server.handle with a throwing message hook never rejects", async () => {
    const { s, errors } = server({ message: boom });
    const conn = s.connect({ send: () => {} });
    await expect(s.handle({ jsonrpc: "2.0", id: 1, method: "ping" }, conn)).resolves.toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {},
    });
    expect(errors).toHaveLength(1);
  });
});
