// A tool whose input schema has a pattern that backtracks as a RegExp (`^(\w+\s?)*$`, seconds on 30
// characters) is registered, and a call with the adversarial argument is answered at once; the same for
// a patternProperties key. What no automaton runs is refused at registration, by name.
import { describe, expect, it, vi } from "vitest";
import { McpServer } from "../../src/index.js";
import { linearMatcher } from "../../src/schema/json-schema-regex.js";
import { LinearRegex } from "../../src/schema/linear-regex.js";
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

  it("never run a pattern on a string past its maxLength, not even to report every issue", async () => {
    // the costliest pattern known to be accepted: about 3200 steps a character (2 minutes on 4 MiB)
    const server = new McpServer({ name: "p", version: "1.0.0" });
    server.tool("slow", {
      input: {
        type: "object",
        properties: { s: { type: "string", maxLength: 64, pattern: "(?:a|aa){399}c" } },
      },
      run: () => "ran",
    });
    const client = await connect(server);
    const tested: number[] = [];
    // what the pattern would be asked (answered false: the test counts, it does not wait 4 s)
    const spy = vi.spyOn(LinearRegex.prototype, "test").mockImplementation((text: string) => {
      tested.push(text.length);
      return false;
    });
    try {
      expect(await client.callTool("slow", { s: "a".repeat(128 * 1024) })).toEqual({
        content: [
          { type: "text", text: "Invalid arguments for tool slow: s: must be at most 64 characters" },
        ],
        isError: true,
      });
    } finally {
      spy.mockRestore();
    }
    expect(tested).toEqual([]);
  });

  it("answer a counted repeat unanchored on the left on a 256 KiB argument in a few steps a character", async () => {
    // [\w.-]{1,255} was 255 copies of a state, each live at every character: 3.4 s of blocked event loop
    const PDF = "[\\w.-]{1,255}\\.pdf$";
    const server = new McpServer({ name: "p", version: "1.0.0" });
    server.tool("open", {
      input: { type: "object", properties: { file: { type: "string", pattern: PDF } }, required: ["file"] },
      run: ({ file }) => `opened ${file.length}`,
    });
    const client = await connect(server);
    const long = "a".repeat(256 * 1024);
    expect(await client.callTool("open", { file: long })).toEqual({
      content: [
        {
          type: "text",
          text: `Invalid arguments for tool open: file: must match pattern "[\\\\w.-]{1,255}\\\\.pdf$"`,
        },
      ],
      isError: true,
    });
    expect(await client.callTool("open", { file: `${long}.pdf` })).toEqual({
      content: [{ type: "text", text: `opened ${long.length + 4}` }],
    });
    const m = linearMatcher(new RegExp(PDF, "u"));
    expect(m.test(long)).toBe(false);
    expect(m.lastSteps).toBeLessThanOrEqual(7 * long.length);
    expect(m.test(long + long)).toBe(false);
    expect(m.lastSteps).toBeLessThanOrEqual(14 * long.length);
  });

  it("refuses at registration, by name, a pattern past the matcher's bounds", () => {
    const server = new McpServer({ name: "p", version: "1.0.0" });
    const register = (pattern: string) => () =>
      server.tool(`t${Math.random()}`, {
        input: { type: "object", properties: { q: { type: "string", pattern } } },
        run: () => "",
      });
    expect(register("(?=a)".repeat(3000))).toThrow(
      "at #/properties/q/pattern is too large: it has 3000 lookarounds, and the linear-time matcher takes at most 32 (each keeps a bit per character of the text), which picomcp's linear-time matcher cannot run",
    );
    expect(register("^(?:ab|cd){1000}$")).toThrow(
      "is too large: it needs 6003 states, and the linear-time matcher takes at most 2000",
    );
    expect(register("a{200000}")).toThrow(
      "is too large: it counts up to 200001 characters in its {n,m} repeats",
    );
    // what registration used to hang on compiles to nothing
    expect(register("(?:){2000000000}")).not.toThrow();
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
