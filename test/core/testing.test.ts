import { describe, expect, it } from "vitest";
import { link, McpError, McpServer } from "../../src/index.js";
import { connect } from "../../src/testing.js";

describe("picomcp/testing", () => {
  it("connects an initialized client with typed helpers", async () => {
    const server = new McpServer({ name: "unit", version: "1.2.3" });
    server.tool("add", {
      input: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
      run: ({ a, b }) => String(Number(a) + Number(b)),
    });
    server.tool("report", { run: () => link("reports://q3", "Q3 report", { mimeType: "application/pdf" }) });
    server.resource("config://app", { read: () => "theme=dark" });
    server.prompt("hi", { get: () => "Hello" });
    const client = await connect(server);
    expect(client.initializeResult.serverInfo).toEqual({ name: "unit", version: "1.2.3" });
    expect(await client.callTool("add", { a: 1, b: 2 })).toEqual({ content: [{ type: "text", text: "3" }] });
    expect(await client.callTool("report")).toEqual({
      content: [
        { type: "resource_link", uri: "reports://q3", name: "Q3 report", mimeType: "application/pdf" },
      ],
    });
    expect(await client.readResource("config://app")).toEqual({
      contents: [{ uri: "config://app", mimeType: "text/plain", text: "theme=dark" }],
    });
    expect(await client.getPrompt("hi")).toEqual({
      messages: [{ role: "user", content: { type: "text", text: "Hello" } }],
    });
    expect(await client.ping()).toEqual({});
    await expect(client.request("nope")).rejects.toEqual(new McpError(-32601, "Method not found: nope"));
  });

  it("records notifications and answers the server's requests with the given handlers", async () => {
    const server = new McpServer({ name: "unit", version: "1" });
    server.tool("ask", {
      run: async (_args, ctx) => {
        ctx.log("info", "asking");
        const answer = await ctx.elicit({
          message: "Name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        });
        const roots = await ctx.roots();
        return `${answer.action}:${String(answer.content?.name)}:${roots.map((r) => r.uri).join(",")}`;
      },
    });
    const client = await connect(server, {
      onElicit: () => ({ action: "accept", content: { name: "Ada" } }),
      roots: [{ uri: "file:///work", name: "work" }],
    });
    expect(await client.callTool("ask")).toEqual({
      content: [{ type: "text", text: "accept:Ada:file:///work" }],
    });
    expect(client.notifications).toEqual([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "asking" } },
    ]);
  });

  it("sees list_changed when a tool is added after connecting", async () => {
    const server = new McpServer({ name: "unit", version: "1" });
    server.tool("a", { run: () => "a" });
    const client = await connect(server);
    const changed = client.waitForNotification("notifications/tools/list_changed");
    const handle = server.tool("b", { run: () => "b" });
    expect(await changed).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["a", "b"]);
    handle.remove();
    await client.waitForNotification("notifications/tools/list_changed");
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["a"]);
  });

  it("completes with the argument, its value and the chosen arguments, as the wire names them", async () => {
    const server = new McpServer({ name: "unit", version: "1" });
    const seen: unknown[] = [];
    server.prompt("translate", {
      args: [{ name: "text", required: true }, { name: "to" }],
      complete: {
        to: (value, ctx) => {
          seen.push({ value, arguments: ctx.arguments });
          return ["French", "Finnish", "German"].filter((l) => l.startsWith(value));
        },
      },
      get: ({ text }) => text,
    });
    server.resource("books://{id}", { complete: { id: (value) => [`${value}1`] }, read: ({ id }) => id });
    const client = await connect(server);
    const ref = { type: "ref/prompt", name: "translate" } as const;
    expect(await client.complete(ref, { argument: "to", value: "F", arguments: { text: "Hola" } })).toEqual({
      completion: { values: ["French", "Finnish"] },
    });
    expect(await client.complete(ref, { argument: "to", value: "" })).toEqual({
      completion: { values: ["French", "Finnish", "German"] },
    });
    expect(seen).toEqual([
      { value: "F", arguments: { text: "Hola" } },
      { value: "", arguments: {} },
    ]);
    expect(
      await client.complete({ type: "ref/resource", uri: "books://{id}" }, { argument: "id", value: "b" }),
    ).toEqual({ completion: { values: ["b1"] } });
  });

  it("pages every list with { cursor }", async () => {
    const server = new McpServer({ name: "unit", version: "1", pageSize: 1 });
    for (const n of ["a", "b"]) {
      server.tool(n, { run: () => n });
      server.prompt(n, { get: () => n });
      server.resource(`static://${n}`, { read: () => n });
      server.resource(`tpl${n}://{x}`, { read: () => n });
    }
    const client = await connect(server);
    const tools = await client.listTools();
    expect((await client.listTools({ cursor: tools.nextCursor })).tools.map((t) => t.name)).toEqual(["b"]);
    const prompts = await client.listPrompts();
    expect((await client.listPrompts({ cursor: prompts.nextCursor })).prompts.map((p) => p.name)).toEqual([
      "b",
    ]);
    const resources = await client.listResources({});
    expect(
      (await client.listResources({ cursor: resources.nextCursor })).resources.map((r) => r.uri),
    ).toEqual(["static://b"]);
    const templates = await client.listResourceTemplates();
    expect(
      (await client.listResourceTemplates({ cursor: templates.nextCursor })).resourceTemplates.map(
        (t) => t.uriTemplate,
      ),
    ).toEqual(["tplb://{x}"]);
  });

  it("speaks 2026-07-28 when asked: _meta on every request, input rounds answered, log level in _meta", async () => {
    const server = new McpServer({ name: "unit", version: "1.2.3" });
    server.tool("greet", {
      run: async (_a, ctx) => {
        ctx.log("info", "greeting");
        const [who, roots] = await Promise.all([
          ctx.elicit({ message: "Name?", requestedSchema: { type: "object", properties: {} } }),
          ctx.roots(),
        ]);
        return `Hello, ${who.content?.name} at ${roots[0]?.uri} (${ctx.client.protocolVersion})`;
      },
    });
    const seen: object[] = [];
    const client = await connect(server, {
      protocolVersion: "2026-07-28",
      onElicit: (params) => {
        seen.push(params);
        return { action: "accept", content: { name: "Ann" } };
      },
      roots: [{ uri: "file:///w" }],
    });
    expect(client.initializeResult.supportedVersions).toContain("2026-07-28");
    expect(client.connection.protocolVersion).toBeUndefined();
    await client.setLogLevel("info");
    expect(await client.callTool("greet")).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "Hello, Ann at file:///w (2026-07-28)" }],
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "unit", version: "1.2.3" } },
    });
    expect(seen).toEqual([{ message: "Name?", requestedSchema: { type: "object", properties: {} } }]);
    // the first round logged too: the handler runs once per round
    expect(client.notifications.map((n) => n.method)).toEqual([
      "notifications/message",
      "notifications/message",
    ]);
    await expect(client.ping()).rejects.toMatchObject({ code: -32601 });
  });
});
