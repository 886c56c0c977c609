// server.mount(prefix, child) on the wire: what a parent serves of its children, in both eras, exact JSON.
import { describe, expect, it } from "vitest";
import { defaultExtensions, type ErrorInfo, McpError, McpServer } from "../src/index.js";
import { rawPeer } from "./helpers.js";
import { meta, modernPeer } from "./modern-helpers.js";

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000 });

/** A child with one of each primitive, and the errors its `onError` heard. */
function weather(errors: [string, ErrorInfo][] = []) {
  const child = new McpServer({
    name: "forecasts",
    version: "1.0.0",
    onError: (e, info) => void errors.push([String(e), info]),
  });
  child.tool("forecast", {
    description: "The forecast of a city",
    input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    run: ({ city }) => `Sunny in ${city}`,
  });
  child.prompt("brief", {
    args: [{ name: "city", required: true }],
    complete: { city: (v) => ["Paris", "Pau", "Lyon"].filter((c) => c.startsWith(v)) },
    get: ({ city }) => `Brief me on ${city}`,
  });
  child.resource("weather://today", { mimeType: "text/plain", read: () => "mild" });
  child.resource("weather://cities/{city}", {
    complete: { city: (v) => ["Nice", "Nantes"].filter((c) => c.startsWith(v)) },
    read: ({ city }) => `The weather of ${city}`,
  });
  return child;
}

function parentOf(child: McpServer, onError?: (e: unknown, info: ErrorInfo) => void) {
  const parent = new McpServer({ name: "main", version: "1.0.0", ...(onError ? { onError } : {}) });
  parent.tool("hello", { run: () => "hi" });
  const mount = parent.mount("weather", child);
  return { parent, mount };
}

const req = (id: number, method: string, params?: object) => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params ? { params } : {}),
});

describe("server.mount in a 2025-11-25 session", () => {
  it("lists and serves the child's tools, prompts, resources and templates under the prefix", async () => {
    const { parent } = parentOf(weather());
    const p = rawPeer(parent);
    const init = await p.initialize();
    expect(init.result.capabilities).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
    });
    expect(await p.send(req(1, "tools/list"))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        tools: [
          { name: "hello", inputSchema: { type: "object", properties: {} } },
          {
            name: "weather_forecast",
            description: "The forecast of a city",
            inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
        ],
      },
    });
    expect(
      await p.send(req(2, "tools/call", { name: "weather_forecast", arguments: { city: "Pau" } })),
    ).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "Sunny in Pau" }] } });
    expect(await p.send(req(3, "prompts/list"))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { prompts: [{ name: "weather_brief", arguments: [{ name: "city", required: true }] }] },
    });
    expect(
      await p.send(req(4, "prompts/get", { name: "weather_brief", arguments: { city: "Lyon" } })),
    ).toEqual({
      jsonrpc: "2.0",
      id: 4,
      result: { messages: [{ role: "user", content: { type: "text", text: "Brief me on Lyon" } }] },
    });
    expect(await p.send(req(5, "resources/list"))).toEqual({
      jsonrpc: "2.0",
      id: 5,
      result: { resources: [{ uri: "weather://today", name: "weather://today", mimeType: "text/plain" }] },
    });
    expect(await p.send(req(6, "resources/templates/list"))).toEqual({
      jsonrpc: "2.0",
      id: 6,
      result: {
        resourceTemplates: [{ uriTemplate: "weather://cities/{city}", name: "weather://cities/{city}" }],
      },
    });
    expect(await p.send(req(7, "resources/read", { uri: "weather://cities/Nice" }))).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: {
        contents: [{ uri: "weather://cities/Nice", mimeType: "text/plain", text: "The weather of Nice" }],
      },
    });
    expect(
      await p.send(
        req(8, "completion/complete", {
          ref: { type: "ref/prompt", name: "weather_brief" },
          argument: { name: "city", value: "P" },
        }),
      ),
    ).toEqual({ jsonrpc: "2.0", id: 8, result: { completion: { values: ["Paris", "Pau"] } } });
    expect(
      await p.send(
        req(9, "completion/complete", {
          ref: { type: "ref/resource", uri: "weather://cities/{city}" },
          argument: { name: "city", value: "Na" },
        }),
      ),
    ).toEqual({ jsonrpc: "2.0", id: 9, result: { completion: { values: ["Nantes"] } } });
  });

  it("answers the child's refusals as the child does", async () => {
    const { parent } = parentOf(weather());
    const p = rawPeer(parent);
    await p.initialize();
    expect(await p.send(req(1, "tools/call", { name: "weather_forecast", arguments: {} }))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        content: [{ type: "text", text: "Invalid arguments for tool forecast: city: is required" }],
        isError: true,
      },
    });
    expect(await p.send(req(2, "prompts/get", { name: "weather_brief", arguments: {} }))).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32602,
        message: "Missing required argument for prompt brief: city",
        data: { missing: ["city"] },
      },
    });
    expect(await p.send(req(3, "resources/read", { uri: "weather://elsewhere" }))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: {
        code: -32002,
        message: "Resource not found: weather://elsewhere",
        data: { uri: "weather://elsewhere" },
      },
    });
    expect(await p.send(req(4, "tools/call", { name: "forecast" }))).toMatchObject({
      error: { code: -32602, message: "Unknown tool: forecast" },
    });
  });

  it("passes errors and isError results as from the child; its onError hears its failures, the parent's does not", async () => {
    const childErrors: [string, ErrorInfo][] = [];
    const parentErrors: unknown[] = [];
    const child = weather(childErrors);
    child.tool("broken", {
      run: () => {
        throw new Error("disk on fire");
      },
    });
    child.tool("refuses", {
      run: () => {
        throw new McpError(-32001, "Quota spent", { left: 0 });
      },
    });
    child.prompt("crash", {
      get: () => {
        throw new Error("template lost");
      },
    });
    const { parent } = parentOf(child, (e) => void parentErrors.push(e));
    const p = rawPeer(parent);
    await p.initialize();
    expect(await p.send(req(1, "tools/call", { name: "weather_broken" }))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "disk on fire" }], isError: true },
    });
    expect(await p.send(req(2, "tools/call", { name: "weather_refuses" }))).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32001, message: "Quota spent", data: { left: 0 } },
    });
    expect(await p.send(req(3, "prompts/get", { name: "weather_crash" }))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32603, message: "Internal error" },
    });
    expect(childErrors).toEqual([
      ["Error: disk on fire", { method: "tools/call", requestId: 1, name: "broken" }],
      ["Error: template lost", { method: "prompts/get", requestId: 3, name: "crash" }],
    ]);
    expect(parentErrors).toEqual([]);
  });

  it("mirrors registrations and removals at once, each list change told once", async () => {
    const child = weather();
    const { parent } = parentOf(child);
    const p = rawPeer(parent);
    await p.initialize();
    const later = child.tool("alerts", { run: () => "none" });
    child.resource("weather://alerts", { read: () => "none" });
    expect(parent.knows("tool", "weather_alerts")).toBe(true);
    await poll(() => p.sent.map((m) => m.method).sort()).toEqual([
      "notifications/resources/list_changed",
      "notifications/tools/list_changed",
    ]);
    expect(await p.send(req(1, "tools/call", { name: "weather_alerts" }))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "none" }] },
    });
    p.sent.length = 0;
    later.remove();
    expect(parent.knows("tool", "weather_alerts")).toBe(false);
    await poll(() => p.sent).toEqual([{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }]);
    expect(await p.send(req(2, "tools/call", { name: "weather_alerts" }))).toMatchObject({
      error: { code: -32602, message: "Unknown tool: weather_alerts" },
    });
  });

  it("unmounts everything with list changes; the child is left as it was", async () => {
    const child = weather();
    const { parent, mount } = parentOf(child);
    const p = rawPeer(parent);
    await p.initialize();
    mount.remove();
    mount.remove();
    await poll(() => p.sent.map((m) => m.method).sort()).toEqual([
      "notifications/prompts/list_changed",
      "notifications/resources/list_changed",
      "notifications/tools/list_changed",
    ]);
    expect((await p.send(req(1, "tools/list"))).result.tools.map((t: { name: string }) => t.name)).toEqual([
      "hello",
    ]);
    expect(await p.send(req(2, "resources/read", { uri: "weather://today" }))).toMatchObject({
      error: { code: -32002 },
    });
    // no longer guarded, no longer mirrored
    child.tool("hello", { run: () => "child's" });
    parent.tool("weather_forecast", { run: () => "parent's" });
    expect(parent.knows("tool", "weather_hello")).toBe(false);
    const c = rawPeer(child);
    await c.initialize();
    expect((await c.send(req(1, "tools/list"))).result.tools.map((t: { name: string }) => t.name)).toEqual([
      "forecast",
      "hello",
    ]);
    // mounting it again meets the parent's own tool now
    expect(() => parent.mount("weather", child)).toThrow(
      'Tool "weather_forecast" of mount "weather" (server "forecasts") collides with tool "weather_forecast" of server "main": rename one, or mount under another prefix',
    );
  });

  it("runs the child's wrappers and rate rules, with the parent's caller and credentials", async () => {
    const child = new McpServer({
      name: "metered",
      version: "1.0.0",
      limits: { rates: { tools: { lookup: { perMinute: 1, burst: 1 } } } },
    });
    const seen: string[] = [];
    child.use({
      id: "com.example/audit",
      wrap: {
        "tools/call": async (params, ctx, next) => {
          seen.push(`${params.name} by ${ctx.auth?.clientId}`);
          return next();
        },
      },
    });
    child.tool("lookup", { run: (_a, ctx) => `for ${ctx.auth?.clientId} (${ctx.caller})` });
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.mount("m", child);
    const p = rawPeer(parent, { token: "t", clientId: "app-1", scopes: [] });
    await p.initialize();
    expect(await p.send(req(1, "tools/call", { name: "m_lookup" }))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "for app-1 (principal:client::app-1)" }] },
    });
    expect(await p.send(req(2, "tools/call", { name: "m_lookup" }))).toMatchObject({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32000, data: { limit: "rate" } },
    });
    expect(seen).toEqual(["lookup by app-1"]);
  });

  it("forwards the child's resource updates to the parent's subscribers", async () => {
    const child = weather();
    const { parent } = parentOf(child);
    const p = rawPeer(parent);
    await p.initialize();
    expect(await p.send(req(1, "resources/subscribe", { uri: "weather://today" }))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {},
    });
    child.resourceUpdated("weather://today");
    child.resourceUpdated("weather://elsewhere");
    await poll(() => p.sent).toEqual([
      { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "weather://today" } },
    ]);
  });
});

describe("server.mount at 2026-07-28", () => {
  it("serves the mounted primitives as complete results of the parent", async () => {
    const { parent } = parentOf(weather());
    const p = modernPeer(parent);
    const serverInfo = { "io.modelcontextprotocol/serverInfo": { name: "main", version: "1.0.0" } };
    const call = await p.request("tools/call", { name: "weather_forecast", arguments: { city: "Nice" } });
    expect(call.answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resultType: "complete",
        content: [{ type: "text", text: "Sunny in Nice" }],
        _meta: serverInfo,
      },
    });
    const read = await p.request("resources/read", { uri: "weather://today" });
    expect(read.answer).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: {
        resultType: "complete",
        contents: [{ uri: "weather://today", mimeType: "text/plain", text: "mild" }],
        ttlMs: 0,
        cacheScope: "private",
        _meta: serverInfo,
      },
    });
    const list = await p.request("prompts/list");
    expect(list.answer.result.prompts).toEqual([
      { name: "weather_brief", arguments: [{ name: "city", required: true }] },
    ]);
  });

  it("asks the client through the parent: an input round for the child's elicit", async () => {
    const child = new McpServer({ name: "asker", version: "1.0.0" });
    child.tool("ask", {
      run: async (_a, ctx) => {
        const r = await ctx.elicit(
          { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
          { key: "name" },
        );
        return `Hello, ${r.content?.name}`;
      },
    });
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.mount("a", child);
    const p = modernPeer(parent);
    const caps = { elicitation: {} };
    const first = await p.raw(req(1, "tools/call", { name: "a_ask", _meta: meta(caps) }));
    expect(first.answer.result).toMatchObject({
      resultType: "input_required",
      inputRequests: { name: { method: "elicitation/create", params: { message: "Name?" } } },
    });
    const second = await p.raw(
      req(2, "tools/call", {
        name: "a_ask",
        _meta: meta(caps),
        inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
        requestState: first.answer.result.requestState,
      }),
    );
    expect(second.answer.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: "Hello, Ada" }],
    });
  });
});

describe("collisions", () => {
  const tool = (s: McpServer, name: string) => s.tool(name, { run: () => name });

  it("refuses two children whose names meet, naming both, and adds nothing of the second", async () => {
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    const a = new McpServer({ name: "alpha", version: "1.0.0" });
    const b = new McpServer({ name: "beta", version: "1.0.0" });
    tool(a, "x_y");
    tool(b, "y");
    tool(b, "z");
    parent.mount("m", a);
    expect(() => parent.mount("m_x", b)).toThrow(
      'Tool "m_x_y" of mount "m_x" (server "beta") collides with tool "m_x_y" of mount "m" (server "alpha"): rename one, or mount under another prefix',
    );
    expect(parent.knows("tool", "m_x_z")).toBe(false);
    // the failed mount left no guard: b registers freely
    tool(b, "w");
  });

  it("refuses a resource URI or a template matching the same URIs, naming both", () => {
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.resource("notes://{id}", { read: ({ id }) => id });
    const a = new McpServer({ name: "alpha", version: "1.0.0" });
    a.resource("notes://{key}", { read: ({ key }) => key });
    expect(() => parent.mount("a", a)).toThrow(
      'Resource template "notes://{key}" of mount "a" (server "alpha") collides with resource template "notes://{id}" of server "main" (both match the same URIs): rename one, or mount under another prefix',
    );
    const b = new McpServer({ name: "beta", version: "1.0.0" });
    const c = new McpServer({ name: "gamma", version: "1.0.0" });
    b.resource("config://app", { read: () => "b" });
    c.resource("config://app", { read: () => "c" });
    parent.mount("b", b);
    expect(() => parent.mount("c", c)).toThrow(
      'Resource "config://app" of mount "c" (server "gamma") collides with resource "config://app" of mount "b" (server "beta"): rename one, or mount under another prefix',
    );
  });

  it("refuses a later registration in the child, or in the parent, that would collide, naming both", () => {
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    const child = new McpServer({ name: "kid", version: "1.0.0" });
    tool(parent, "k_taken");
    parent.mount("k", child);
    expect(() => tool(child, "taken")).toThrow(
      'Tool "k_taken" of mount "k" (server "kid") collides with tool "k_taken" of server "main": rename one, or mount under another prefix',
    );
    const c = rawPeer(child);
    expect(child.knows("tool", "taken")).toBe(false);
    void c;
    tool(child, "mine");
    expect(() => tool(parent, "k_mine")).toThrow(
      'Tool "k_mine" of server "main" collides with tool "k_mine" of mount "k" (server "kid"): rename one, or mount under another prefix',
    );
    child.resource("kid://doc", { read: () => "" });
    expect(() => parent.resource("kid://doc", { read: () => "" })).toThrow(
      'Resource "kid://doc" of server "main" collides with resource "kid://doc" of mount "k" (server "kid"): rename one, or mount under another prefix',
    );
    parent.prompt("k_p", { get: () => "" });
    expect(() => child.prompt("p", { get: () => "" })).toThrow(
      'Prompt "k_p" of mount "k" (server "kid") collides with prompt "k_p" of server "main": rename one, or mount under another prefix',
    );
  });

  it("refuses a bad prefix, one used twice, a loop, and what is not a server", () => {
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    const child = new McpServer({ name: "kid", version: "1.0.0" });
    expect(() => parent.mount("a b", child)).toThrow(
      'server.mount("a b"): a prefix is 1-64 characters of A-Z a-z 0-9 _ - ., starting with a letter or digit (it starts the names: prefix_tool)',
    );
    parent.mount("k", child);
    expect(() => parent.mount("k", new McpServer({ name: "other", version: "1" }))).toThrow(
      'server.mount("k"): server "kid" is mounted under "k" already',
    );
    expect(() => child.mount("up", parent)).toThrow(
      'server.mount("up"): server "main" is server "kid" or mounts it: that would be a loop',
    );
    expect(() => parent.mount("self", parent)).toThrow("that would be a loop");
    expect(() => parent.mount("x", {} as McpServer)).toThrow(
      'server.mount("x"): what is mounted must be an McpServer',
    );
  });

  it("refuses a mounted tool name longer than 128 characters", () => {
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    const child = new McpServer({ name: "kid", version: "1.0.0" });
    tool(child, "t".repeat(120));
    expect(() => parent.mount("prefix12", child)).toThrow(
      `Tool "prefix12_${"t".repeat(120)}" of mount "prefix12" (server "kid") is longer than 128 characters: use a shorter prefix`,
    );
  });
});

describe("nested mounts", () => {
  it("serves a grandchild through its parent, live, and refuses a collision two levels up", async () => {
    const top = new McpServer({ name: "top", version: "1.0.0" });
    const mid = new McpServer({ name: "mid", version: "1.0.0" });
    const leaf = new McpServer({ name: "leaf", version: "1.0.0" });
    leaf.tool("t", { run: () => "from leaf" });
    mid.mount("l", leaf);
    top.mount("m", mid);
    top.tool("m_l_taken", { run: () => "" });
    const p = rawPeer(top);
    await p.initialize();
    expect(await p.send(req(1, "tools/call", { name: "m_l_t" }))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "from leaf" }] },
    });
    leaf.tool("u", { run: () => "u" });
    expect(top.knows("tool", "m_l_u")).toBe(true);
    await poll(() => p.sent).toEqual([{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }]);
    expect(() => leaf.tool("taken", { run: () => "" })).toThrow(
      'Tool "m_l_taken" of mount "m" (server "mid") collides with tool "m_l_taken" of server "top": rename one, or mount under another prefix',
    );
    expect(mid.knows("tool", "l_taken")).toBe(false);
    expect(() => leaf.mount("loop", top)).toThrow("that would be a loop");
  });
});

describe("mounted skills", () => {
  const review = { description: "Reviews a diff", instructions: "# Steps", files: { "notes.md": "n" } };

  it("serves the child's skills under prefix-name, live, as skills of the parent", async () => {
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    const child = new McpServer({ name: "kid", version: "1.0.0" });
    child.skill("review", review);
    parent.mount("code", child);
    const p = rawPeer(parent);
    await p.initialize();
    const list = await p.send(req(1, "skills/list"));
    expect(
      list.result.skills.map((s: { uri: string; frontmatter: object }) => [s.uri, s.frontmatter]),
    ).toEqual([["skill://code-review/SKILL.md", { name: "code-review", description: "Reviews a diff" }]]);
    expect(
      (await p.send(req(2, "resources/list"))).result.resources.map((r: { uri: string }) => r.uri),
    ).toEqual(["skill://code-review/SKILL.md", "skill://code-review/notes.md"]);
    expect(await p.send(req(3, "resources/read", { uri: "skill://code-review/SKILL.md" }))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: {
        contents: [
          {
            uri: "skill://code-review/SKILL.md",
            mimeType: "text/markdown",
            text: '---\nname: "code-review"\ndescription: "Reviews a diff"\n---\n\n# Steps',
          },
        ],
      },
    });
    const later = child.skill("lint", { description: "Lints", instructions: "run it" });
    expect((await p.send(req(4, "skills/list"))).result.skills.map((s: { uri: string }) => s.uri)).toEqual([
      "skill://code-review/SKILL.md",
      "skill://code-lint/SKILL.md",
    ]);
    later.remove();
    expect((await p.send(req(5, "skills/list"))).result.skills.map((s: { uri: string }) => s.uri)).toEqual([
      "skill://code-review/SKILL.md",
    ]);
    // one change as it came, one as it went
    await poll(() => p.sent).toEqual([
      { jsonrpc: "2.0", method: "notifications/resources/list_changed" },
      { jsonrpc: "2.0", method: "notifications/resources/list_changed" },
    ]);
  });

  it("refuses a skill name taken in the parent, and a prefix that makes no skill name", () => {
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.skill("code-review", review);
    const child = new McpServer({ name: "kid", version: "1.0.0" });
    child.skill("review", review);
    expect(() => parent.mount("code", child)).toThrow(
      'Skill "code-review" of mount "code" (server "kid") collides with skill "code-review" of server "main": rename one, or mount under another prefix',
    );
    expect(() => parent.mount("Code", child)).toThrow(
      'Skill "review" of mount "Code" (server "kid") would be "Code-review", not a skill name (1-64 of a-z 0-9 and "-"): mount it under a lowercase prefix',
    );
    const other = new McpServer({ name: "other", version: "1.0.0" });
    parent.mount("code", other);
    expect(() => other.skill("review", review)).toThrow(
      'Skill "code-review" of mount "code" (server "other") collides with skill "code-review" of server "main": rename one, or mount under another prefix',
    );
    // refused before any of its files was added
    expect(other.knows("tool", "x")).toBe(false);
    const o = rawPeer(other);
    return o.initialize().then(async () => {
      expect(await o.send(req(1, "resources/list"))).toMatchObject({ error: { code: -32601 } });
    });
  });
});

describe("a mounted server's own mistakes", () => {
  it("are told as when it is not mounted", () => {
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    const child = weather();
    parent.mount("weather", child);
    expect(() => child.tool("forecast", { run: () => "" })).toThrow(
      'A tool named "forecast" is already registered',
    );
    expect(() => child.prompt("brief", { get: () => "" })).toThrow(
      'A prompt named "brief" is already registered',
    );
    expect(() => child.resource("weather://today", { read: () => "" })).toThrow(
      "A resource URI weather://today is already registered",
    );
    expect(() => child.resource("weather://cities/{town}", { read: () => "" })).toThrow(
      "The resource template weather://cities/{town} matches exactly the URIs of weather://cities/{city}, registered before",
    );
  });
});

describe("a mounted task tool", () => {
  it("runs as a task of the parent (its store, its tasks/get and tasks/result)", async () => {
    const child = new McpServer({ name: "jobs", version: "1.0.0" });
    child.tool("build", {
      task: "optional",
      run: async (_a, ctx) => {
        const task = await ctx.task();
        return `built as ${task?.taskId}`;
      },
    });
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.mount("ci", child);
    const p = rawPeer(parent);
    const init = await p.initialize();
    expect(init.result.capabilities.tasks).toEqual({ cancel: {}, requests: { tools: { call: {} } } });
    expect((await p.send(req(1, "tools/list"))).result.tools).toEqual([
      {
        name: "ci_build",
        inputSchema: { type: "object", properties: {} },
        execution: { taskSupport: "optional" },
      },
    ]);
    const created = (await p.send(req(2, "tools/call", { name: "ci_build", arguments: {}, task: {} })))
      .result;
    const { taskId } = created.task;
    expect((await p.send(req(3, "tasks/result", { taskId }))).result).toEqual({
      content: [{ type: "text", text: `built as ${taskId}` }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId } },
    });
    // and called without a task it answers at once
    expect((await p.send(req(4, "tools/call", { name: "ci_build", arguments: {} }))).result).toEqual({
      content: [{ type: "text", text: "built as undefined" }],
    });
  });
});

describe("a mounted task tool at 2026-07-28", () => {
  it("becomes a task of the parent once the child's handler asks for one", async () => {
    const child = new McpServer({ name: "jobs", version: "1.0.0" });
    child.tool("build", {
      task: "optional",
      run: async (_a, ctx) => {
        const task = await ctx.task();
        return `built as ${task?.taskId}`;
      },
    });
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.mount("ci", child);
    const p = modernPeer(parent);
    const WITH = { extensions: { "io.modelcontextprotocol/tasks": {} } };
    const created = (await p.request("tools/call", { name: "ci_build" }, WITH)).answer.result;
    expect(created).toMatchObject({ resultType: "task", status: "working" });
    const { taskId } = created;
    await poll(async () => (await p.request("tasks/get", { taskId }, WITH)).answer.result).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: `built as ${taskId}` }] },
    });
  });
});

describe("a 2026-07-28 listen on the parent", () => {
  it("carries the child's list changes and resource updates, tagged, exactly", async () => {
    const child = weather();
    const { parent } = parentOf(child);
    const stream: unknown[] = [];
    const abort = new AbortController();
    const conn = parent.connect({ send: () => {} });
    const notifications = {
      toolsListChanged: true,
      promptsListChanged: true,
      resourceSubscriptions: ["weather://today"],
    };
    const answer = parent.handle(
      { jsonrpc: "2.0", id: "L", method: "subscriptions/listen", params: { _meta: meta(), notifications } },
      conn,
      { send: (m) => void stream.push(JSON.parse(JSON.stringify(m))), signal: abort.signal },
    );
    const tag = { _meta: { "io.modelcontextprotocol/subscriptionId": "L" } };
    expect(stream).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { ...tag, notifications },
      },
    ]);
    child.resourceUpdated("weather://today");
    const later = child.prompt("outlook", { get: () => "later" });
    await poll(() => stream.length).toBe(3);
    later.remove();
    await poll(() => stream.slice(1)).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: "weather://today", ...tag },
      },
      { jsonrpc: "2.0", method: "notifications/prompts/list_changed", params: tag },
      { jsonrpc: "2.0", method: "notifications/prompts/list_changed", params: tag },
    ]);
    abort.abort();
    expect(await answer).toBeUndefined();
  });
});

describe("a mounted template's enumerated resources", () => {
  it("are listed by the parent, and the child's resourceListChanged() reaches the parent's clients", async () => {
    const child = new McpServer({ name: "files", version: "1.0.0" });
    const names = ["a.txt"];
    child.resource("file:///{name}", {
      list: () => names.map((n) => ({ uri: `file:///${n}`, name: n })),
      read: ({ name }) => `contents of ${name}`,
    });
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.mount("files", child);
    const p = rawPeer(parent);
    await p.initialize();
    expect((await p.send(req(1, "resources/list"))).result).toEqual({
      resources: [{ uri: "file:///a.txt", name: "a.txt" }],
    });
    names.push("b.txt");
    child.resourceListChanged();
    await poll(() => p.sent).toEqual([{ jsonrpc: "2.0", method: "notifications/resources/list_changed" }]);
    expect(
      (await p.send(req(2, "resources/list"))).result.resources.map((r: { uri: string }) => r.uri),
    ).toEqual(["file:///a.txt", "file:///b.txt"]);
  });
});

describe("a mounted tool's logging", () => {
  it("reaches the parent's session at the level it set", async () => {
    const child = new McpServer({ name: "talker", version: "1.0.0" });
    child.tool("talk", {
      run: (_a, ctx) => {
        ctx.log("debug", "not sent");
        ctx.log("warning", { disk: "low" }, "talker");
        return "said";
      },
    });
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.mount("t", child);
    const p = rawPeer(parent);
    await p.initialize();
    await p.send(req(1, "logging/setLevel", { level: "info" }));
    expect((await p.send(req(2, "tools/call", { name: "t_talk" }))).result).toEqual({
      content: [{ type: "text", text: "said" }],
    });
    expect(p.sent).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "warning", logger: "talker", data: { disk: "low" } },
      },
    ]);
  });
});

describe("one child in two parents", () => {
  it("is mirrored in both; a registration either parent cannot take is refused, naming that one", async () => {
    const child = new McpServer({ name: "shared", version: "1.0.0" });
    child.tool("lookup", { run: () => "found" });
    const a = new McpServer({ name: "alpha", version: "1.0.0" });
    const b = new McpServer({ name: "beta", version: "1.0.0" });
    a.mount("s", child);
    b.mount("shared", child);
    b.tool("shared_extra", { run: () => "b's own" });
    expect([a.knows("tool", "s_lookup"), b.knows("tool", "shared_lookup")]).toEqual([true, true]);
    expect(() => child.tool("extra", { run: () => "" })).toThrow(
      'Tool "shared_extra" of mount "shared" (server "shared") collides with tool "shared_extra" of server "beta": rename one, or mount under another prefix',
    );
    expect([a.knows("tool", "s_extra"), child.knows("tool", "extra")]).toEqual([false, false]);
    child.tool("more", { run: () => "more" });
    const pa = rawPeer(a);
    await pa.initialize();
    expect(await pa.send(req(1, "tools/call", { name: "s_more" }))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "more" }] },
    });
    expect(b.knows("tool", "shared_more")).toBe(true);
  });
});

describe("a parent without a built-in the child's primitives need", () => {
  it("refuses the mount, and a later registration of that kind, naming what to add", () => {
    const parent = new McpServer({
      name: "main",
      version: "1.0.0",
      extensions: defaultExtensions.filter((e) => e.id !== "picomcp/prompts"),
    });
    const child = new McpServer({ name: "kid", version: "1.0.0" });
    child.prompt("p", { get: () => "" });
    expect(() => parent.mount("k", child)).toThrow(
      'prompt "k_p" of mount "k" (server "kid"): this server has no picomcp/prompts; add it to new McpServer({ extensions }) (defaultExtensions has it)',
    );
    const other = new McpServer({ name: "other", version: "1.0.0" });
    parent.mount("o", other);
    expect(() => other.prompt("q", { get: () => "" })).toThrow(
      'prompt "o_q" of mount "o" (server "other"): this server has no picomcp/prompts',
    );
    other.tool("t", { run: () => "" });
    expect(parent.knows("tool", "o_t")).toBe(true);
  });
});

describe("a mounted MCP App", () => {
  it("keeps its tool linked to its page: the URI in the tool's _meta is one the parent serves", async () => {
    const child = new McpServer({ name: "charts", version: "1.0.0" });
    child.app("show", { ui: { uri: "ui://charts/bar.html", html: "<p>bar</p>" }, run: () => "shown" });
    const parent = new McpServer({ name: "main", version: "1.0.0" });
    parent.mount("charts", child);
    const p = rawPeer(parent);
    await p.initialize();
    const [tool] = (await p.send(req(1, "tools/list"))).result.tools;
    expect(tool.name).toBe("charts_show");
    const uri = tool._meta.ui.resourceUri;
    expect(uri).toBe("ui://charts/bar.html");
    expect((await p.send(req(2, "resources/read", { uri }))).result.contents).toMatchObject([
      { uri, mimeType: "text/html;profile=mcp-app", text: "<p>bar</p>" },
    ]);
  });
});
