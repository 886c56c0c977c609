// The AI SDK's MCP client (@ai-sdk/mcp) with its default settings against a picomcp stdio process:
// it probes server/discover first, so it speaks 2026-07-28 and never sends initialize.
import { fileURLToPath } from "node:url";
import { createMCPClient, ElicitationRequestSchema } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("../fixtures/modern-stdio-server.js", import.meta.url));

function spawnClient(capabilities?: { elicitation: { [key: string]: unknown } }) {
  return createMCPClient({
    transport: new StdioMCPTransport({ command: process.execPath, args: [fixture] }),
    ...(capabilities ? { capabilities } : {}),
  });
}

describe("AI SDK client over stdio", () => {
  it("reaches every primitive with default settings", async () => {
    const ai = await spawnClient();
    try {
      expect(ai.serverInfo).toMatchObject({ name: "modern-fixture", version: "1.0.0" });
      expect(ai.initializeResult.protocolVersion).toBe("2026-07-28");
      expect((await ai.listTools()).tools.map((t) => t.name)).toEqual(["echo", "greet", "change"]);
      expect((await ai.callTool({ name: "echo", arguments: { text: "hi" } })).content).toEqual([
        { type: "text", text: "hi" },
      ]);
      expect((await ai.listResources()).resources.map((r) => r.uri)).toEqual(["test://watched"]);
      expect((await ai.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
        "test://items/{id}",
      ]);
      expect((await ai.readResource({ uri: "test://items/4" })).contents).toEqual([
        { uri: "test://items/4", mimeType: "text/plain", text: "item 4" },
      ]);
      await expect(ai.readResource({ uri: "test://nope" })).rejects.toThrow();
      expect((await ai.listPrompts()).prompts.map((p) => p.name)).toEqual(["review"]);
      expect((await ai.getPrompt({ name: "review", arguments: { text: "q" } })).messages).toEqual([
        { role: "user", content: { type: "text", text: "Review: q" } },
      ]);
      const done = await ai.complete({
        ref: { type: "ref/prompt", name: "review" },
        argument: { name: "text", value: "b" },
      });
      expect(done.completion.values).toEqual(["beta"]);
    } finally {
      await ai.close();
    }
  });

  it("answers an input round through its elicitation handler", async () => {
    const ai = await spawnClient({ elicitation: {} });
    try {
      ai.onElicitationRequest(ElicitationRequestSchema, async () => ({
        action: "accept",
        content: { name: "Dee" },
      }));
      expect((await ai.callTool({ name: "greet", arguments: {} })).content).toEqual([
        { type: "text", text: "Hello, Dee!" },
      ]);
    } finally {
      await ai.close();
    }
  });
});
