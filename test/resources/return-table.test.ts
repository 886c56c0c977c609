// The table of what `read` and a tool's `run` may return (docs/resources.md, docs/tools.md), each type
// on the wire with the official clients of both eras: encoded faithfully, or refused with an error that
// names the URI (or the tool) and the type, to onError and (for a tool) in its error result.
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeServer, serve } from "../../src/http/node.js";
import { type ErrorInfo, McpServer } from "../../src/index.js";

class Book {
  readonly title: string;
  readonly year: number;
  constructor(title: string, year: number) {
    this.title = title;
    this.year = year;
  }
}
class Handle {
  #fd = 3;
  get fd() {
    return this.#fd;
  }
}
const circular = () => {
  const a: { self?: unknown } = {};
  a.self = a;
  return a;
};

/** Values encoded faithfully: what `read` returned → the contents sent (uri `t://<name>`). */
const faithful: [string, () => unknown, object][] = [
  ["string", () => "hi", { mimeType: "text/plain", text: "hi" }],
  ["Uint8Array", () => new Uint8Array([1, 2, 255]), { mimeType: "application/octet-stream", blob: "AQL/" }],
  [
    "ArrayBuffer",
    () => new Uint8Array([1, 2]).buffer,
    { mimeType: "application/octet-stream", blob: "AQI=" },
  ],
  [
    "Uint16Array",
    () => new Uint16Array([1, 258]),
    { mimeType: "application/octet-stream", blob: "AQACAQ==" },
  ],
  ["Float32Array", () => new Float32Array([1]), { mimeType: "application/octet-stream", blob: "AACAPw==" }],
  [
    "subarray",
    () => new Uint8Array([9, 1, 2, 9]).subarray(1, 3),
    { mimeType: "application/octet-stream", blob: "AQI=" },
  ],
  [
    "DataView",
    () => new DataView(new Uint8Array([7, 1, 2, 7]).buffer, 1, 2),
    { mimeType: "application/octet-stream", blob: "AQI=" },
  ],
  ["Blob", () => new Blob(["hey"], { type: "text/x-note" }), { mimeType: "text/x-note", blob: "aGV5" }],
  [
    "untyped Blob",
    () => new Blob([new Uint8Array([1])]),
    { mimeType: "application/octet-stream", blob: "AQ==" },
  ],
  [
    "object",
    () => ({ a: 1, b: [true, null] }),
    { mimeType: "application/json", text: '{"a":1,"b":[true,null]}' },
  ],
  ["array", () => [1, "two"], { mimeType: "application/json", text: '[1,"two"]' }],
  ["number", () => 42, { mimeType: "application/json", text: "42" }],
  ["boolean", () => false, { mimeType: "application/json", text: "false" }],
  ["null", () => null, { mimeType: "application/json", text: "null" }],
  ["Date", () => new Date(0), { mimeType: "application/json", text: '"1970-01-01T00:00:00.000Z"' }],
  [
    "class instance",
    () => new Book("Kindred", 1979),
    { mimeType: "application/json", text: '{"title":"Kindred","year":1979}' },
  ],
  [
    "URL (toJSON)",
    () => new URL("https://example.com/a"),
    { mimeType: "application/json", text: '"https://example.com/a"' },
  ],
  ["empty object", () => ({}), { mimeType: "application/json", text: "{}" }],
  [
    "nested NaN and Infinity (null, as JSON has them)",
    () => ({ stats: [1, Number.NaN, Number.POSITIVE_INFINITY], empty: {} }),
    { mimeType: "application/json", text: '{"stats":[1,null,null],"empty":{}}' },
  ],
  // { contents } is SDK v1's result only when every item is contents; else it is a value like any other
  ["contents, empty", () => ({ contents: [] }), { mimeType: "application/json", text: '{"contents":[]}' }],
  [
    "contents of strings",
    () => ({ contents: ["Intro", "Ch 1"] }),
    { mimeType: "application/json", text: '{"contents":["Intro","Ch 1"]}' },
  ],
  [
    "contents, an item without a uri",
    () => ({ contents: [{ text: "no uri" }] }),
    { mimeType: "application/json", text: '{"contents":[{"text":"no uri"}]}' },
  ],
  [
    "nested undefined and function (left out, as JSON has it)",
    () => ({ a: undefined, f() {}, b: 1 }),
    { mimeType: "application/json", text: '{"b":1}' },
  ],
];

/** Values refused: the end of the error's message after "read() of t://<name> returned". */
const refused: [string, () => unknown, string][] = [
  ["undefined", () => undefined, "undefined; did it forget to return?"],
  ["function", () => () => 1, "a function; it has no faithful JSON form: call it, or leave it out"],
  [
    "symbol",
    () => Symbol("s"),
    "a symbol; it has no faithful JSON form: return its description, or leave it out",
  ],
  ["bigint", () => 10n, "a bigint; it has no faithful JSON form: return String(n) or Number(n) in its place"],
  ["NaN", () => Number.NaN, "NaN; it has no faithful JSON form: return null or a string in its place"],
  [
    "Infinity",
    () => Number.NEGATIVE_INFINITY,
    "-Infinity; it has no faithful JSON form: return null or a string in its place",
  ],
  [
    "Map",
    () => new Map([["a", 1]]),
    "a Map; it has no faithful JSON form: return Object.fromEntries(map) (string keys) or [...map] (its entries)",
  ],
  ["Set", () => new Set([1]), "a Set; it has no faithful JSON form: return [...set]"],
  [
    "class instance with no fields",
    () => new Handle(),
    "a Handle; it has no faithful JSON form: it has no own enumerable field and no toJSON(), so its JSON would be {}: give its class a toJSON() method, or return a plain object",
  ],
  [
    "Error",
    () => new Error("x"),
    "an Error; it has no faithful JSON form: throw it to fail, or return its message",
  ],
  [
    "nested Set",
    () => ({ tags: new Set(["a"]) }),
    "a value whose $.tags is a Set; it has no faithful JSON form: return [...set]",
  ],
  [
    "nested bigint",
    () => ({ n: 1n }),
    "a value whose $.n is a bigint; it has no faithful JSON form: return String(n) or Number(n) in its place",
  ],
  [
    "nested bytes",
    () => ({ raw: new Uint8Array([1]) }),
    "a value whose $.raw is a Uint8Array; it has no faithful JSON form: bytes are sent alone (a blob) or encoded into the value (base64)",
  ],
  [
    "nested Promise",
    () => ({ later: Promise.resolve(1) }),
    "a value whose $.later is a Promise; it has no faithful JSON form: await it first",
  ],
  [
    "cycle",
    circular,
    "a value whose $.self is a circular reference; JSON cannot hold a cycle: return a copy without it",
  ],
  [
    "nested Buffer (its toJSON not taken for the bytes' JSON)",
    () => ({ logo: Buffer.from([1, 2]) }),
    "a value whose $.logo is a Buffer; it has no faithful JSON form: bytes are sent alone (a blob) or encoded into the value (base64)",
  ],
];

const slug = (name: string) => name.replace(/[^a-z0-9]+/gi, "-");
const logged: [string, ErrorInfo][] = [];
let http: NodeServer;

function server() {
  const s = new McpServer({
    name: "returns",
    version: "1.0.0",
    onError: (e, info) => void logged.push([(e as Error).message, info]),
  });
  for (const [name, value] of [...faithful, ...refused]) {
    // half of them through a promise: the async path says the same
    s.resource(`t://${slug(name)}`, { read: name.length % 2 ? () => value() : async () => value() });
    s.tool(`t-${slug(name)}`, { run: name.length % 2 ? () => value() : async () => value() });
  }
  return s;
}

beforeAll(async () => {
  http = await serve(server(), { port: 0, hostname: "127.0.0.1" });
});
afterAll(() => http.close());

type Client = {
  readResource(p: { uri: string }): Promise<{ contents: unknown[] }>;
  callTool(p: { name: string; arguments: object }): Promise<{ content: unknown[]; isError?: boolean }>;
  close(): Promise<void>;
};

const eras: [string, () => Promise<Client>][] = [
  [
    "SDK v1 client, 2025-11-25",
    async () => {
      const c = new V1Client({ name: "v1", version: "1" });
      await c.connect(new V1Transport(new URL(http.url)));
      return c as unknown as Client;
    },
  ],
  [
    "SDK v2 client, 2026-07-28",
    async () => {
      const c = new V2Client(
        { name: "v2", version: "1" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await c.connect(new V2Transport(new URL(http.url)));
      return c as unknown as Client;
    },
  ],
];

describe.each(eras)("what read and run return: %s", (_, connect) => {
  let c: Client;
  beforeAll(async () => {
    c = await connect();
  });
  afterAll(() => c.close());

  it.each(faithful)("read: %s is sent as it is", async (name, _v, contents) => {
    const uri = `t://${slug(name)}`;
    expect((await c.readResource({ uri })).contents).toEqual([{ uri, ...contents }]);
  });

  it.each(refused)(
    "read: %s is refused, and onError hears the URI and the type",
    async (name, _v, message) => {
      const uri = `t://${slug(name)}`;
      logged.length = 0;
      await expect(c.readResource({ uri })).rejects.toMatchObject({ code: -32603 });
      expect(logged).toEqual([
        [
          `read() of ${uri} returned ${message}`,
          { method: "resources/read", requestId: expect.anything(), uri },
        ],
      ]);
    },
  );

  it.each(refused.filter(([n]) => n !== "undefined" && !n.startsWith("SDK")))(
    "run: %s is an error result naming the tool, and reported",
    async (name, _v, message) => {
      const tool = `t-${slug(name)}`;
      logged.length = 0;
      const text = `run() of tool ${tool} returned ${message}`;
      expect(await c.callTool({ name: tool, arguments: {} })).toMatchObject({
        content: [{ type: "text", text }],
        isError: true,
      });
      expect(logged).toEqual([[text, { method: "tools/call", requestId: expect.anything(), name: tool }]]);
    },
  );

  it("run: JSON values are their text, nothing is empty content, bytes are refused with the block to use", async () => {
    const text = async (name: string) =>
      (await c.callTool({ name: `t-${slug(name)}`, arguments: {} })).content;
    expect(await text("object")).toEqual([{ type: "text", text: '{"a":1,"b":[true,null]}' }]);
    expect(await text("class instance")).toEqual([{ type: "text", text: '{"title":"Kindred","year":1979}' }]);
    expect(await text("Date")).toEqual([{ type: "text", text: '"1970-01-01T00:00:00.000Z"' }]);
    expect(await text("undefined")).toEqual([]);
    expect(await text("null")).toEqual([]);
    for (const name of ["Uint8Array", "Blob", "DataView"]) {
      const result = await c.callTool({ name: `t-${slug(name)}`, arguments: {} });
      expect(result.isError).toBe(true);
      expect((result.content[0] as { text: string }).text).toBe(
        `run() of tool t-${slug(name)} returned a ${name}; a tool's result is content blocks: return bytes as { type: "image" (or "audio"), data: <base64>, mimeType }, or as an embedded resource`,
      );
    }
  });
});
