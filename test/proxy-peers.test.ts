// picomcp/proxy in front of two more remotes: the official SDK v2 server over Streamable HTTP (its
// `createMcpHandler`, which the proxy's client speaks 2026-07-28 with) and picomcp's own server over
// stdio. Each: a call, progress down and cancellation up, and a list change announced downstream.
import { fileURLToPath } from "node:url";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { createProxy, type ProxyServer, type UpstreamTarget } from "../src/proxy/index.js";
import { serveV2Http } from "./fixtures/proxy-upstream-v2-http.js";
import { sdkClient } from "./sdk-bridge.js";

const pico = fileURLToPath(new URL("./fixtures/proxy-upstream-pico.js", import.meta.url));
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const text = (r: unknown) => (r as { content: { text: string }[] }).content[0]?.text;

const remotes: [string, () => Promise<UpstreamTarget>, { name: string; version: string }, string][] = [
  [
    "the SDK v2 server over Streamable HTTP",
    async () => {
      const remote = await serveV2Http();
      closers.push(() => remote.close());
      return { url: remote.url };
    },
    { name: "v2-http-upstream", version: "2.1.0" },
    "2026-07-28",
  ],
  [
    "picomcp's own server over stdio",
    async () => ({ command: process.execPath, args: [pico], stderr: "ignore" }),
    { name: "pico-stdio-upstream", version: "4.0.0" },
    "2026-07-28",
  ],
];

for (const [what, start, info, revision] of remotes)
  describe(`a proxy of ${what}`, () => {
    it("forwards a call, passes progress down and cancellation up, and announces a list change", async () => {
      const proxy: ProxyServer = await createProxy(await start(), { onError: () => {} });
      closers.push(() => proxy.shutdown());
      expect(proxy.upstreamInfo).toMatchObject(info);
      expect(proxy.upstreamProtocolVersion).toBe(revision);
      const client = await sdkClient(proxy);
      closers.push(() => client.close());
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
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("added");
      expect(await client.callTool({ name: "added" })).toEqual({ content: [{ type: "text", text: "new" }] });
    });
  });
