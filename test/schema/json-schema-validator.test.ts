/**
 * Plain JSON Schema tools end to end: picomcp's validator on the wire, a root `$ref` (zod's `.meta({ id })`
 * output) where the root must be an object, and the `jsonSchemaValidator` option with the ajv recipe of
 * docs/tools.md.
 */

import { connect as connectExample } from "picomcp/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { server as ajvServer } from "../../examples/docs/tools-ajv.js";
import { server as shop } from "../../examples/docs/tools-json-schema.js";
import { type JsonSchemaValidator, McpServer } from "../../src/index.js";
import { connect } from "../../src/testing.js";
import { sdkClient } from "../sdk-bridge.js";

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe("plain JSON Schema input (docs/tools.md)", () => {
  it("accepts valid arguments and names every failing field", async () => {
    const client = await connectExample(shop);
    expect(await client.callTool("order", { sku: "ABC-1234", quantity: 2, price: 19.99 })).toEqual({
      content: [{ type: "text", text: "Ordered 2 × ABC-1234" }],
    });
    const bad = await client.callTool("order", {
      sku: "abc",
      quantity: 0,
      price: 1.005,
      card: "4242",
      gift: true,
    });
    expect(bad).toEqual({
      content: [
        {
          type: "text",
          text:
            'Invalid arguments for tool order: sku: must match pattern "^[A-Z]{3}-\\\\d{4}$"; quantity: must be >= 1; ' +
            'price: must be a multiple of 0.01; cvv: is required when "card" is present; gift: unexpected property',
        },
      ],
      isError: true,
    });
  });
});

describe("a root $ref", () => {
  const Foo = z.object({ a: z.string(), next: z.lazy((): z.ZodType => Foo).optional() }).meta({ id: "Foo" });

  it("is accepted where the root must be an object, from zod and as plain JSON Schema", async () => {
    const server = new McpServer({ name: "t", version: "1" });
    server.tool("zod", { input: Foo, run: ({ a }) => a });
    // as JSON text: zod's own output carries a hidden "~standard", which would make zod validate it
    const plain = JSON.parse(JSON.stringify(Foo["~standard"].jsonSchema.input({ target: "draft-2020-12" })));
    expect(plain).toMatchObject({ $ref: "#/$defs/Foo", $defs: { Foo: { type: "object" } } });
    server.tool("plain", { input: plain, output: plain, run: (args) => args });
    const client = await sdkClient(server);
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.inputSchema.type, t.inputSchema.$ref])).toEqual([
      ["object", "#/$defs/Foo"],
      ["object", "#/$defs/Foo"],
    ]);
    const ok = await client.callTool({ name: "plain", arguments: { a: "x", next: { a: "y" } } });
    expect(ok.structuredContent).toEqual({ a: "x", next: { a: "y" } });
    const bad = await client.callTool({ name: "plain", arguments: { a: "x", next: { a: 1 } } });
    expect(bad).toMatchObject({
      isError: true,
      content: [
        { type: "text", text: "Invalid arguments for tool plain: next.a: expected string, received number" },
      ],
    });
  });

  it("still refuses a root that resolves to something other than an object", () => {
    const server = new McpServer({ name: "t", version: "1" });
    expect(() =>
      server.tool("t", { input: { $ref: "#/$defs/s", $defs: { s: { type: "string" } } }, run: () => "" }),
    ).toThrow(
      'The input JSON Schema must have "type": "object" at its root (tool and prompt arguments are always a JSON object), got "string"',
    );
  });
});

describe("zod's JSON Schemas, as plain JSON", () => {
  const formats = {
    email: z.email(),
    url: z.url(),
    uuid: z.uuid(),
    datetime: z.iso.datetime(),
    date: z.iso.date(),
    time: z.iso.time(),
    duration: z.iso.duration(),
    ipv4: z.ipv4(),
    ipv6: z.ipv6(),
    cidrv6: z.cidrv6(),
    base64: z.base64(),
    cuid2: z.cuid2(),
    ulid: z.ulid(),
    emoji: z.emoji(),
    e164: z.e164(),
    jwt: z.jwt(),
  };
  const shapes = z.object({
    tuple: z.tuple([z.string(), z.number()]),
    record: z.record(z.string(), z.number()),
    nullable: z.string().nullable(),
    tagged: z.discriminatedUnion("k", [
      z.object({ k: z.literal("a") }),
      z.object({ k: z.literal("b"), v: z.int() }),
    ]),
  });

  it.each(["draft-7", "draft-2020-12"] as const)(
    "compile in picomcp, every built-in pattern included (%s)",
    (target) => {
      const server = new McpServer({ name: "t", version: "1" });
      for (const [i, schema] of [z.object(formats), shapes].entries()) {
        const plain = JSON.parse(JSON.stringify(z.toJSONSchema(schema, { target })));
        expect(() => server.tool(`t${i}`, { input: plain, run: () => "" })).not.toThrow();
      }
    },
  );
});

describe("the jsonSchemaValidator option", () => {
  it("runs the ajv recipe: ajv's issues in the tool result", async () => {
    const client = await connectExample(ajvServer);
    expect(await client.callTool("tag_book", { id: 7, tags: ["sf"] })).toEqual({
      content: [{ type: "text", text: "Tagged 7: sf" }],
    });
    const bad = await client.callTool("tag_book", { id: "7", tags: ["sf", 2] });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toBe(
      "Invalid arguments for tool tag_book: id: must be integer; tags.1: must be string",
    );
  });

  it("compiles each plain input and output schema once, at registration, and leaves Standard Schemas alone", async () => {
    const compiled: unknown[] = [];
    const calls: unknown[] = [];
    const jsonSchemaValidator: JsonSchemaValidator = {
      compile(schema) {
        compiled.push(schema);
        return (value) => {
          calls.push(value);
          return (value as { n?: unknown }).n === 1 || [{ path: "n", message: "must be 1" }];
        };
      },
    };
    const server = new McpServer({ name: "t", version: "1", jsonSchemaValidator });
    const schema = { type: "object", properties: { n: { type: "number" } } };
    server.tool("plain", { input: schema, output: schema, run: ({ n }) => ({ n }) });
    server.tool("zod", { input: z.object({ n: z.number() }), run: ({ n }) => String(n) });
    expect(compiled).toEqual([schema, schema]);
    const client = await connect(server);
    expect((await client.callTool("plain", { n: 1 })).structuredContent).toEqual({ n: 1 });
    expect(text(await client.callTool("plain", { n: 2 }))).toBe(
      "Invalid arguments for tool plain: n: must be 1",
    );
    expect(text(await client.callTool("zod", { n: 2 }))).toBe("2");
    expect(calls).toEqual([{ n: 1 }, { n: 1 }, { n: 2 }]);
  });

  it("compiles the plain schemas of every tool the server makes: its tools, its apps' and resourcesAsTools' two", () => {
    const compiled: unknown[] = [];
    const server = new McpServer({
      name: "t",
      version: "1",
      jsonSchemaValidator: {
        compile(schema) {
          compiled.push(schema);
          return () => true;
        },
      },
    });
    const input = { type: "object", properties: { n: { type: "number" } } };
    server.tool("plain", { input, run: () => "" });
    server.app("chart", { ui: { uri: "ui://chart.html", html: "<p>" }, input, run: () => "" });
    server.resourcesAsTools();
    expect(compiled).toEqual([
      input,
      input,
      {
        type: "object",
        properties: { cursor: { type: "string", description: "nextCursor of the previous page" } },
      },
      {
        type: "object",
        properties: { uri: { type: "string", description: "The resource's URI" } },
        required: ["uri"],
      },
    ]);
  });

  it("turns a refusal at compile time into the registration error, and a throwing validate into an isError result", async () => {
    const server = new McpServer({
      name: "t",
      version: "1",
      jsonSchemaValidator: {
        compile(schema) {
          if ("nope" in schema) throw new TypeError("schema refused: nope");
          return () => {
            throw new Error("boom");
          };
        },
      },
    });
    expect(() => server.tool("a", { input: { type: "object", nope: 1 }, run: () => "" })).toThrow(
      "schema refused: nope",
    );
    server.tool("b", { input: { type: "object" }, run: () => "" });
    const result = await (await connect(server)).callTool("b", {});
    expect(result).toEqual({
      content: [
        {
          type: "text",
          text: "Invalid arguments for tool b: could not be validated (the schema's validator failed)",
        },
      ],
      isError: true,
    });
  });

  it("refuses an unknown keyword by default, naming it", () => {
    const server = new McpServer({ name: "t", version: "1" });
    expect(() => server.tool("t", { input: { type: "object", nullable: true }, run: () => "" })).toThrow(
      /unsupported keyword "nullable" at #/,
    );
  });
});
