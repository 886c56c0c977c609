import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { McpError, McpServer } from "../../src/index.js";
import { modernPeer } from "../modern-helpers.js";
import { sdkClient } from "../sdk-bridge.js";

function shop() {
  const server = new McpServer({ name: "t", version: "1.0.0" });
  server.resource("config://app", { description: "The configuration", read: () => "theme=dark" });
  server.resource("books://{id}", {
    description: "One book",
    list: () => [{ uri: "books://1", name: "Kindred" }],
    read: ({ id }) => {
      if (id !== "1") throw new McpError(-32002, `Resource not found: books://${id}`);
      return { id, title: "Kindred" };
    },
  });
  server.resource("files:///{+path}", { mimeType: "text/markdown", read: ({ path }) => `# ${path}` });
  server.resource("secret://{id}", { scopes: ["admin"], read: () => "hidden" });
  return server;
}

const READ_DESCRIPTION = [
  "Reads one resource by its URI, exactly as resources/read does. list_resources names the concrete ones.",
  "URI templates (RFC 6570; fill the {variables}):",
  "- books://{id} — One book",
  "- files:///{+path}",
].join("\n");

describe("server.resourcesAsTools()", () => {
  it("lists list_resources and read_resource, the templates named in the description", async () => {
    const server = shop();
    server.resourcesAsTools();
    const client = await sdkClient(server);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["list_resources", "read_resource"]);
    expect(tools[1]).toEqual({
      name: "read_resource",
      description: READ_DESCRIPTION,
      inputSchema: {
        type: "object",
        properties: { uri: { type: "string", description: "The resource's URI" } },
        required: ["uri"],
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    });
  });

  it("list_resources answers what resources/list and resources/templates/list answer", async () => {
    const server = shop();
    server.resourcesAsTools();
    const client = await sdkClient(server);
    const listed = await client.callTool({ name: "list_resources", arguments: {} });
    const resources = (await client.listResources()).resources;
    const resourceTemplates = (await client.listResourceTemplates()).resourceTemplates;
    expect(listed.structuredContent).toEqual({ resources, resourceTemplates });
    expect(resources.map((r) => r.uri)).toEqual(["config://app", "books://1"]);
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["books://{id}", "files:///{+path}"]);
    expect(JSON.parse((listed.content as any)[0].text)).toEqual(listed.structuredContent);
  });

  it("read_resource returns the contents of resources/read as embedded resources", async () => {
    const server = shop();
    server.resourcesAsTools();
    const client = await sdkClient(server);
    for (const uri of ["config://app", "books://1", "files:///docs/intro.md"]) {
      const { contents } = await client.readResource({ uri });
      const called = await client.callTool({ name: "read_resource", arguments: { uri } });
      expect(called).toEqual({ content: contents.map((resource) => ({ type: "resource", resource })) });
    }
    expect(await client.callTool({ name: "read_resource", arguments: { uri: "books://1" } })).toEqual({
      content: [
        {
          type: "resource",
          resource: { uri: "books://1", mimeType: "application/json", text: '{"id":"1","title":"Kindred"}' },
        },
      ],
    });
  });

  it("refuses what resources/read refuses, as a tool error: not found, traversal, scopes, a bad uri", async () => {
    const server = shop();
    server.resourcesAsTools();
    const client = await sdkClient(server);
    const call = (args: { [key: string]: unknown }) =>
      client.callTool({ name: "read_resource", arguments: args });
    expect(await call({ uri: "books://2" })).toEqual({
      content: [{ type: "text", text: "Resource not found: books://2" }],
      isError: true,
    });
    for (const uri of [
      "files:///../etc/passwd",
      "files:///a/%2e%2e/%2e%2e/etc/passwd",
      "files:////etc/passwd",
    ]) {
      expect(await call({ uri })).toEqual({
        content: [{ type: "text", text: `Resource not found: ${uri}` }],
        isError: true,
      });
    }
    const scoped = await call({ uri: "secret://1" });
    expect(scoped.isError).toBe(true);
    expect(await call({})).toEqual({
      content: [{ type: "text", text: "Invalid arguments for tool read_resource: uri: is required" }],
      isError: true,
    });
  });

  it("follows resources as they come and go: a new description and tools/list_changed", async () => {
    const server = shop();
    server.resourcesAsTools();
    const client = await sdkClient(server);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    const added = server.resource("authors://{name}", { description: "An author", read: () => "?" });
    await new Promise((r) => setTimeout(r, 10));
    expect(changes).toBe(1);
    const described = async () => (await client.listTools()).tools[1]!.description;
    expect(await described()).toBe(`${READ_DESCRIPTION}\n- authors://{name} — An author`);
    expect(
      (await client.callTool({ name: "read_resource", arguments: { uri: "authors://ann" } })).content,
    ).toEqual([{ type: "resource", resource: { uri: "authors://ann", mimeType: "text/plain", text: "?" } }]);
    added.remove();
    await new Promise((r) => setTimeout(r, 10));
    expect(changes).toBe(2);
    expect(await described()).toBe(READ_DESCRIPTION);
    // a static resource changes no description, so the tools list stays as it was
    server.resource("notes://today", { read: () => "" });
    await new Promise((r) => setTimeout(r, 10));
    expect(changes).toBe(2);
  });

  it("takes other names, refuses a clash, and remove() takes both tools away", async () => {
    const server = shop();
    server.tool("read_resource", { run: () => "mine" });
    expect(() => server.resourcesAsTools()).toThrow('A tool named "read_resource" is already registered');
    const bridge = server.resourcesAsTools({ listName: "ls", readName: "cat" });
    expect(() => server.resourcesAsTools({ listName: "x", readName: "x" })).toThrow(
      "resourcesAsTools: listName and readName must differ",
    );
    const client = await sdkClient(server);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["read_resource", "ls", "cat"]);
    bridge.remove();
    server.resource("more://{x}", { read: () => "" });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["read_resource"]);
  });

  it("serves 2026-07-28 requests without caching hints on the tool result", async () => {
    const server = shop();
    server.resourcesAsTools();
    const peer = modernPeer(server);
    const { answer } = await peer.request("tools/call", {
      name: "read_resource",
      arguments: { uri: "config://app" },
    });
    expect(answer.result).toEqual({
      resultType: "complete",
      content: [
        { type: "resource", resource: { uri: "config://app", mimeType: "text/plain", text: "theme=dark" } },
      ],
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "t", version: "1.0.0" } },
    });
  });
});

describe("docs/resources.md: resources as tools", () => {
  it("reads a day's notes through read_resource", async () => {
    const { server } = await import("../../examples/docs/resources-as-tools.js");
    const client = await sdkClient(server as never);
    expect(
      await client.callTool({ name: "read_resource", arguments: { uri: "notes://2026-12-01" } }),
    ).toEqual({
      content: [
        {
          type: "resource",
          resource: { uri: "notes://2026-12-01", mimeType: "text/plain", text: "Notes of 2026-12-01" },
        },
      ],
    });
    expect((await client.listTools()).tools[1]!.description).toContain(
      "- notes://{date} — The notes of one day",
    );
  });
});
