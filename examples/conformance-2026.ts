// The fixtures the conformance suite calls only at 2026-07-28: diagnostic tools of server-stateless
// and the input-required (multi-round-trip) tools and prompt. The same handlers run in the 2025 era,
// where ctx.elicit/sample/roots send requests to the client instead.
import type { McpServer } from "picomcp";

const NAME_SCHEMA = {
  type: "object" as const,
  properties: { name: { type: "string" } },
  required: ["name"],
};
const CAPITAL = {
  messages: [{ role: "user" as const, content: { type: "text", text: "What is the capital of France?" } }],
  maxTokens: 100,
};
const textOf = (content: unknown) => {
  const c = content as { type?: string; text?: string } | undefined;
  return c?.type === "text" ? String(c.text) : JSON.stringify(content);
};

/** Registers every 2026-07-28 fixture on `server`. */
export function register2026Fixtures(server: McpServer): void {
  // ------------------------------------------------ server-stateless diagnostics

  server.tool("test_missing_capability", {
    description: "Needs the client's sampling capability (-32021 without it)",
    run: async (_args, ctx) => textOf((await ctx.sample(CAPITAL, { key: "capital_question" })).content),
  });

  server.tool("test_streaming_elicitation", {
    description: "Asks the user for a name: an input-required result, never a request on the stream",
    run: async (_args, ctx) => {
      const r = await ctx.elicit(
        { message: "What is your name?", requestedSchema: NAME_SCHEMA },
        { key: "user_name" },
      );
      return `Hello, ${r.content?.name}!`;
    },
  });

  server.tool("test_logging_tool", {
    description: "Logs at info; a request without a log level gets no log messages",
    run: (_args, ctx) => {
      ctx.log("info", "test_logging_tool ran");
      return "Logged";
    },
  });

  // adding and removing in one tick announces one change and leaves the list as it was
  server.tool("test_trigger_tool_change", {
    description: "Announces notifications/tools/list_changed to listeners",
    run: () => {
      server
        .tool("test_transient_tool", { description: "Registered for a moment", run: () => "ok" })
        .remove();
      return "Tool list changed";
    },
  });

  server.tool("test_trigger_prompt_change", {
    description: "Announces notifications/prompts/list_changed to listeners",
    run: () => {
      server
        .prompt("test_transient_prompt", { description: "Registered for a moment", get: () => "ok" })
        .remove();
      return "Prompt list changed";
    },
  });

  // ------------------------------------------------ input-required results

  server.tool("test_input_required_result_elicitation", {
    description: "Asks for the user's name",
    run: async (_args, ctx) => {
      const r = await ctx.elicit(
        { message: "What is your name?", requestedSchema: NAME_SCHEMA },
        { key: "user_name" },
      );
      if (typeof r.content?.name !== "string") throw new Error("The answer has no name");
      return `Hello, ${r.content.name}!`;
    },
  });

  server.tool("test_input_required_result_sampling", {
    description: "Asks the client's model for the capital of France",
    run: async (_args, ctx) => {
      const r = await ctx.sample(CAPITAL, { key: "capital_question" });
      return `The model said: ${textOf(r.content)}`;
    },
  });

  server.tool("test_input_required_result_list_roots", {
    description: "Lists the client's roots",
    run: async (_args, ctx) => {
      const roots = await ctx.roots({ key: "client_roots" });
      return `Roots: ${roots.map((r) => r.name ?? r.uri).join(", ")}`;
    },
  });

  server.tool("test_input_required_result_request_state", {
    description: "Keeps its own state across the round trip",
    run: async (_args, ctx) => {
      if (ctx.requestState === undefined) ctx.setRequestState({ started: true });
      const r = await ctx.elicit(
        {
          message: "Confirm?",
          requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
        },
        { key: "confirm" },
      );
      const kept = (ctx.requestState as { started?: boolean } | undefined)?.started === true;
      return `${kept ? "state-ok" : "state-missing"}: ${r.action}`;
    },
  });

  server.tool("test_input_required_result_multiple_inputs", {
    description: "Asks for three inputs at once",
    run: async (_args, ctx) => {
      const [name, greeting, roots] = await Promise.all([
        ctx.elicit({ message: "What is your name?", requestedSchema: NAME_SCHEMA }, { key: "user_name" }),
        ctx.sample(
          { messages: [{ role: "user", content: { type: "text", text: "Say hello" } }], maxTokens: 50 },
          { key: "greeting" },
        ),
        ctx.roots({ key: "client_roots" }),
      ]);
      return `${textOf(greeting.content)} ${name.content?.name} (${roots.length} roots)`;
    },
  });

  server.tool("test_input_required_result_multi_round", {
    description: "Asks for a name, then for a colour",
    run: async (_args, ctx) => {
      const name = await ctx.elicit(
        { message: "What is your name?", requestedSchema: NAME_SCHEMA },
        { key: "step1" },
      );
      const color = await ctx.elicit(
        {
          message: "What is your favourite colour?",
          requestedSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] },
        },
        { key: "step2" },
      );
      return `${name.content?.name} likes ${color.content?.color}`;
    },
  });

  server.tool("test_input_required_result_tampered_state", {
    description: "Its requestState is sealed: a tampered one is rejected",
    run: async (_args, ctx) => {
      const r = await ctx.elicit(
        {
          message: "Confirm?",
          requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
        },
        { key: "confirm" },
      );
      return `Confirmed: ${r.action}`;
    },
  });

  server.tool("test_input_required_result_capabilities", {
    description: "Asks only for what the request's client capabilities allow",
    run: async (_args, ctx) => {
      const caps = ctx.client.capabilities;
      const asks: Promise<unknown>[] = [];
      if (caps.elicitation)
        asks.push(
          ctx.elicit({ message: "What is your name?", requestedSchema: NAME_SCHEMA }, { key: "user_name" }),
        );
      if (caps.sampling)
        asks.push(
          ctx.sample(
            { messages: [{ role: "user", content: { type: "text", text: "Say hello" } }], maxTokens: 50 },
            { key: "greeting" },
          ),
        );
      if (caps.roots) asks.push(ctx.roots({ key: "client_roots" }));
      await Promise.all(asks);
      return `Answered ${asks.length} input request(s)`;
    },
  });

  server.prompt("test_input_required_result_prompt", {
    description: "A prompt that asks the user for context first",
    get: async (_args, ctx) => {
      const r = await ctx.elicit(
        {
          message: "What context should the prompt use?",
          requestedSchema: {
            type: "object",
            properties: { context: { type: "string" } },
            required: ["context"],
          },
        },
        { key: "user_context" },
      );
      return `Use this context: ${r.content?.context ?? "(none)"}`;
    },
  });
}
