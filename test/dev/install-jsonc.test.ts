/**
 * A client's file with comments and trailing commas (JSONC, as VS Code writes and accepts): the entry is
 * set in the text itself, every comment kept, and the result read back before anything is written.
 */
import { describe, expect, it } from "vitest";
import { JsoncError, setJsonc, stripJsonc } from "../../src/dev/jsonc.js";

const entry = { type: "stdio", command: "/usr/bin/node", args: ["/p/server.js"] };
const set = (text: string) => setJsonc(text, ["servers", "weather"], entry, "  ");

describe("stripJsonc", () => {
  it("drops comments and trailing commas, and leaves strings alone", () => {
    const text = '{\n  // a\n  "u": "http://x/*y*/ // z, }", /* b */\n  "l": [1, 2,],\n}\n';
    expect(JSON.parse(stripJsonc(text))).toEqual({ u: "http://x/*y*/ // z, }", l: [1, 2] });
  });
});

describe("setJsonc", () => {
  it("adds a server after the last, comments and trailing commas kept", () => {
    const text = `{
  // servers I use
  "servers": {
    "other": { "type": "http", "url": "https://x.example/mcp" }, // remote
  },
  /* inputs */ "inputs": [],
}
`;
    expect(set(text)).toBe(`{
  // servers I use
  "servers": {
    "other": { "type": "http", "url": "https://x.example/mcp" }, // remote
    "weather": {
      "type": "stdio",
      "command": "/usr/bin/node",
      "args": [
        "/p/server.js"
      ]
    },
  },
  /* inputs */ "inputs": [],
}
`);
  });

  it("adds after a last member without a comma", () => {
    const text = '{\n\t"servers": {\n\t\t"other": {} // keep\n\t}\n}';
    expect(setJsonc(text, ["servers", "w"], { a: 1 }, "\t")).toBe(
      '{\n\t"servers": {\n\t\t"other": {}, // keep\n\t\t"w": {\n\t\t\t"a": 1\n\t\t}\n\t}\n}',
    );
  });

  it("replaces a server's value in place", () => {
    const text = '{ "servers": { /* mine */ "weather": { "command": "old" }, "b": 1 } }';
    expect(setJsonc(text, ["servers", "weather"], { command: "new" }, "  ")).toBe(
      '{ "servers": { /* mine */ "weather": {\n  "command": "new"\n}, "b": 1 } }',
    );
  });

  it("makes the servers object when there is none, and fills an empty one", () => {
    expect(setJsonc('{\n  "a": 1, // one\n}', ["servers", "w"], 2, "  ")).toBe(
      '{\n  "a": 1, // one\n  "servers": {\n    "w": 2\n  },\n}',
    );
    expect(setJsonc('{\n  "servers": {}\n}', ["servers", "w"], 2, "  ")).toBe(
      '{\n  "servers": {\n    "w": 2\n  }\n}',
    );
    expect(setJsonc("{ /* nothing yet */ }", ["servers", "w"], 2, "  ")).toBe(
      '{\n  "servers": {\n    "w": 2\n  } /* nothing yet */ }',
    );
  });

  it("writes the file's CRLF between the lines it adds, and ends a // comment before its CR", () => {
    const text = '{\r\n\t"servers": {\r\n\t\t"other": {} // keep\r\n\t}\r\n}\r\n';
    expect(setJsonc(text, ["servers", "w"], { a: 1 }, "\t", "\r\n")).toBe(
      '{\r\n\t"servers": {\r\n\t\t"other": {}, // keep\r\n\t\t"w": {\r\n\t\t\t"a": 1\r\n\t\t}\r\n\t}\r\n}\r\n',
    );
    expect(setJsonc('{\r\n  "a": 1, // one\r\n}', ["servers", "w"], 2, "  ", "\r\n")).toBe(
      '{\r\n  "a": 1, // one\r\n  "servers": {\r\n    "w": 2\r\n  },\r\n}',
    );
  });

  it("refuses what it cannot read: an unterminated comment or string, a key that is not an object", () => {
    expect(() => set('{ "servers": { /* open }')).toThrow(JsoncError);
    expect(() => set('{ "servers": "x }')).toThrow(/never ends/);
    expect(() => set('{ "servers": [] }')).toThrow('"servers" is not an object');
    expect(() => set("[1] // x")).toThrow("the file does not hold an object");
  });
});
