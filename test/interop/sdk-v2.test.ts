// The official SDK v2 client (@modelcontextprotocol/client 2.4.0) against a picomcp stdio process,
// pinned to 2026-07-28 and in `auto` mode.
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("../fixtures/modern-stdio-server.js", import.meta.url));
const clients: Client[] = [];

async function connect(mode: "auto" | { pin: string }) {
  const client = new Client(
    { name: "sdk-v2", version: "1.0.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode } },
  );
  client.setRequestHandler("elicitation/create", async () => ({
    action: "accept",
    content: { name: "Ann" },
  }));
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [fixture] }));
  clients.push(client);
  return client;
}

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

describe("SDK v2 client over stdio", () => {
  for (const mode of [{ pin: "2026-07-28" }, "auto"] as const) {
    it(`speaks 2026-07-28 (${typeof mode === "string" ? mode : "pinned"}): every primitive, input rounds, listen`, async () => {
      const client = await connect(mode);
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(client.getServerVersion()).toMatchObject({ name: "modern-fixture", version: "1.0.0" });

      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toEqual(["echo", "greet", "change"]);
      const echo = await client.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(echo.content).toEqual([{ type: "text", text: "hi" }]);
      // the client fulfils the input request through its elicitation handler and retries
      const greet = await client.callTool({ name: "greet", arguments: {} });
      expect(greet.content).toEqual([{ type: "text", text: "Hello, Ann!" }]);

      const resources = await client.listResources();
      expect(resources.resources.map((r) => r.uri)).toEqual(["test://watched"]);
      const templates = await client.listResourceTemplates();
      expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(["test://items/{id}"]);
      const item = await client.readResource({ uri: "test://items/7" });
      expect(item.contents).toEqual([{ uri: "test://items/7", mimeType: "text/plain", text: "item 7" }]);
      await expect(client.readResource({ uri: "test://nope" })).rejects.toMatchObject({ code: -32602 });

      const prompts = await client.listPrompts();
      expect(prompts.prompts.map((p) => p.name)).toEqual(["review"]);
      const prompt = await client.getPrompt({ name: "review", arguments: { text: "x" } });
      expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Review: x" } }]);
      const completion = await client.complete({
        ref: { type: "ref/resource", uri: "test://items/{id}" },
        argument: { name: "id", value: "1" },
      });
      expect(completion.completion.values).toEqual(["1", "10"]);

      const heard: string[] = [];
      client.setNotificationHandler("notifications/tools/list_changed", () => void heard.push("tools"));
      const sub = await client.listen({ toolsListChanged: true, promptsListChanged: true });
      expect(sub.honoredFilter).toEqual({ toolsListChanged: true, promptsListChanged: true });
      await client.callTool({ name: "change", arguments: {} });
      for (let i = 0; heard.length === 0 && i < 200; i++) await new Promise((r) => setTimeout(r, 10));
      expect(heard).toEqual(["tools"]);
      await sub.close();
      expect(await sub.closed).toBe("local");
    });
  }
});
