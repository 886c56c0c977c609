// The server the official conformance suite (@modelcontextprotocol/conformance) runs against: every
// fixture of its server scenarios. Listens on HOST:PORT (default 127.0.0.1:3000) at /mcp.
import { McpServer } from "picomcp";
import { type NodeServer, serve } from "picomcp/node";
import { register2026Fixtures } from "./conformance-2026.js";
import { registerExtensionFixtures } from "./conformance-ext.js";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
// a valid 44-byte PCM WAV with no samples
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

const server = new McpServer({ name: "picomcp-conformance", version: "1.0.0" });
let http: NodeServer | undefined;

// ---------------------------------------------------------------- tools

// first in tools/list: http-header-validation calls tools[0] with `arguments: {}`
server.tool("test_x_mcp_header", {
  description: "SEP-2243: region is mirrored into the Mcp-Param-Region header",
  input: {
    type: "object",
    properties: {
      region: { type: "string", description: "mirrored into Mcp-Param-Region", "x-mcp-header": "Region" },
      level: { type: "integer", description: "not mirrored" },
    },
  },
  run: (args: { region?: string }) => `region=${args.region ?? "<none>"}`,
});

server.tool("test_simple_text", {
  description: "Returns a simple text response",
  run: () => "This is a simple text response for testing.",
});

server.tool("test_image_content", {
  description: "Returns an image",
  run: () => ({ type: "image", data: PNG, mimeType: "image/png" }),
});

server.tool("test_audio_content", {
  description: "Returns audio",
  run: () => ({ type: "audio", data: WAV, mimeType: "audio/wav" }),
});

server.tool("test_embedded_resource", {
  description: "Returns an embedded resource",
  run: () => ({
    type: "resource",
    resource: {
      uri: "test://embedded-resource",
      mimeType: "text/plain",
      text: "This is an embedded resource content.",
    },
  }),
});

server.tool("test_multiple_content_types", {
  description: "Returns text, an image and a resource",
  run: () => [
    { type: "text", text: "Multiple content types test:" },
    { type: "image", data: PNG, mimeType: "image/png" },
    {
      type: "resource",
      resource: {
        uri: "test://mixed-content-resource",
        mimeType: "application/json",
        text: JSON.stringify({ test: "data", value: 123 }),
      },
    },
  ],
});

server.tool("test_tool_with_logging", {
  description: "Sends three log messages while it runs",
  run: async (_args, ctx) => {
    ctx.log("info", "Tool execution started");
    await sleep(50);
    ctx.log("info", "Tool processing data");
    await sleep(50);
    ctx.log("info", "Tool execution completed");
    return "Logging test completed";
  },
});

server.tool("test_error_handling", {
  description: "Always fails with an error result",
  run: () => ({
    isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
  }),
});

server.tool("test_tool_with_progress", {
  description: "Reports progress 0, 50, 100 of 100",
  run: async (_args, ctx) => {
    ctx.progress(0, 100);
    await sleep(50);
    ctx.progress(50, 100);
    await sleep(50);
    ctx.progress(100, 100);
    return "Progress test completed";
  },
});

server.tool("test_sampling", {
  description: "Asks the client's model to answer a prompt",
  input: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
  run: async ({ prompt }, ctx) => {
    const answer = await ctx.sample({
      messages: [{ role: "user", content: { type: "text", text: String(prompt) } }],
      maxTokens: 100,
    });
    const content = answer.content as { type?: string; text?: string };
    return `LLM response: ${content.type === "text" ? content.text : JSON.stringify(content)}`;
  },
});

const describeAnswer = (r: { action: string; content?: object }) =>
  `action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;

server.tool("test_elicitation", {
  description: "Asks the user for a username and an email",
  input: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  run: async ({ message }, ctx) => {
    const answer = await ctx.elicit({
      message: String(message),
      requestedSchema: {
        type: "object",
        properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" },
        },
        required: ["username", "email"],
      },
    });
    return `User response: ${describeAnswer(answer)}`;
  },
});

server.tool("test_elicitation_sep1034_defaults", {
  description: "Elicitation with default values for every primitive type (SEP-1034)",
  run: async (_args, ctx) => {
    const answer = await ctx.elicit({
      message: "Please review and update the form fields with defaults",
      requestedSchema: {
        type: "object",
        properties: {
          name: { type: "string", description: "User name", default: "John Doe" },
          age: { type: "integer", description: "User age", default: 30 },
          score: { type: "number", description: "User score", default: 95.5 },
          status: {
            type: "string",
            description: "User status",
            enum: ["active", "inactive", "pending"],
            default: "active",
          },
          verified: { type: "boolean", description: "Verification status", default: true },
        },
      },
    });
    return `Elicitation completed: ${describeAnswer(answer)}`;
  },
});

const choices = (prefix: string, titles: string[]) =>
  titles.map((title, i) => ({ const: `${prefix}${i + 1}`, title }));

server.tool("test_elicitation_sep1330_enums", {
  description: "Elicitation with every enum schema shape (SEP-1330)",
  run: async (_args, ctx) => {
    const answer = await ctx.elicit({
      message: "Please select options from the enum fields",
      requestedSchema: {
        type: "object",
        properties: {
          untitledSingle: {
            type: "string",
            description: "Select one option",
            enum: ["option1", "option2", "option3"],
          },
          titledSingle: {
            type: "string",
            description: "Select one option with titles",
            oneOf: choices("value", ["First Option", "Second Option", "Third Option"]),
          },
          legacyEnum: {
            type: "string",
            description: "Select one option (legacy)",
            enum: ["opt1", "opt2", "opt3"],
            enumNames: ["Option One", "Option Two", "Option Three"],
          },
          untitledMulti: {
            type: "array",
            description: "Select multiple options",
            items: { type: "string", enum: ["option1", "option2", "option3"] },
          },
          titledMulti: {
            type: "array",
            description: "Select multiple options with titles",
            items: { anyOf: choices("value", ["First Choice", "Second Choice", "Third Choice"]) },
          },
        },
      },
    });
    return `Elicitation completed: ${describeAnswer(answer)}`;
  },
});

server.tool("json_schema_2020_12_tool", {
  description:
    "A tool whose input schema uses JSON Schema 2020-12 ($schema, $defs, $ref, composition, if/then/else)",
  input: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    $defs: {
      address: {
        $anchor: "addressDef",
        type: "object",
        properties: { street: { type: "string" }, city: { type: "string" } },
      },
    },
    properties: {
      name: { type: "string" },
      address: { $ref: "#/$defs/address" },
      contactMethod: { type: "string", enum: ["phone", "email"] },
      phone: { type: "string" },
      email: { type: "string" },
    },
    allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
    if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, not a thenable
    then: { required: ["phone"] },
    else: { required: ["email"] },
    additionalProperties: false,
  },
  run: (args) => `Received: ${JSON.stringify(args)}`,
});

server.tool("test_reconnection", {
  description: "Closes its SSE stream mid-call; the client resumes with Last-Event-ID (SEP-1699)",
  run: async (_args, ctx) => {
    http?.handler.closeSseStream(ctx);
    await sleep(100);
    return "Reconnection test completed";
  },
});

// 2026-07-28 diagnostics and input-required fixtures
register2026Fixtures(server);
registerExtensionFixtures(server);

// ---------------------------------------------------------------- resources

server.resource("test://static-text", {
  name: "Static text resource",
  description: "A static text resource for testing",
  mimeType: "text/plain",
  read: () => "This is the content of the static text resource.",
});

server.resource("test://static-binary", {
  name: "Static binary resource",
  description: "A static binary resource (a PNG image) for testing",
  mimeType: "image/png",
  read: () => bytes(PNG),
});

server.resource("test://template/{id}/data", {
  name: "Template resource",
  description: "A resource template with an id parameter",
  mimeType: "application/json",
  read: ({ id }) => ({ id, templateTest: true, data: `Data for ID: ${id}` }),
});

server.resource("test://watched-resource", {
  name: "Watched resource",
  description: "A resource that changes every 3 seconds; subscribe to hear about it",
  mimeType: "text/plain",
  read: () => `Watched resource content, version ${version}`,
});
let version = 0;
setInterval(() => {
  version++;
  server.resourceUpdated("test://watched-resource");
}, 3000).unref();

// ---------------------------------------------------------------- prompts

server.prompt("test_simple_prompt", {
  description: "A simple prompt without arguments",
  get: () => "This is a simple prompt for testing.",
});

server.prompt("test_prompt_with_arguments", {
  description: "A prompt with two required arguments",
  args: [
    { name: "arg1", description: "First test argument", required: true },
    { name: "arg2", description: "Second test argument", required: true },
  ],
  complete: {
    arg1: (value) => ["testValue1", "testValue2", "paris", "park"].filter((v) => v.startsWith(value)),
  },
  get: ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
});

server.prompt("test_prompt_with_embedded_resource", {
  description: "A prompt that embeds a resource",
  args: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
  get: ({ resourceUri }) => [
    {
      role: "user",
      content: {
        type: "resource",
        resource: {
          uri: resourceUri,
          mimeType: "text/plain",
          text: "Embedded resource content for testing.",
        },
      },
    },
    { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
  ],
});

server.prompt("test_prompt_with_image", {
  description: "A prompt with an image",
  get: () => [
    { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
    { role: "user", content: { type: "text", text: "Please analyze the image above." } },
  ],
});

// ---------------------------------------------------------------- dynamic extras (list_changed)

setTimeout(() => {
  server.tool("test_dynamic_tool", { description: "Added 2 s after start", run: () => "dynamic" });
  server.prompt("test_dynamic_prompt", { description: "Added 2 s after start", get: () => "dynamic" });
  server.resource("test://dynamic-resource", {
    description: "Added 2 s after start",
    mimeType: "text/plain",
    read: () => "dynamic",
  });
}, 2000).unref();

http = await serve(server, {
  port: Number(process.env.PORT ?? 3000),
  hostname: process.env.HOST ?? "127.0.0.1",
});
console.error(`picomcp conformance server at ${http.url}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => void http?.close().then(() => process.exit(0)));
}
