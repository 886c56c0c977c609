import { describe, expect, it } from "vitest";
import { z } from "zod";
import { McpServer } from "../../src/index.js";
import { connect } from "../../src/testing.js";
import { rawPeer } from "../helpers.js";
import { sdkClient } from "../sdk-bridge.js";

function server() {
  const s = new McpServer({ name: "t", version: "1", onError: () => {} });
  s.prompt("review", {
    title: "Review",
    description: "Review a diff",
    args: z.object({ diff: z.string().describe("The diff"), tone: z.string().optional() }),
    complete: { tone: (value) => ["kind", "strict", "kafkaesque"].filter((t) => t.startsWith(value)) },
    get: ({ diff, tone }) => `Review this diff${tone ? ` in a ${tone} tone` : ""}:\n${diff}`,
  });
  s.prompt("listed", {
    description: "List-form arguments",
    args: [
      { name: "a", description: "first", required: true },
      { name: "b", title: "Bee" },
    ],
    complete: {
      b: (value, ctx) => ({ values: [`${ctx.arguments.a ?? "?"}-${value}`], total: 7, hasMore: true }),
    },
    get: ({ a, b }) => [
      { role: "assistant", content: { type: "text", text: `a=${a}` } },
      `b=${b ?? "none"}`,
      { type: "image", data: "AAAA", mimeType: "image/png" },
    ],
  });
  s.prompt("many", { description: "x", complete: {}, args: [{ name: "n" }], get: () => "" });
  s.prompt("whole", {
    description: "d",
    get: () => ({
      description: "custom",
      messages: [{ role: "user", content: { type: "text", text: "w" } }],
    }),
  });
  return s;
}

describe("prompts", () => {
  it("lists each argument's name, description and required", async () => {
    const client = await connect(server());
    const { prompts } = await client.listPrompts();
    expect(prompts.slice(0, 2)).toEqual([
      {
        name: "review",
        title: "Review",
        description: "Review a diff",
        arguments: [
          { name: "diff", description: "The diff", required: true },
          { name: "tone", required: false },
        ],
      },
      {
        name: "listed",
        description: "List-form arguments",
        arguments: [
          { name: "a", description: "first", required: true },
          { name: "b", title: "Bee" },
        ],
      },
    ]);
  });

  it("gets a string as one user message, and messages of any content", async () => {
    const client = await sdkClient(server());
    expect(await client.getPrompt({ name: "review", arguments: { diff: "+a", tone: "kind" } })).toEqual({
      description: "Review a diff",
      messages: [{ role: "user", content: { type: "text", text: "Review this diff in a kind tone:\n+a" } }],
    });
    expect(await client.getPrompt({ name: "listed", arguments: { a: "1" } })).toEqual({
      description: "List-form arguments",
      messages: [
        { role: "assistant", content: { type: "text", text: "a=1" } },
        { role: "user", content: { type: "text", text: "b=none" } },
        { role: "user", content: { type: "image", data: "AAAA", mimeType: "image/png" } },
      ],
    });
    expect(await client.getPrompt({ name: "whole" })).toEqual({
      description: "custom",
      messages: [{ role: "user", content: { type: "text", text: "w" } }],
    });
  });

  it("answers an unknown prompt and a missing required argument with -32602", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "prompts/get", params: { name: "nope" } })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "Unknown prompt: nope", data: { name: "nope" } },
    });
    expect(
      await p.send({
        jsonrpc: "2.0",
        id: 2,
        method: "prompts/get",
        params: { name: "review", arguments: { tone: "x" } },
      }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32602,
        message: "Missing required argument for prompt review: diff",
        data: { missing: ["diff"] },
      },
    });
    expect(
      await p.send({
        jsonrpc: "2.0",
        id: 3,
        method: "prompts/get",
        params: { name: "listed", arguments: { a: 1 } },
      }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32602, message: "Argument a of prompt listed must be a string" },
    });
  });

  it("rejects completers for arguments that do not exist, at registration", () => {
    const s = new McpServer({ name: "t", version: "1" });
    expect(() =>
      s.prompt("p", { args: [{ name: "a" }], complete: { b: () => [] } as never, get: () => "" }),
    ).toThrow('Prompt "p": complete.b names no argument');
  });
});

describe("completion/complete", () => {
  it("completes prompt arguments, with context.arguments, total and hasMore", async () => {
    const client = await sdkClient(server());
    expect(
      await client.complete({
        ref: { type: "ref/prompt", name: "review" },
        argument: { name: "tone", value: "k" },
      }),
    ).toEqual({
      completion: { values: ["kind", "kafkaesque"] },
    });
    expect(
      await client.complete({
        ref: { type: "ref/prompt", name: "listed" },
        argument: { name: "b", value: "x" },
        context: { arguments: { a: "A" } },
      }),
    ).toEqual({ completion: { values: ["A-x"], total: 7, hasMore: true } });
    expect(
      await client.complete({
        ref: { type: "ref/prompt", name: "review" },
        argument: { name: "diff", value: "" },
      }),
    ).toEqual({
      completion: { values: [] },
    });
  });

  it("sends at most 100 values, with the total", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.prompt("p", {
      args: [{ name: "n" }],
      complete: { n: () => Array.from({ length: 250 }, (_, i) => String(i)) },
      get: () => "",
    });
    const client = await connect(s);
    const r = await client.complete({ type: "ref/prompt", name: "p" }, { argument: "n", value: "" });
    expect(r.completion.values).toHaveLength(100);
    expect(r.completion).toMatchObject({ total: 250, hasMore: true });
  });

  it("answers an unknown prompt or template with -32602", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(
      await p.send({
        jsonrpc: "2.0",
        id: 1,
        method: "completion/complete",
        params: { ref: { type: "ref/prompt", name: "x" }, argument: { name: "a", value: "" } },
      }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "Unknown prompt: x", data: { name: "x" } },
    });
    expect(
      await p.send({
        jsonrpc: "2.0",
        id: 2,
        method: "completion/complete",
        params: { ref: { type: "ref/zzz" }, argument: { name: "a", value: "" } },
      }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32602,
        message: 'completion/complete needs a ref of type "ref/prompt" or "ref/resource"',
      },
    });
  });
});

describe("prompt list changes", () => {
  it("tells connected clients when a prompt is added or removed", async () => {
    const { PromptListChangedNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
    const s = new McpServer({ name: "t", version: "1" });
    s.prompt("a", { get: () => "a" });
    const client = await sdkClient(s);
    let changed = 0;
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changed++);
    const b = s.prompt("b", { get: () => "b" });
    await new Promise((r) => setTimeout(r, 5));
    expect(changed).toBe(1);
    b.remove();
    await new Promise((r) => setTimeout(r, 5));
    expect(changed).toBe(2);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["a"]);
  });
});
