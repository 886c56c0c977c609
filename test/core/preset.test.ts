// The built-in list as a value: a server made without some built-ins, with one replaced, with
// extensions that require others, and with several observers side by side; exact wire JSON.
import { context, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { type BuiltIn, defaultExtensions, type Extension, McpServer } from "../../src/index.js";
import { rawPeer } from "../helpers.js";
import { modernPeer } from "../modern-helpers.js";
import { telemetry } from "../otel-helpers.js";

const TASKS_ID = "io.modelcontextprotocol/tasks";
const without = (...ids: string[]) => defaultExtensions.filter((e) => !ids.includes(e.id));
const notFound = (id: number, method: string) => ({
  jsonrpc: "2.0",
  id,
  error: { code: -32601, message: `Method not found: ${method}` },
});

/** What a 2025-11-25 client is told at initialize, and what a 2026-07-28 `server/discover` answers. */
async function declared(server: McpServer) {
  const init = await rawPeer(server).initialize();
  const discover = await modernPeer(server).request("server/discover");
  return { init, discover: discover.answer };
}

function fullServer(extensions?: readonly (Extension | BuiltIn)[]) {
  const s = new McpServer({ name: "t", version: "1.0.0", ...(extensions ? { extensions } : {}) });
  s.tool("echo", { run: () => "hi" });
  s.prompt("p", { get: () => "p" });
  s.resource("test://r", { read: () => "r" });
  return s;
}

describe("the default preset", () => {
  it("new McpServer() and new McpServer({ extensions: defaultExtensions }) declare the same, in the same order", async () => {
    const a = await declared(fullServer());
    const b = await declared(fullServer(defaultExtensions));
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(a.init.result.capabilities).toEqual({
      logging: {},
      completions: {},
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      tools: { listChanged: true },
    });
    expect(defaultExtensions.map((e) => e.id)).toEqual([
      "picomcp/experimental",
      "picomcp/logging",
      "picomcp/completion",
      "picomcp/prompts",
      "picomcp/resources",
      "picomcp/subscriptions",
      "picomcp/tools",
      "picomcp/listen",
      "picomcp/discover",
      "io.modelcontextprotocol/tasks",
      "io.modelcontextprotocol/skills",
    ]);
  });

  it("is frozen: a list of one's own is made from it; what is not a list, an extension, or an option without its extension is refused", () => {
    expect(Object.isFrozen(defaultExtensions)).toBe(true);
    expect(() => new McpServer({ name: "t", version: "1", extensions: {} as never })).toThrow(
      "new McpServer({ extensions }): extensions must be an array (see defaultExtensions)",
    );
    const noTasks = without("io.modelcontextprotocol/tasks");
    expect(
      () => new McpServer({ name: "t", version: "1", tasks: { ttlMs: 10 }, extensions: noTasks }),
    ).toThrow(
      "new McpServer({ tasks }): it configures io.modelcontextprotocol/tasks, which extensions leaves out",
    );
    // subscriptionLimits configures listen and subscriptions: one of them is enough, neither is refused
    const limits = { maxResourceSubscriptions: 2 };
    const noChannels = without("picomcp/listen", "picomcp/subscriptions");
    expect(
      () => new McpServer({ name: "t", version: "1", subscriptionLimits: limits, extensions: noChannels }),
    ).toThrow(
      "new McpServer({ subscriptionLimits }): it configures picomcp/listen and picomcp/subscriptions, which extensions leaves out",
    );
    for (const id of ["picomcp/listen", "picomcp/subscriptions"])
      expect(
        () => new McpServer({ name: "t", version: "1", subscriptionLimits: limits, extensions: without(id) }),
      ).not.toThrow();
    expect(() => new McpServer({ name: "t", version: "1", extensions: [undefined as never] })).toThrow(
      "An extension needs an id string",
    );
  });
});

describe("a server without tasks", () => {
  it("answers tasks/* -32601 in both eras and declares no tasks capability; a tool with a task option is refused by name", async () => {
    const server = new McpServer({
      name: "t",
      version: "1.0.0",
      extensions: without("io.modelcontextprotocol/tasks"),
    });
    server.tool("echo", { run: () => "hi" });
    expect(() => server.tool("slow", { task: "optional", run: () => "later" })).toThrow(
      'server.tool("slow"): this server has no io.modelcontextprotocol/tasks; add it to new McpServer({ extensions }) (defaultExtensions has it)',
    );
    const peer = rawPeer(server);
    const init = await peer.initialize();
    expect(init.result.capabilities).toEqual({ logging: {}, tools: { listChanged: true } });
    expect(await peer.send({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId: "x" } })).toEqual(
      notFound(1, "tasks/get"),
    );
    expect(await peer.send({ jsonrpc: "2.0", id: 2, method: "tasks/list" })).toEqual(
      notFound(2, "tasks/list"),
    );
    const modern = modernPeer(server);
    const tasks = { extensions: { "io.modelcontextprotocol/tasks": {} } };
    const got = await modern.request("tasks/get", { taskId: "x" }, tasks);
    expect(got.answer).toEqual(notFound(1, "tasks/get"));
    const discover = await modern.request("server/discover");
    expect(discover.answer.result.capabilities).toEqual({ logging: {}, tools: { listChanged: true } });
    // the default server declares tasks for the same registrations
    const full = new McpServer({ name: "t", version: "1.0.0" });
    full.tool("slow", { task: "optional", run: () => "later" });
    expect((await rawPeer(full).initialize()).result.capabilities.tasks).toBeDefined();
  });
});

describe("a server without logging", () => {
  it("answers logging/setLevel -32601, declares no logging, and sends no log message in either era", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0", extensions: without("picomcp/logging") });
    server.tool("chatty", {
      run: (_a, ctx) => {
        ctx.log("error", "something");
        return "done";
      },
    });
    const peer = rawPeer(server);
    expect((await peer.initialize()).result.capabilities).toEqual({ tools: { listChanged: true } });
    expect(
      await peer.send({ jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "debug" } }),
    ).toEqual(notFound(1, "logging/setLevel"));
    const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "chatty" } };
    expect(await peer.send(call)).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { content: [{ type: "text", text: "done" }] },
    });
    expect(peer.sent).toEqual([]);
    const modern = modernPeer(server);
    const level = { "io.modelcontextprotocol/logLevel": "debug" };
    const got = await modern.request("tools/call", { name: "chatty" }, {}, level);
    expect(got.stream).toEqual([]);
    expect(got.answer.result.content).toEqual([{ type: "text", text: "done" }]);
  });

  it("the default server sends the same log message (the test above can fail)", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.tool("chatty", {
      run: (_a, ctx) => {
        ctx.log("error", "something");
        return "done";
      },
    });
    const peer = rawPeer(server);
    await peer.initialize();
    await peer.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "chatty" } });
    expect(peer.sent).toEqual([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "error", data: "something" } },
    ]);
  });
});

describe("a server without listen or subscriptions", () => {
  it("declares no change channel that nothing delivers: no listChanged to 2026-07-28, no subscribe without subscriptions", async () => {
    const noListen = await declared(fullServer(without("picomcp/listen")));
    expect(noListen.init.result.capabilities.resources).toEqual({ subscribe: true, listChanged: true });
    expect(noListen.discover.result.capabilities).toEqual({
      logging: {},
      completions: {},
      prompts: {},
      resources: {},
      tools: {},
    });
    const noSubscribe = await declared(fullServer(without("picomcp/subscriptions")));
    expect(noSubscribe.init.result.capabilities.resources).toEqual({ listChanged: true });
    expect(noSubscribe.discover.result.capabilities.resources).toEqual({
      subscribe: true,
      listChanged: true,
    });
    const peer = rawPeer(fullServer(without("picomcp/subscriptions")));
    await peer.initialize();
    const sub = { jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "test://r" } };
    expect(await peer.send(sub)).toEqual(notFound(1, "resources/subscribe"));
  });
});

describe("a replaced built-in", () => {
  const ownTools: Extension = {
    id: "picomcp/tools",
    capabilities: () => ({ tools: {} }),
    methods: {
      "tools/list": { run: () => ({ tools: [{ name: "own", inputSchema: { type: "object" } }] }) },
      "tools/call": { run: (p) => ({ content: [{ type: "text", text: `own ${String(p.name)}` }] }) },
    },
  };

  it("serves in the built-in's place, in its order; tasks' requirement is met by its id; server.tool() says it registers with the built-in", async () => {
    const server = new McpServer({
      name: "t",
      version: "1.0.0",
      extensions: defaultExtensions.map((e) => (e.id === "picomcp/tools" ? ownTools : e)),
    });
    const peer = rawPeer(server);
    const init = await peer.initialize();
    expect(JSON.stringify(init.result.capabilities)).toBe('{"logging":{},"tools":{}}');
    expect(await peer.send({ jsonrpc: "2.0", id: 1, method: "tools/list" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { tools: [{ name: "own", inputSchema: { type: "object" } }] },
    });
    expect(
      await peer.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x", arguments: {} } }),
    ).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "own x" }] } });
    expect(() => server.tool("echo", { run: () => "hi" })).toThrow(
      'server.tool("echo"): needs the built-in picomcp/tools, and this server\'s picomcp/tools is one of its own',
    );
  });

  it("a built-in is not an extension: server.use refuses it, or a copy of it, by name; so does a copied list", () => {
    const tools = defaultExtensions.find((b) => b.id === "picomcp/tools")!;
    const server = new McpServer({
      name: "t",
      version: "1.0.0",
      extensions: without("picomcp/tools", TASKS_ID),
    });
    // @ts-expect-error: a BuiltIn does not fit Extension
    const asExtension: Extension = tools;
    expect(() => server.use(asExtension)).toThrow(
      "picomcp/tools is a built-in: list it in new McpServer({ extensions })",
    );
    expect(() => server.use({ ...tools } as Extension)).toThrow(
      "picomcp/tools is a built-in: list it in new McpServer({ extensions }) (defaultExtensions' own entry, not a copy)",
    );
    expect(
      () =>
        new McpServer({ name: "t", version: "1.0.0", extensions: defaultExtensions.map((b) => ({ ...b })) }),
    ).toThrow("picomcp/experimental is a built-in");
    // nothing was installed under its id: the registration still tells what is missing
    expect(() => server.tool("a", { run: () => "a" })).toThrow("this server has no picomcp/tools");
    // an application's extension with only an id of its own is still one
    expect(() => server.use({ id: "com.example/marker" })).not.toThrow();
  });

  it("a registration's message tells the extensions added now, server.use included", () => {
    const server = new McpServer({
      name: "t",
      version: "1.0.0",
      extensions: without("picomcp/tools", TASKS_ID),
    });
    expect(() => server.tool("a", { run: () => "a" })).toThrow("this server has no picomcp/tools");
    server.use({ id: "picomcp/tools", methods: { "tools/list": { run: () => ({ tools: [] }) } } });
    expect(() => server.tool("a", { run: () => "a" })).toThrow(
      'server.tool("a"): needs the built-in picomcp/tools, and this server\'s picomcp/tools is one of its own',
    );
  });

  it("a registration whose built-in was left out names what to add", () => {
    const bare = new McpServer({ name: "t", version: "1.0.0", extensions: [] });
    expect(() => bare.tool("a", { run: () => "a" })).toThrow(
      'server.tool("a"): this server has no picomcp/tools; add it to new McpServer({ extensions }) (defaultExtensions has it)',
    );
    expect(() => bare.resource("test://r", { read: () => "r" })).toThrow(
      "this server has no picomcp/resources",
    );
    expect(() => bare.prompt("p", { get: () => "p" })).toThrow("this server has no picomcp/prompts");
    expect(() => bare.skill("s", { description: "d", instructions: "i" })).toThrow(
      'server.skill("s"): this server has no io.modelcontextprotocol/skills',
    );
    expect(() => bare.resourcesAsTools()).toThrow(
      "server.resourcesAsTools(): this server has no picomcp/tools",
    );
  });

  it("a server of no extensions answers only what the core does", async () => {
    const peer = rawPeer(new McpServer({ name: "t", version: "1.0.0", extensions: [] }));
    expect((await peer.initialize()).result.capabilities).toEqual({});
    expect(await peer.send({ jsonrpc: "2.0", id: 1, method: "ping" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {},
    });
    expect(await peer.send({ jsonrpc: "2.0", id: 2, method: "tools/list" })).toEqual(
      notFound(2, "tools/list"),
    );
  });
});

describe("requires", () => {
  it("refuses a list whose extension requires an id it lacks, by name", () => {
    expect(
      () => new McpServer({ name: "t", version: "1.0.0", extensions: without("picomcp/tools") }),
    ).toThrow("io.modelcontextprotocol/tasks requires picomcp/tools, which this server does not have");
    expect(
      () => new McpServer({ name: "t", version: "1.0.0", extensions: without("picomcp/resources") }),
    ).toThrow("picomcp/subscriptions requires picomcp/resources, which this server does not have");
  });

  it("use() refuses a missing requirement, and removing a required extension is refused until its dependents go", () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    expect(() => server.use({ id: "com.example/audit", requires: ["com.example/store"] })).toThrow(
      "com.example/audit requires com.example/store, which this server does not have",
    );
    expect(() => server.use({ id: "com.example/bad", requires: "x" as never })).toThrow(
      "com.example/bad: requires must be an array of extension ids",
    );
    const store = server.use({ id: "com.example/store" });
    const audit = server.use({ id: "com.example/audit", requires: ["com.example/store", "picomcp/tools"] });
    expect(() => store.remove()).toThrow(
      "Cannot remove com.example/store: com.example/audit requires it (remove that first)",
    );
    audit.remove();
    store.remove();
    // gone: adding the dependent alone is refused again
    expect(() => server.use({ id: "com.example/audit", requires: ["com.example/store"] })).toThrow(
      "which this server does not have",
    );
  });

  it("an order within the list does not matter: what is required may come later", () => {
    const server = new McpServer({
      name: "t",
      version: "1.0.0",
      extensions: [{ id: "com.example/audit", requires: ["com.example/store"] }, { id: "com.example/store" }],
    });
    expect(server.info.name).toBe("t");
  });
});

describe("observers as a list", () => {
  it("telemetry and an audit log side by side both see a tools/call: runs nested (telemetry outermost), sends and ends composed", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.tool("echo", {
      run: (_a, ctx) => {
        ctx.log("info", "working");
        return "hi";
      },
    });
    const t = telemetry(server);
    const audit: unknown[] = [];
    server.use({
      id: "com.example/audit",
      observer: {
        message: (start) => ({
          run: (run) => {
            // inside telemetry's run: its span is the active one
            const span = trace.getSpan(context.active());
            audit.push(["run", start.method, span ? "in span" : "no span"]);
            return run();
          },
          send: (send) => (m) => {
            audit.push(["send", (m as { method?: string }).method]);
            send(m);
          },
          end: (answer) => {
            audit.push(["end", start.method, answer?.id]);
            return answer;
          },
        }),
        connect: (options) => {
          audit.push(["connect"]);
          return options;
        },
      },
    });
    const peer = rawPeer(server);
    await peer.initialize();
    const answer = await peer.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo" } });
    expect(answer).toEqual({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "hi" }] } });
    expect(audit).toEqual([
      ["connect"],
      ["run", "initialize", "in span"],
      ["end", "initialize", 0],
      ["run", "notifications/initialized", "in span"],
      ["end", "notifications/initialized", undefined],
      ["run", "tools/call", "in span"],
      ["send", "notifications/message"],
      ["end", "tools/call", 7],
    ]);
    // telemetry saw every message too, and the log message went out through its send (its span's context in _meta)
    expect(t.spans().map((s) => s.name)).toEqual(
      expect.arrayContaining([
        "initialize",
        "notifications/initialized",
        "tools/call echo",
        "notifications/message",
      ]),
    );
    expect(peer.sent).toHaveLength(1);
    expect(peer.sent[0].params._meta.traceparent).toMatch(/^00-/);
    // removing one leaves the other
    t.registration.remove();
    audit.length = 0;
    await peer.send({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "echo" } });
    expect(audit).toEqual([
      ["run", "tools/call", "no span"],
      ["send", "notifications/message"],
      ["end", "tools/call", 8],
    ]);
  });

  it("each observer's end runs inside its own run, after the ones within it", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.tool("echo", { run: async () => "hi" });
    const log: string[] = [];
    let open = 0; // how many observers' runs are open
    const observer = (name: string): Extension => ({
      id: `com.example/${name}`,
      observer: {
        message: () => ({
          run: (run) => {
            open++;
            try {
              return run();
            } finally {
              open--;
            }
          },
          end: (answer) => {
            log.push(`${name} end within ${open}`);
            return answer;
          },
        }),
      },
    });
    server.use(observer("a"));
    server.use(observer("b"));
    server.use(observer("c"));
    const peer = rawPeer(server);
    await peer.send({ jsonrpc: "2.0", id: 1, method: "ping" });
    expect(log).toEqual(["c end within 3", "b end within 2", "a end within 1"]);
    log.length = 0;
    // an asynchronous answer: the same order, each after the ones within it
    await peer.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo" } });
    expect(log.map((l) => l.slice(0, 5))).toEqual(["c end", "b end", "a end"]);
  });

  it("with none, the core has no observer to call", () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    expect(server.observer).toBeUndefined();
    const reg = server.use({ id: "com.example/one", observer: { refused: () => {} } });
    expect(server.observer).toBeDefined();
    reg.remove();
    expect(server.observer).toBeUndefined();
  });
});
