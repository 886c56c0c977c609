// What a newcomer meets first: the errors of registration, most of them for shapes brought from the
// official SDK v1, with the change to make; and the one rule for what a thrown error gives the client
// and the server's log (docs/errors.md).
import { ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { type ErrorInfo, McpError, McpServer } from "../../src/index.js";
import { connect } from "../../src/testing.js";

const server = () => new McpServer({ name: "t", version: "1" });
/** Registers through plain JavaScript: these calls do not type-check, as they should not. */
const loose = (s: McpServer) => s as any;

describe("registration errors for SDK v1 shapes", () => {
  const form = "server.tool(name, { description, input: z.object({ … }), run: handler })";

  it("a raw shape as input: wrap it in z.object", () => {
    expect(() => loose(server()).tool("search", { input: { query: z.string() }, run: () => "" })).toThrow(
      new TypeError(
        "Invalid input schema: a plain object of schemas, such as SDK v1's raw shape { query: z.string() }, is not a schema: wrap it in z.object({ … }) (valibot: v.object, arktype: type({ … }))",
      ),
    );
  });

  it("a raw shape as a prompt's args: the same fix", () => {
    expect(() => loose(server()).prompt("review", { args: { code: z.string() }, get: () => "" })).toThrow(
      'Prompt "review": args must be a Standard Schema object or a list of arguments: a plain object of schemas, such as SDK v1\'s raw shape',
    );
  });

  it("a union of objects at the root: one object, or the union under a field", () => {
    const union = z.union([z.object({ isbn: z.string() }), z.object({ title: z.string() })]);
    expect(() => server().tool("find", { input: union as any, run: () => "" })).toThrow(
      new TypeError(
        'The input schema (zod) must describe an object (tool and prompt arguments are always a JSON object), but its JSON Schema root has "type": none. ' +
          'Its root is a union ("anyOf", as z.union and z.discriminatedUnion give): use one object whose fields cover the alternatives (optional where they differ), or put the union under a field, z.object({ item: z.union([…]) })',
      ),
    );
    const tagged = z.discriminatedUnion("by", [
      z.object({ by: z.literal("isbn"), isbn: z.string() }),
      z.object({ by: z.literal("title"), title: z.string() }),
    ]);
    expect(() => server().tool("find", { input: tagged as any, run: () => "" })).toThrow(
      '("oneOf", as z.union',
    );
  });

  it("the positional tool() calls of SDK v1, in plain JavaScript", () => {
    const handler = async () => ({ content: [] });
    expect(() =>
      loose(server()).tool("search", "Search the catalog", { query: z.string() }, handler),
    ).toThrow(
      new TypeError(
        `Tool "search" needs a run function: the second argument is the options object, not a description (SDK v1's tool(name, description, shape, handler) is ${form})`,
      ),
    );
    expect(() => loose(server()).tool("search", { query: z.string() }, handler)).toThrow(
      new TypeError(
        `Tool "search" needs a run function: the second argument is the options object, not a raw shape (SDK v1's tool(name, shape, handler) is ${form})`,
      ),
    );
    expect(() => loose(server()).tool("ping", handler)).toThrow(
      new TypeError(
        `Tool "ping" needs a run function: the handler goes under run (SDK v1's tool(name, handler) is server.tool(name, { run: handler }))`,
      ),
    );
    expect(() => loose(server()).tool("search", { inputSchema: { query: z.string() } }, handler)).toThrow(
      new TypeError(
        `Tool "search" needs a run function: inputSchema is SDK v1's name (registerTool's config); here it is input, wrapped in z.object, and the handler is run: ${form}`,
      ),
    );
    // nothing of it is registered
    const s = server();
    expect(() => loose(s).tool("search", "Search", {}, handler)).toThrow();
    expect(() => s.tool("search", { run: () => "ok" })).not.toThrow();
  });
});

describe("SDK v1's resource shapes and register* methods, in plain JavaScript", () => {
  const read = async () => ({ contents: [] });

  it("resource(name, uri, [metadata,] read): the URI first, everything else in the options", () => {
    const fix =
      'is SDK v1\'s: the URI comes first and everything else goes in one options object, server.resource("config://app", { name: "config", …metadata, read }), whose read returns the text, the bytes or a value for JSON';
    expect(() => loose(server()).resource("config", "config://app", read)).toThrow(
      new TypeError(`server.resource("config", …, read) ${fix}`),
    );
    expect(() =>
      loose(server()).resource("config", "config://app", { mimeType: "text/plain" }, read),
    ).toThrow(new TypeError(`server.resource("config", …, read) ${fix}`));
  });

  it("resource(name, new ResourceTemplate(…), read): the template's string first", () => {
    const template = new ResourceTemplate("users://{id}", { list: undefined });
    expect(() => loose(server()).resource("user", template, read)).toThrow(
      new TypeError(
        'server.resource("user", new ResourceTemplate(…), read) is SDK v1\'s: the URI comes first and everything else goes in one options object, server.resource("users://{id}", { name: "user", …metadata, read }), whose read returns the text, the bytes or a value for JSON',
      ),
    );
  });

  it("resource(uri, read): the function goes under read", () => {
    expect(() => loose(server()).resource("config://app", read)).toThrow(
      new TypeError(
        'Resource config://app: the read function goes under read, server.resource("config://app", { read }) (SDK v1\'s resource(uri, read))',
      ),
    );
  });

  it("SDK v1's read callback, (uri, { id }): the variables come first here", () => {
    expect(() =>
      loose(server()).resource("books://{id}/{lang}", {
        read: async (uri: URL, { id, lang }: any) => [uri, id, lang],
      }),
    ).toThrow(
      new TypeError(
        "Resource books://{id}/{lang}: read takes the URI's variables first and the context second (SDK v1's callback took (uri, variables)): write read: ({ id, lang }, ctx) => …, with ctx.uri for the URI read",
      ),
    );
    // the context destructured in the second place is picomcp's own shape
    expect(() =>
      server().resource("docs://{+path}", {
        read: (_params, { uri, signal }) => fetch(uri, { signal }).then((r) => r.text()),
      }),
    ).not.toThrow();
    expect(() => server().resource("docs://static", { read: (_p, { uri }) => uri })).not.toThrow();
    // a variable named as a key of the context, taken from the context: every key of it counts
    expect(() =>
      server().resource("ip://{clientAddress}", { read: (_p, { clientAddress }) => String(clientAddress) }),
    ).not.toThrow();
    expect(() =>
      loose(server()).resource("state://{sessionState}", {
        read: (_p: unknown, { sessionState }: any) => sessionState,
      }),
    ).not.toThrow();
  });

  it("registerResource, registerTool, registerPrompt: what to write here", () => {
    const s = loose(server());
    expect(() => s.registerResource("config", "config://app", { mimeType: "text/plain" }, read)).toThrow(
      new TypeError(
        'server.registerResource(…) is SDK v1\'s; here it is server.resource("config://app", { name: "config", …metadata, read }) (see the migration guide, docs/migrate.md)',
      ),
    );
    expect(() => s.registerTool("search", { inputSchema: {} }, read)).toThrow(
      new TypeError(
        'server.registerTool(…) is SDK v1\'s; here it is server.tool("search", { title, description, input: z.object(inputSchema), output, annotations, run }) (see the migration guide, docs/migrate.md)',
      ),
    );
    expect(() => s.registerPrompt("review", { argsSchema: {} }, read)).toThrow(
      new TypeError(
        'server.registerPrompt(…) is SDK v1\'s; here it is server.prompt("review", { title, description, args: z.object(argsSchema), get }) (see the migration guide, docs/migrate.md)',
      ),
    );
  });
});

describe("a read or get that does not fit its template or args", () => {
  it("the Python page's example: users://{user_id}/profile read as ({ user })", () => {
    expect(() =>
      loose(server()).resource("users://{user_id}/profile", { read: ({ user }: any) => `User ${user}` }),
    ).toThrow(
      new TypeError(
        "Mismatch between URI parameters {user_id} and read parameters {user} of resource users://{user_id}/profile: user is not a variable of the template, so read would get undefined. Rename it in read to a variable of the URI (user_id), or rename the variable in the URI",
      ),
    );
  });

  it("names every missing one, sees renamed keys, defaults and rest; a static URI has none", () => {
    expect(() =>
      loose(server()).resource("github://{owner}/{repo}/readme{?ref}", {
        read: async ({ owner: o, repository, ref = "HEAD", branch }: any) => [o, repository, ref, branch],
      }),
    ).toThrow(
      new TypeError(
        "Mismatch between URI parameters {owner, repo, ref} and read parameters {owner, repository, ref, branch} of resource github://{owner}/{repo}/readme{?ref}: repository, branch are not variables of the template, so read would get undefined. Rename them in read to variables of the URI (owner, repo, ref), or rename the variables in the URI",
      ),
    );
    expect(() => loose(server()).resource("config://app", { read: ({ id }: any) => id })).toThrow(
      new TypeError(
        "Mismatch between URI parameters {} and read parameters {id} of resource config://app: a URI without {variables} gives read no parameters, so id would always be undefined. Write read: () => … (the context is the second argument), or put {id} in the URI to make it a template",
      ),
    );
    // what fits, and what cannot be seen, registers
    const s = server();
    s.resource("a://{x}/{y}", { read: ({ x, ...rest }) => [x, rest].join() });
    s.resource("b://{x}", { read: ({ x: renamed = "?" }) => renamed });
    s.resource("c://{x}", { read: (params) => params.x });
    s.resource("d://{x}", { read: ((p: { x: string }) => p.x).bind(null) });
    s.resource("e://static", { read: (_params, ctx) => ctx.uri });
    // nothing of a refused one is registered
    expect(() => loose(s).resource("f://{x}", { read: ({ y }: any) => y })).toThrow(TypeError);
    expect(() => s.resource("f://{x}", { read: ({ x }) => x })).not.toThrow();
  });

  it("a key with a default may be missing: one read shared by two templates, a prompt's optional key", async () => {
    const s = server();
    const read = ({ id, version = "latest" }: { id: string; version?: string }) => `${id}@${version}`;
    s.resource("docs://{id}", { read });
    s.resource("docs://{id}/v/{version}", { read });
    s.prompt("write", {
      args: z.object({ topic: z.string() }),
      get: ({ topic, tone = "neutral" }: any) => `${topic} ${tone}`,
    });
    s.prompt("plain", {
      args: [{ name: "topic" }],
      get: ({ topic, tone = "neutral" }: any) => `${topic} ${tone}`,
    });
    const c = await connect(s);
    expect((await c.readResource("docs://a")).contents).toEqual([
      { uri: "docs://a", mimeType: "text/plain", text: "a@latest" },
    ]);
    expect((await c.readResource("docs://a/v/2")).contents[0]).toMatchObject({ text: "a@2" });
    expect((await c.getPrompt("write", { topic: "x" })).messages).toEqual([
      { role: "user", content: { type: "text", text: "x neutral" } },
    ]);
    // a key without a default is still checked, beside one with
    expect(() =>
      loose(server()).resource("docs://{id}", { read: ({ ids, version = "1" }: any) => ids + version }),
    ).toThrow(
      "Mismatch between URI parameters {id} and read parameters {ids, version} of resource docs://{id}: ids is not a variable",
    );
  });

  it("a prompt's get against its args, as a list or a schema", () => {
    expect(() =>
      loose(server()).prompt("review", {
        args: [{ name: "code", required: true }],
        get: ({ text }: any) => text,
      }),
    ).toThrow(
      new TypeError(
        'Mismatch between prompt arguments {code} and get parameters {text} of prompt "review": text is not in args, so get would get undefined. Rename it in get to an argument (code), or add it to args',
      ),
    );
    expect(() =>
      loose(server()).prompt("review", {
        args: z.object({ title: z.string() }),
        get: ({ title, tone }: any) => title + tone,
      }),
    ).toThrow(
      'Mismatch between prompt arguments {title} and get parameters {title, tone} of prompt "review"',
    );
    expect(() => loose(server()).prompt("hello", { get: ({ who }: any) => who })).toThrow(
      'Mismatch between prompt arguments {} and get parameters {who} of prompt "hello": who is not in args, so get would get undefined. Rename it in get to an argument, or add it to args',
    );
    expect(() =>
      server().prompt("review", { args: z.object({ title: z.string() }), get: ({ title }) => title }),
    ).not.toThrow();
    // a schema that takes keys it does not name leaves get free to read them
    const open = z.object({ title: z.string() }).catchall(z.string());
    expect(() =>
      loose(server()).prompt("review", { args: open, get: ({ title, tone }: any) => title + tone }),
    ).not.toThrow();
  });

  it("get is checked against what the schema passes it: loose objects and transforms register", async () => {
    const s = server();
    const topic = { topic: z.string() };
    const get = ({ topic, tone }: any) => `${topic} ${tone}`;
    s.prompt("loose", { args: z.looseObject(topic), get });
    s.prompt("passthrough", { args: z.object(topic).passthrough(), get });
    s.prompt("catchall", { args: z.object(topic).catchall(z.unknown()), get });
    const renamed = z.object({ user_id: z.string() }).transform((a) => ({ user: a.user_id }));
    s.prompt("transform", { args: renamed, get: ({ user }: any) => `user ${user}` });
    const c = await connect(s);
    const text = async (name: string, args: { [k: string]: string }) =>
      ((await c.getPrompt(name, args)).messages[0]!.content as { text: string }).text;
    for (const name of ["loose", "passthrough", "catchall"])
      expect(await text(name, { topic: "owls", tone: "dry" }), name).toBe("owls dry");
    expect(await text("transform", { user_id: "7" })).toBe("user 7");
    // a closed object is still checked
    expect(() => loose(server()).prompt("strict", { args: z.strictObject(topic), get })).toThrow(
      'Mismatch between prompt arguments {topic} and get parameters {topic, tone} of prompt "strict"',
    );
  });
});

describe("resource URIs and templates", () => {
  it("refuses a string that is not a URI: no scheme, or whitespace", () => {
    for (const uri of ["just some text", "books/{id}", "{scheme}://x", "books://a b", "café://x"])
      expect(() => server().resource(uri, { read: () => "" }), uri).toThrow(
        new TypeError(
          `${JSON.stringify(uri)} is not a URI: a resource URI starts with a scheme (books://…, file:///…, urn:…) and holds no whitespace (percent-encode a space as %20)`,
        ),
      );
    for (const uri of [
      "mailto:shop@example.com",
      "urn:isbn:0451450523",
      "file:///books/a%20b.txt",
      "a+b.c-d:x",
    ])
      expect(() => server().resource(uri, { read: () => "" }), uri).not.toThrow();
  });

  it("refuses a template that matches exactly the URIs of an earlier one, until that one is removed", async () => {
    const s = server();
    const first = s.resource("books://{id}", { read: ({ id }) => `book ${id}` });
    expect(() => s.resource("books://{bookId}", { read: ({ bookId }) => `other ${bookId}` })).toThrow(
      new Error(
        "The resource template books://{bookId} matches exactly the URIs of books://{id}, registered before, so it could never be read: remove one, or give one a literal of its own (books://{id} beside books://{id}/reviews)",
      ),
    );
    // query variables are optional and other keys let through: {?lang} matches what {?q} does
    s.resource("search://{?q}", { read: ({ q }) => `q=${q}` });
    expect(() => s.resource("search://{?lang}", { read: () => "" })).toThrow(
      "The resource template search://{?lang} matches exactly the URIs of search://{?q}",
    );
    // templates that only overlap are served by precedence (docs/resources.md)
    s.resource("books://{id}/reviews{?lang}", { read: ({ id }) => `reviews of ${id}` });
    s.resource("cal://x{;year,month}", { read: () => "year and month" });
    s.resource("cal://x{;day}", { read: () => "day" });
    s.resource("files://{+path}", { read: ({ path }) => `file ${path}` });
    s.resource("files://docs/{name}", { read: ({ name }) => `doc ${name}` });
    const client = await connect(s);
    const text = async (uri: string) =>
      ((await client.readResource(uri)).contents[0] as { text: string }).text;
    expect(await text("books://12345")).toBe("book 12345");
    expect(await text("books://7/reviews")).toBe("reviews of 7");
    expect(await text("search://?lang=fr&q=owls")).toBe("q=owls");
    expect(await text("cal://x;day=3")).toBe("day");
    expect([await text("files://docs/a.md"), await text("files://src/a.ts")]).toEqual([
      "doc a.md",
      "file src/a.ts",
    ]);
    first.remove();
    s.resource("books://{bookId}", { read: ({ bookId }) => `other ${bookId}` });
    expect(await text("books://12345")).toBe("other 12345");
  });
});

describe("a thrown error: one rule for tools, reads and prompts", () => {
  function throwing() {
    const logged: [unknown, ErrorInfo][] = [];
    const s = new McpServer({ name: "t", version: "1", onError: (e, info) => void logged.push([e, info]) });
    const boom = new Error("the database is down");
    s.tool("fails", { run: () => Promise.reject(boom) });
    s.tool("throws_text", {
      run: () => {
        throw "not an Error";
      },
    });
    s.tool("declines", {
      run: () => ({ content: [{ type: "text" as const, text: "Out of stock" }], isError: true }),
    });
    s.tool("refuses", {
      run: () => {
        throw new McpError(-32602, "Unknown ISBN", { isbn: "x" });
      },
    });
    s.resource("books://{id}", {
      read: ({ id }) => {
        if (id === "gone") throw new McpError(-32002, "Resource not found: books://gone");
        throw boom;
      },
    });
    s.prompt("review", {
      get: () => {
        throw boom;
      },
    });
    return { s, logged, boom };
  }

  it("a tool: isError with the message for the model, and the error to onError", async () => {
    const { s, logged, boom } = throwing();
    const client = await connect(s);
    expect(await client.callTool("fails")).toEqual({
      content: [{ type: "text", text: "the database is down" }],
      isError: true,
    });
    expect(await client.callTool("throws_text")).toEqual({
      content: [{ type: "text", text: "not an Error" }],
      isError: true,
    });
    // a failure returned, not thrown, is the model's alone
    expect(await client.callTool("declines")).toEqual({
      content: [{ type: "text", text: "Out of stock" }],
      isError: true,
    });
    expect(logged).toEqual([
      [boom, { method: "tools/call", requestId: expect.anything(), name: "fails" }],
      ["not an Error", { method: "tools/call", requestId: expect.anything(), name: "throws_text" }],
    ]);
  });

  it("a read and a prompt: -32603 with nothing of the error on the wire, and the error to onError", async () => {
    const { s, logged, boom } = throwing();
    const client = await connect(s);
    await expect(client.readResource("books://1")).rejects.toEqual(new McpError(-32603, "Internal error"));
    await expect(client.getPrompt("review")).rejects.toEqual(new McpError(-32603, "Internal error"));
    expect(logged).toEqual([
      [boom, { method: "resources/read", requestId: expect.anything(), uri: "books://1" }],
      [boom, { method: "prompts/get", requestId: expect.anything(), name: "review" }],
    ]);
  });

  it("the default onError names the URI read, the tool or the prompt", async () => {
    const s = server();
    const boom = new Error("boom");
    s.resource("books://{id}", {
      read: () => {
        throw boom;
      },
    });
    s.tool("fails", {
      run: () => {
        throw boom;
      },
    });
    const lines: unknown[][] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args) => void lines.push(args));
    try {
      const client = await connect(s);
      await expect(client.readResource("books://7")).rejects.toEqual(new McpError(-32603, "Internal error"));
      await client.callTool("fails");
    } finally {
      spy.mockRestore();
    }
    expect(lines).toEqual([
      ["picomcp: resources/read books://7 failed:", boom],
      ["picomcp: tools/call fails failed:", boom],
    ]);
  });

  it("an McpError anywhere: sent as given, and not logged", async () => {
    const { s, logged } = throwing();
    const client = await connect(s);
    await expect(client.callTool("refuses")).rejects.toEqual(
      new McpError(-32602, "Unknown ISBN", { isbn: "x" }),
    );
    await expect(client.readResource("books://gone")).rejects.toMatchObject({ code: -32002 });
    expect(logged).toEqual([]);
  });
});
