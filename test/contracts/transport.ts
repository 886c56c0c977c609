// The transport contract: the same behaviour, driven by the official SDK client, over any transport.
// Each transport runs it in a few lines (test/contracts/stdio.test.ts, test/contracts/http.test.ts)
// against the server of test/fixtures/contract-server.js.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "./support.js";

/** A started contract server and a client transport connected to it. */
export interface ContractTarget {
  transport: Transport;
  close(): void | Promise<void>;
}

/** Runs the contract against the transport that `start` connects to a fresh contract server. */
export function transportContract(name: string, start: () => Promise<ContractTarget>): void {
  describe(`transport contract: ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0)) await c();
    });

    async function connect() {
      const target = await start();
      const client = new Client(
        { name: "contract-client", version: "1.0.0" },
        { capabilities: { sampling: {}, elicitation: {} } },
      );
      const events: { method: string; params?: any }[] = [];
      client.fallbackNotificationHandler = async (n) => void events.push(n);
      client.setRequestHandler(CreateMessageRequestSchema, async () => ({
        role: "assistant",
        content: { type: "text", text: "4" },
        model: "test-model",
      }));
      client.setRequestHandler(ElicitRequestSchema, async (r) => ({
        action: "accept",
        content: { name: `Ada (asked: ${r.params.message})` },
      }));
      cleanups.push(async () => {
        await client.close();
        await target.close();
      });
      await client.connect(target.transport);
      // what arrived, in the order the transport delivered it (the client's handlers run later)
      const wire: any[] = [];
      const deliver = target.transport.onmessage!;
      target.transport.onmessage = (message, extra) => {
        wire.push(message);
        deliver(message, extra);
      };
      return { client, events, wire };
    }

    it("initializes: server info and capabilities", async () => {
      const { client } = await connect();
      expect(client.getServerVersion()).toEqual({ name: "contract", version: "1.0.0" });
      const caps = client.getServerCapabilities();
      expect(caps?.tools).toEqual({ listChanged: true });
      expect(caps?.resources).toEqual({ subscribe: true, listChanged: true });
      expect(caps?.logging).toEqual({});
    });

    it("answers ping with an empty result", async () => {
      const { client } = await connect();
      expect(await client.ping()).toEqual({});
    });

    it("lists and calls tools; a throw is an isError result; an unknown tool a protocol error", async () => {
      const { client } = await connect();
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("echo");
      expect(await client.callTool({ name: "echo", arguments: { text: "héllo ✓" } })).toEqual({
        content: [{ type: "text", text: "héllo ✓" }],
      });
      expect(await client.callTool({ name: "fail", arguments: {} })).toEqual({
        content: [{ type: "text", text: "it failed" }],
        isError: true,
      });
      await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toMatchObject({ code: -32602 });
    });

    it("reads a resource", async () => {
      const { client } = await connect();
      expect(await client.readResource({ uri: "note://1" })).toEqual({
        contents: [{ uri: "note://1", mimeType: "text/plain", text: "note 0" }],
      });
    });

    it("delivers progress notifications before the result", async () => {
      const { client, wire } = await connect();
      const result = await client.callTool({ name: "progress", arguments: {} }, undefined, {
        onprogress: () => {},
      });
      expect(result.content).toEqual([{ type: "text", text: "progressed" }]);
      // read off the wire: the SDK client runs a progress handler a microtask after it reads the
      // notification, and drops it when the result came in the same read (a loaded machine does that)
      const call = wire.findIndex((m) => m.result?.content?.[0]?.text === "progressed");
      const progress = wire.slice(0, call).filter((m) => m.method === "notifications/progress");
      expect(progress.map((m) => [m.params.progress, m.params.total])).toEqual([
        [1, 3],
        [2, 3],
        [3, 3],
      ]);
      expect(wire.slice(call).some((m) => m.method === "notifications/progress")).toBe(false);
    });

    it("delivers log messages at or above the level set, before the result", async () => {
      const { client, events } = await connect();
      await client.setLoggingLevel("warning");
      await client.callTool({ name: "log", arguments: {} });
      const logs = events.filter((e) => e.method === "notifications/message").map((e) => e.params);
      expect(logs).toEqual([
        { level: "warning", data: "a warning message" },
        { level: "error", data: "a error message" },
      ]);
    });

    it("round-trips sampling: the server asks the client's model within a call", async () => {
      const { client } = await connect();
      const result = await client.callTool({ name: "sample", arguments: {} });
      expect(result.content).toEqual([{ type: "text", text: "model said 4" }]);
    });

    it("round-trips elicitation: the server asks the user within a call", async () => {
      const { client } = await connect();
      const result = await client.callTool({ name: "ask", arguments: {} });
      expect(result.content).toEqual([{ type: "text", text: "accept: Ada (asked: Your name?)" }]);
    });

    it("cancels a request the client aborts", async () => {
      const { client } = await connect();
      const state = async () =>
        ((await client.callTool({ name: "was_cancelled", arguments: {} })).content as { text: string }[])[0]!
          .text;
      const abort = new AbortController();
      const call = client.callTool({ name: "slow", arguments: {} }, undefined, { signal: abort.signal });
      // abort once the handler runs: over HTTP a cancel may overtake its request on another connection,
      // and a receiver ignores a cancel for a request it does not know (as the spec allows)
      await until(async () => (await state()) === "running", "the slow tool to start");
      abort.abort("changed my mind");
      await expect(call).rejects.toThrow();
      await until(async () => (await state()) === "cancelled", "the slow tool to be cancelled");
    });

    it("notifies a subscribed client that a resource changed", async () => {
      const { client, events } = await connect();
      await client.subscribeResource({ uri: "note://1" });
      await client.callTool({ name: "touch", arguments: {} });
      await until(() => events.some((e) => e.method === "notifications/resources/updated"));
      expect(events.find((e) => e.method === "notifications/resources/updated")?.params).toEqual({
        uri: "note://1",
      });
      expect((await client.readResource({ uri: "note://1" })).contents[0]).toMatchObject({ text: "note 1" });
    });

    it("announces a tool added at run time with list_changed", async () => {
      const { client, events } = await connect();
      await client.callTool({ name: "add_tool", arguments: {} });
      await until(() => events.some((e) => e.method === "notifications/tools/list_changed"));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("extra");
    });
  });
}
