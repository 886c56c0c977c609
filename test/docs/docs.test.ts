import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { UriParams } from "picomcp";
import { connect } from "picomcp/testing";
import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import { handle as authHandle, server as authServer } from "../../examples/docs/auth-jwt.js";
import { server as context } from "../../examples/docs/context-utilities.js";
import { server as prompts } from "../../examples/docs/prompts-review.js";
import { server as resConfig } from "../../examples/docs/resources-config.js";
import { server as resContext } from "../../examples/docs/resources-context.js";
import { server as resGithub } from "../../examples/docs/resources-github.js";
import { red, server as resLevel4 } from "../../examples/docs/resources-level4.js";
import { server as resLink } from "../../examples/docs/resources-link.js";
import { server as resReturns } from "../../examples/docs/resources-returns.js";
import { server as resTemplates } from "../../examples/docs/resources-templates.js";
import { server as resUsers } from "../../examples/docs/resources-users.js";
import { server as output } from "../../examples/docs/tools-output.js";
import { server as search } from "../../examples/docs/tools-search.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("docs", () => {
  const pages = [
    "README.md",
    ...readdirSync(`${root}docs`)
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
  ];
  for (const page of pages) {
    const text = readFileSync(`${root}${page}`, "utf8");
    const blocks = [...text.matchAll(/```ts file=(\S+)\n([\s\S]*?)```/g)];
    for (const [, file, code] of blocks) {
      it(`${page}: the example ${file} is the file the tests run`, () => {
        expect(code).toBe(readFileSync(`${root}${file}`, "utf8"));
      });
    }
  }
});

describe("request-state keys in the docs and the examples", () => {
  const files = (dir: string): string[] =>
    readdirSync(`${root}${dir}`, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(`${dir}/${e.name}`) : /\.(md|ts|js)$/.test(e.name) ? [`${dir}/${e.name}`] : [],
    );
  const sources = ["README.md", ...files("docs"), ...files("examples")];

  it("are never written in the code, nor fall back to a string that is: anyone could forge a state with it", () => {
    const published: string[] = [];
    for (const file of sources) {
      const text = readFileSync(`${root}${file}`, "utf8");
      for (const [, list] of text.matchAll(/requestState:\s*\{[^}]*?keys:\s*\[([^\]]*)\]/g)) {
        for (const item of list!.split(",").map((k) => k.trim())) {
          // a key is read from the environment (or a secret store), directly or through a variable
          const declared = new RegExp(`(?:const|let|var)\\s+${item}\\s*=\\s*([^;\\n]*)`).exec(text)?.[1];
          const source = /^[A-Za-z_$][\w$]*$/.test(item) ? (declared ?? "") : item;
          if (/["'`]/.test(source)) published.push(`${file}: ${item} = ${source}`);
        }
      }
    }
    expect(published).toEqual([]);
  });
});

describe("docs/testing.md example", () => {
  it("runs its assertions", async () => {
    await expect(import("../../examples/docs/testing-unit.js")).resolves.toBeDefined();
  });
});

describe("docs/tools.md examples", () => {
  it("search_books validates, defaults and answers", async () => {
    const client = await connect(search);
    expect(await client.callTool("search_books", { query: "dis" })).toEqual({
      content: [{ type: "text", text: "The Dispossessed" }],
    });
    const bad = await client.callTool("search_books", { query: "" });
    expect(bad.isError).toBe(true);
    expect((bad.content[0] as { text: string }).text).toMatch(
      /^Invalid arguments for tool search_books: query: /,
    );
  });

  it("structured output, links, several blocks and thrown errors", async () => {
    const client = await connect(output);
    expect(await client.callTool("sales_total", { quarter: "q3" })).toEqual({
      content: [{ type: "text", text: '{"quarter":"q3","total":1204}' }],
      structuredContent: { quarter: "q3", total: 1204 },
    });
    expect(await client.callTool("q3_report")).toEqual({
      content: [
        { type: "resource_link", uri: "reports://2026-q3", name: "Q3 report", mimeType: "application/pdf" },
      ],
    });
    expect((await client.callTool("cover")).content.map((b) => b.type)).toEqual(["image", "text"]);
    expect(await client.callTool("divide", { a: 1, b: 0 })).toEqual({
      content: [{ type: "text", text: "Cannot divide by zero" }],
      isError: true,
    });
  });
});

describe("docs/prompts.md examples", () => {
  it("review and translate, with completion that reads the chosen arguments", async () => {
    const client = await connect(prompts);
    expect((await client.getPrompt("review", { diff: "+x" })).messages[0]).toEqual({
      role: "user",
      content: { type: "text", text: "Review this diff:\n+x" },
    });
    expect((await client.getPrompt("translate", { text: "Hola", to: "French" })).messages).toHaveLength(2);
    expect(
      await client.complete(
        { type: "ref/prompt", name: "translate" },
        { argument: "to", value: "", arguments: { text: "Bonjour" } },
      ),
    ).toEqual({
      completion: { values: ["English"] },
    });
    expect(
      await client.complete({ type: "ref/prompt", name: "review" }, { argument: "tone", value: "s" }),
    ).toEqual({
      completion: { values: ["strict"] },
    });
  });
});

describe("docs/context.md examples", () => {
  it("progress, logging, elicitation, sampling and roots", async () => {
    const client = await connect(context, {
      onElicit: () => ({ action: "accept", content: { confirm: true } }),
      onSample: () => ({ role: "assistant", content: { type: "text", text: "small" }, model: "m" }),
      roots: [{ uri: "file:///books" }],
    });
    expect(
      await client.request("tools/call", { name: "import_catalog", _meta: { progressToken: "p" } }),
    ).toEqual({
      content: [{ type: "text", text: "Imported 4 batches" }],
    });
    expect(
      client.notifications.filter((n) => n.method === "notifications/progress").map((n) => n.params),
    ).toEqual([
      { progressToken: "p", progress: 1, total: 4, message: "batch 1 of 4" },
      { progressToken: "p", progress: 2, total: 4, message: "batch 2 of 4" },
      { progressToken: "p", progress: 3, total: 4, message: "batch 3 of 4" },
      { progressToken: "p", progress: 4, total: 4, message: "batch 4 of 4" },
    ]);
    expect(client.notifications.filter((n) => n.method === "notifications/message")).toHaveLength(4);
    expect((await client.callTool("confirm_delete")).content).toEqual([{ type: "text", text: "Deleted" }]);
    expect((await client.callTool("summarize")).content).toEqual([{ type: "text", text: "Summary: small" }]);
    expect((await client.callTool("workspace")).content).toEqual([{ type: "text", text: "file:///books" }]);
  });
});

describe("docs/resources.md examples", () => {
  afterEach(() => vi.unstubAllGlobals());
  const text = async (client: Awaited<ReturnType<typeof connect>>, uri: string) =>
    ((await client.readResource(uri)).contents[0] as { text: string }).text;

  it("config://app is static, listed, and read as JSON", async () => {
    const client = await connect(resConfig);
    expect((await client.listResources()).resources).toEqual([
      { uri: "config://app", name: "config://app", description: "The app configuration" },
    ]);
    expect(await client.readResource("config://app")).toEqual({
      contents: [
        { uri: "config://app", mimeType: "application/json", text: '{"theme":"dark","language":"en"}' },
      ],
    });
  });

  it("the github readme template: typed variables, fetch, markdown", async () => {
    expectTypeOf<UriParams<"github://{owner}/{repo}/readme">>().toEqualTypeOf<{
      owner: string;
      repo: string;
    }>();
    const fetched: string[] = [];
    vi.stubGlobal("fetch", async (url: string) => {
      fetched.push(url);
      return new Response("# picomcp");
    });
    const client = await connect(resGithub);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      {
        uriTemplate: "github://{owner}/{repo}/readme",
        name: "github://{owner}/{repo}/readme",
        mimeType: "text/markdown",
      },
    ]);
    expect(await client.readResource("github://acme/rocket/readme")).toEqual({
      contents: [{ uri: "github://acme/rocket/readme", mimeType: "text/markdown", text: "# picomcp" }],
    });
    expect(fetched).toEqual(["https://raw.githubusercontent.com/acme/rocket/HEAD/README.md"]);
  });

  it("read gets the concrete uri and the signal", async () => {
    const calls: [string, AbortSignal | undefined][] = [];
    vi.stubGlobal("fetch", async (url: string, init?: RequestInit) => {
      calls.push([url, init?.signal ?? undefined]);
      return new Response("intro");
    });
    const client = await connect(resContext);
    expect(await text(client, "docs://guide/intro.md")).toBe("intro");
    expect(calls[0]![0]).toBe("https://docs.example.com/guide/intro.md");
    expect(calls[0]![1]).toBeInstanceOf(AbortSignal);
  });

  it("users://{id}: a found user, and -32002 for one that is not", async () => {
    const client = await connect(resUsers);
    expect(await text(client, "users://42")).toBe('{"id":"42","name":"Ada"}');
    await expect(client.readResource("users://7")).rejects.toMatchObject({
      code: -32002,
      message: "Resource not found: users://7",
    });
  });

  it("the return-value table", async () => {
    const client = await connect(resReturns);
    expect((await client.readResource("docs://readme")).contents[0]).toMatchObject({
      mimeType: "text/markdown",
    });
    expect(await client.readResource("stats://catalog")).toEqual({
      contents: [
        { uri: "stats://catalog", mimeType: "application/json", text: '{"books":1204,"authors":391}' },
      ],
    });
    expect(await client.readResource("covers://placeholder")).toEqual({
      contents: [
        {
          uri: "covers://placeholder",
          mimeType: "image/gif",
          blob: "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7",
        },
      ],
    });
    expect((await client.readResource("shelves://sf")).contents.map((c) => c.uri)).toEqual([
      "shelves://sf/1",
      "shelves://sf/2",
    ]);
  });

  it("the template syntax examples", async () => {
    const client = await connect(resTemplates);
    expect(await text(client, "users://42")).toBe("user 42");
    await expect(client.readResource("users://42/posts")).rejects.toMatchObject({ code: -32002 });
    expect(await text(client, "files://src/index.ts")).toBe("export {};");
    await expect(client.readResource("files://../../etc/passwd")).rejects.toMatchObject({ code: -32002 });
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      "files://src/index.ts",
      "files://docs/guide.md",
    ]);
    expect(
      await client.complete(
        { type: "ref/resource", uri: "files://{+path}" },
        { argument: "path", value: "do" },
      ),
    ).toEqual({
      completion: { values: ["docs/guide.md"] },
    });
    expect(await text(client, "search://books?lang=fr&q=dune")).toBe('{"q":"dune","lang":"fr"}');
    expect(await text(client, "search://books")).toBe('{"q":null,"lang":"en"}');
    expect(await text(client, "tree://root/a/b/c")).toBe("a > b > c");
  });

  it("the level 4 examples: prefixes, a query record, a list without explode, a literal '?'", async () => {
    expectTypeOf<UriParams<"shop://items{?sort,filters*}">>().toEqualTypeOf<{
      sort?: string;
      filters?: Record<string, string | string[]>;
    }>();
    const client = await connect(resLevel4);
    expect(await text(client, "archive://2026/12/01.md")).toBe("2026: 12/01.md");
    await expect(client.readResource("archive://20261/x")).rejects.toMatchObject({ code: -32002 });
    expect(red).toBe("shop://items?color=red&size=L");
    expect(await text(client, red)).toBe('{"sort":"name","filters":{"color":"red","size":"L"}}');
    expect(await text(client, "shop://items?sort=price")).toBe('{"sort":"price","filters":{}}');
    expect(await text(client, "posts://all?tags=a,b")).toBe('["a","b"]');
    expect(await text(client, "search://q?term=mcp")).toBe("results for mcp");
  });

  it("link() from a tool", async () => {
    const client = await connect(resLink);
    expect(await client.callTool("q3_report")).toEqual({
      content: [
        { type: "resource_link", uri: "reports://2026-q3", name: "Q3 report", mimeType: "application/pdf" },
      ],
    });
  });
});

describe("docs/auth.md examples", () => {
  it("serves the metadata and challenges a request without a token", async () => {
    const prm = await authHandle(
      new Request("https://mcp.example.com/.well-known/oauth-protected-resource/mcp"),
    );
    expect(await prm.json()).toEqual({
      resource: "https://mcp.example.com/mcp",
      authorization_servers: ["https://auth.example.com"],
      bearer_methods_supported: ["header"],
      scopes_supported: ["notes:read", "notes:write"],
    });
    const res = await authHandle(
      new Request("https://mcp.example.com/mcp", {
        method: "POST",
        headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
        body: "{}",
      }),
    );
    expect([res.status, res.headers.get("www-authenticate")]).toEqual([
      401,
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="notes:read"',
    ]);
  });

  it("hides write_note from a caller without notes:write", async () => {
    const reader = await connect(authServer);
    expect((await reader.listTools()).tools.map((t) => t.name)).toEqual(["read_notes"]);
  });
});

describe("docs/auth.md opaque tokens", () => {
  afterEach(() => vi.unstubAllGlobals());
  const answer = (status: number, body: object) => async () => new Response(JSON.stringify(body), { status });

  it("introspects: an active token for this server, an inactive one, another audience, an outage", async () => {
    const { verifyToken } = await import("../../examples/docs/auth-opaque.js");
    const { InvalidTokenError } = await import("picomcp/auth");
    const req = new Request("https://mcp.example.com/mcp", { method: "POST" });
    const active = {
      active: true,
      aud: "https://mcp.example.com/mcp",
      client_id: "app",
      scope: "a b",
      sub: "ada",
    };
    vi.stubGlobal("fetch", answer(200, active));
    expect(await verifyToken("t1", req)).toEqual({
      token: "t1",
      clientId: "app",
      scopes: ["a", "b"],
      subject: "ada",
    });
    vi.stubGlobal("fetch", answer(200, { active: false }));
    expect(await verifyToken("t2", req)).toBeUndefined();
    vi.stubGlobal("fetch", answer(200, { ...active, aud: "https://other.example.com" }));
    await expect(verifyToken("t3", req)).rejects.toBeInstanceOf(InvalidTokenError);
    vi.stubGlobal("fetch", answer(500, {}));
    await expect(verifyToken("t4", req)).rejects.toThrow("introspection failed: 500");
  });
});

describe("docs/http.md Workers example", () => {
  it("serves a stateless tools/call for its host, and refuses another host", async () => {
    const { default: worker } = await import("../../examples/docs/http-workers.js");
    const post = (host: string) =>
      worker.fetch(
        new Request(`https://${host}/mcp`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "greet", arguments: { name: "Ada" } },
          }),
        }),
      );
    const ok = await post("mcp.example.com");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "Hello, Ada!" }] },
    });
    expect((await post("evil.example.com")).status).toBe(403);
  });
});
