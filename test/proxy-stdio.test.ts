// picomcp/proxy in front of stdio commands: the official SDK v1 server (2025 era) and the SDK v2 server
// (2026-07-28, which the proxy's client negotiates), each started as a child process; a child that dies
// mid-call answers that call with an error, the next ones with a clear one, and comes back by itself.
import { fileURLToPath } from "node:url";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { createProxy, type ProxyServer } from "../src/proxy/index.js";
import { rawPeer, unhandledDuring } from "./helpers.js";
import { sdkClient } from "./sdk-bridge.js";

const v1 = fileURLToPath(new URL("./fixtures/proxy-upstream-v1.js", import.meta.url));
const v2 = fileURLToPath(new URL("./fixtures/proxy-upstream-v2.js", import.meta.url));
const proxies: ProxyServer[] = [];

afterEach(async () => {
  for (const p of proxies.splice(0)) await p.shutdown();
});

async function proxyOf(script: string, reconnect = { initialDelayMs: 10 }) {
  const proxy = await createProxy(
    { command: process.execPath, args: [script], stderr: "ignore" },
    { reconnect, onError: () => {} },
  );
  proxies.push(proxy);
  const client = await sdkClient(proxy);
  return { proxy, client };
}

const callOf = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} },
});
/** What the proxy sent `sent`'s peer that `match` picks, once it is there. */
async function sentWhere(sent: any[], match: (m: any) => boolean): Promise<any> {
  await expect.poll(() => sent.some(match), { timeout: 10_000 }).toBe(true);
  return sent.find(match);
}
const text = (r: unknown) => (r as { content: { text: string }[] }).content[0]?.text;

for (const [sdk, script, version, revision] of [
  ["v1", v1, "1.2.3", "2025-11-25"],
  ["v2", v2, "2.0.0", "2026-07-28"],
] as const) {
  describe(`a proxy of the SDK ${sdk} server over stdio`, () => {
    it("mirrors its tools, passes progress down, cancellation up and list changes on", async () => {
      const { proxy, client } = await proxyOf(script);
      expect(proxy.upstreamInfo).toMatchObject({ name: `${sdk}-upstream`, version });
      expect(proxy.upstreamProtocolVersion).toBe(revision);
      expect(await client.callTool({ name: "echo", arguments: { text: "hi" } })).toEqual({
        content: [{ type: "text", text: "hi" }],
      });
      const abort = new AbortController();
      const progress: unknown[] = [];
      const call = client.callTool({ name: "slow" }, undefined, {
        signal: abort.signal,
        onprogress: (p) => {
          progress.push(p);
          abort.abort();
        },
      });
      await expect(call).rejects.toThrow();
      expect(progress).toEqual([{ progress: 1, total: 2, message: "half" }]);
      await expect.poll(async () => text(await client.callTool({ name: "cancelled" }))).toBe("1");

      const changed: string[] = [];
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed.push("tools"));
      await client.callTool({ name: "add" });
      await expect.poll(() => changed).toEqual(["tools"]);
      expect(await client.callTool({ name: "added" })).toEqual({ content: [{ type: "text", text: "new" }] });
    });

    it("answers a call the child dies in with an error, then reconnects and announces what changed", async () => {
      const { client } = await proxyOf(script);
      await client.callTool({ name: "add" });
      await expect.poll(async () => (await client.listTools()).tools.map((t) => t.name)).toContain("added");
      const changed: string[] = [];
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed.push("tools"));
      const crashed = await client.callTool({ name: "crash" }).catch((e) => e);
      expect(crashed).toMatchObject({ code: -32603 });
      expect(crashed.message).toMatch(/upstream server/);
      // a new child is started: calls work again
      await expect
        .poll(
          async () =>
            text(await client.callTool({ name: "echo", arguments: { text: "back" } }).catch(() => undefined)),
          {
            timeout: 15_000,
          },
        )
        .toBe("back");
      // the new child has no "added": listed again, and told
      await expect.poll(() => changed).toEqual(["tools"]);
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("added");
    });
  });
}

describe("a 2025 stdio remote's questions and log messages, which name no call", () => {
  it("are refused and dropped by default, even with one call in flight", async () => {
    const { proxy } = await proxyOf(v1);
    const peer = rawPeer(proxy, { subject: "bob" });
    await peer.initialize("2025-11-25", { elicitation: {} });
    // the v1 server makes the refused elicitation its tool's error result
    expect(await peer.send(callOf(1, "ask"))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        content: [
          {
            type: "text",
            text: "MCP error -32600: The proxy cannot tell which of its requests in flight asks elicitation/create: a stdio server names none",
          },
        ],
        isError: true,
      },
    });
    // the log message comes before the result on the child's stdout: dropped, never anyone's
    expect(await peer.send(callOf(2, "shout"))).toMatchObject({ result: { content: [{ text: "shouted" }] } });
    expect(peer.sent).toEqual([]);
  });

  it("with guessStdioCaller, go to the calls in flight only while they are all one caller's", async () => {
    const proxy = await createProxy(
      { command: process.execPath, args: [v1], stderr: "ignore" },
      { guessStdioCaller: true, onError: () => {} },
    );
    proxies.push(proxy);
    const ann = rawPeer(proxy, { subject: "ann" });
    const bob = rawPeer(proxy, { subject: "bob" });
    for (const peer of [ann, bob]) await peer.initialize("2025-11-25", { elicitation: {} });
    /** Calls `ask` as `peer`, answering the question it is asked with `name`. */
    const ask = async (peer: typeof ann, id: number, name: string) => {
      const answer = peer.send(callOf(id, "ask"));
      const question = await sentWhere(peer.sent, (m) => m.method === "elicitation/create");
      peer.sent.splice(peer.sent.indexOf(question), 1);
      await peer.send({ jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { name } } });
      return answer;
    };
    const slow = (peer: typeof ann, id: number) => {
      const call = peer.send({
        ...callOf(id, "slow"),
        params: { name: "slow", _meta: { progressToken: id } },
      });
      return {
        call,
        started: sentWhere(peer.sent, (m) => m.method === "notifications/progress"),
        cancel: () =>
          peer.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } }),
      };
    };
    // Ann's call in flight: Bob's question is refused, never asked of Ann
    const annSlow = slow(ann, 10);
    await annSlow.started;
    expect(await bob.send(callOf(11, "ask"))).toMatchObject({
      result: {
        content: [{ text: expect.stringContaining("cannot tell which of its requests in flight") }],
        isError: true,
      },
    });
    expect(ann.sent.filter((m) => m.method === "elicitation/create")).toEqual([]);
    await annSlow.cancel();
    await annSlow.call;
    // Bob's own calls only (one slow, one asking): asked of Bob
    const bobSlow = slow(bob, 12);
    await bobSlow.started;
    expect(await ask(bob, 13, "Bob")).toEqual({
      jsonrpc: "2.0",
      id: 13,
      result: { content: [{ type: "text", text: "Hello, Bob!" }] },
    });
    await bobSlow.cancel();
    await bobSlow.call;
  });
});

describe("a proxy that cannot start", () => {
  it("rejects with the reason: nothing listening, a command that does not run, two tools under one name", async () => {
    await expect(createProxy({ url: "http://127.0.0.1:9/mcp" })).rejects.toThrow();
    await expect(createProxy({ command: "/nonexistent/server", stderr: "ignore" })).rejects.toThrow();
    await expect(
      createProxy(
        { command: process.execPath, args: [v1], stderr: "ignore" },
        { tools: { rename: { echo: "slow" } } },
      ),
    ).rejects.toThrow('the remote tools "echo" and "slow" would both be shown as "slow"');
  });
});

describe("a proxy whose child stays down", () => {
  it("answers every request with a clear error, and the process stays up", async () => {
    const { client } = await proxyOf(v1, { initialDelayMs: 60_000 });
    const unhandled = await unhandledDuring(async () => {
      await client.callTool({ name: "crash" }).catch(() => {});
      const errors = await Promise.all(
        [1, 2, 3].map(() => client.callTool({ name: "echo", arguments: { text: "x" } }).catch((e) => e)),
      );
      for (const e of errors) {
        expect(e).toMatchObject({ code: -32603 });
        expect(e.message).toContain("The upstream server is unavailable");
      }
      // its lists are still served
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("echo");
    });
    expect(unhandled).toEqual([]);
  });
});
