// A tool whose input schema has a pattern that backtracks as a RegExp (`^(\w+\s?)*$`, seconds on 30
// characters) is registered, and a call with the adversarial argument is answered at once; the same for
// a patternProperties key. What no automaton runs is refused at registration, by name.
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { linearMatcher } from "../../src/schema/json-schema-regex.js";
import { connect } from "../../src/testing.js";

const WORDS = "^(\\w+\\s?)*$";
const ADVERSARIAL = `${"a".repeat(29)}!`;

describe("a tool's schema patterns", () => {
  it("take a pattern that backtracks as a RegExp, and answer its worst input with little work", async () => {
    const server = new McpServer({ name: "p", version: "1.0.0" });
    server.tool("tag", {
      input: {
        type: "object",
        properties: { words: { type: "string", pattern: WORDS } },
        patternProperties: { "^(a|aa)+$": { type: "number" } },
      },
      run: () => "tagged",
    });
    const client = await connect(server);
    expect(await client.callTool("tag", { words: ADVERSARIAL })).toEqual({
      content: [
        {
          type: "text",
          text: `Invalid arguments for tool tag: words: must match pattern "^(\\\\w+\\\\s?)*$"`,
        },
      ],
      isError: true,
    });
    expect(await client.callTool("tag", { words: "hello big world" })).toEqual({
      content: [{ type: "text", text: "tagged" }],
    });
    const key = `${"a".repeat(40)}b`;
    expect((await client.callTool("tag", { [key]: "not a number" })).isError).toBeUndefined();
    // the work on that input, where a RegExp tries the 2^29 ways to split the word: at most a step per
    // state and character the first time, a step per character once its DFA states are made
    const m = linearMatcher(new RegExp(WORDS, "u"));
    expect(m.test(ADVERSARIAL)).toBe(false);
    expect(m.lastSteps).toBeLessThanOrEqual((ADVERSARIAL.length + 1) * m.size);
    expect(m.test(ADVERSARIAL)).toBe(false);
    expect(m.lastSteps).toBe(ADVERSARIAL.length);
  });

  it("refuses at registration, by name, a pattern no automaton runs, and points at jsonSchemaValidator", () => {
    const server = new McpServer({ name: "p", version: "1.0.0" });
    expect(() =>
      server.tool("quoted", {
        input: { type: "object", properties: { q: { type: "string", pattern: "^(['\"]).*\\1$" } } },
        run: () => "",
      }),
    ).toThrow(
      `Invalid JSON Schema: pattern "^(['\\"]).*\\\\1$" at #/properties/q/pattern uses a backreference (\\1), which picomcp's linear-time matcher cannot run (it never backtracks, so no input can make a pattern slow): rewrite the pattern, or validate this schema with a jsonSchemaValidator of your own`,
    );
  });
});
