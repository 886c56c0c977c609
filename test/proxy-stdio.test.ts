// picomcp/proxy in front of stdio commands: the official SDK v1 server (2025 era) and the SDK v2 server
// (2026-07-28, which the proxy's client negotiates), each started as a child process; a child that dies
// mid-call answers that call with an error, the next ones with a clear one, and comes back by itself.
import { fileURLToPath } from "node:url";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { createProxy, type ProxyServer } from "../src/proxy/index.js";
import { unhandledDuring } from "./helpers.js";
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

describe("a stdio remote's question while two calls are in flight", () => {
  it("is refused, never asked of a client that did not make the call", async () => {
    const { proxy } = await proxyOf(v1);
    const asked: string[] = [];
    const clients = await Promise.all(
      ["Ann", "Bob"].map(async (name) => {
        const client = await sdkClient(proxy, { capabilities: { elicitation: {} } });
        client.setRequestHandler(ElicitRequestSchema, async () => {
          asked.push(name);
          return { action: "accept", content: { name } };
        });
        return client;
      }),
    );
    const [ann, bob] = clients as [(typeof clients)[0], (typeof clients)[0]];
    const abort = new AbortController();
    let inFlight!: () => void;
    const started = new Promise<void>((r) => {
      inFlight = r;
    });
    const slow = ann
      .callTool({ name: "slow" }, undefined, { signal: abort.signal, onprogress: () => inFlight() })
      .catch((e) => e);
    await started;
    // the v1 server makes the refused elicitation its tool's error result
    const result = await bob.callTool({ name: "ask" });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("cannot tell which of its requests in flight");
    expect(asked).toEqual([]);
    abort.abort();
    await slow;
    // alone again, it is asked of the one calling
    expect(await bob.callTool({ name: "ask" })).toEqual({ content: [{ type: "text", text: "Hello, Bob!" }] });
    expect(asked).toEqual(["Bob"]);
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
