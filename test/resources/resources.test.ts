import { describe, expect, it } from "vitest";
import type { RequestContext } from "../../src/context.js";
import { featuresOf } from "../../src/eras/versions.js";
import { isUnsafePathValue, McpError, McpServer } from "../../src/index.js";
import { encodeMessage, preEncode } from "../../src/jsonrpc.js";
import { DEFAULT_PAGE_SIZE } from "../../src/pagination.js";
import { DEFAULT_SETTINGS } from "../../src/registry.js";
import { listResources, ResourceRegistry, readResource } from "../../src/resources/resources.js";
import { connect } from "../../src/testing.js";
import { rawPeer, tick } from "../helpers.js";
import { sdkClient } from "../sdk-bridge.js";
import { traversalCorpus } from "../traversal-corpus.js";

describe("resources/list pages", () => {
  it("shapes only the page, and runs a template's list only for pages past the statics", async () => {
    const s = new McpServer({ name: "t", version: "1", pageSize: 2 });
    for (let i = 1; i <= 5; i++) s.resource(`s://${i}`, { read: () => "" });
    let enumerations = 0;
    s.resource("item://{n}", {
      list: () => {
        enumerations++;
        return [1, 2, 3].map((n) => ({ uri: `item://${n}`, name: `Item ${n}` }));
      },
      read: ({ n }) => n,
    });
    const client = await connect(s);
    const uris: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? undefined : { cursor });
      uris.push(page.resources.map((r) => r.uri));
      if (uris.length === 2) expect(enumerations).toBe(0);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(uris).toEqual([
      ["s://1", "s://2"],
      ["s://3", "s://4"],
      ["s://5", "item://1"],
      ["item://2", "item://3"],
    ]);
    expect(enumerations).toBe(2);
    // a cursor past the end (the list shrank) ends the list
    expect(await client.listResources({ cursor: "p2.e.z" })).toEqual({ resources: [] });
  });

  /** Every page of resources/list, following nextCursor; `between` runs after each page but the last. */
  async function walk(client: Awaited<ReturnType<typeof connect>>, between: (page: number) => void) {
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? undefined : { cursor });
      pages.push(page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      if (cursor !== undefined) between(pages.length);
    } while (cursor !== undefined);
    return pages;
  }

  it("resumes after the last static sent when statics are removed or added between pages", async () => {
    const s = new McpServer({ name: "t", version: "1", pageSize: 3 });
    const remove = new Map<number, () => void>();
    for (let i = 1; i <= 9; i++) remove.set(i, s.resource(`s://${i}`, { read: () => "" }).remove);
    const client = await connect(s);
    const pages = await walk(client, (page) => {
      if (page === 1) {
        // already sent, and the next one: an index cursor would skip s://5 and s://6
        remove.get(1)!();
        remove.get(2)!();
        remove.get(4)!();
      }
      if (page === 2) s.resource("s://10", { read: () => "" });
    });
    expect(pages).toEqual([
      ["s://1", "s://2", "s://3"],
      ["s://5", "s://6", "s://7"],
      ["s://8", "s://9", "s://10"],
    ]);
    // removing the very static a cursor names still resumes after it
    const first = await client.listResources();
    expect(first.resources.map((r) => r.uri)).toEqual(["s://3", "s://5", "s://6"]);
    remove.get(6)!();
    remove.get(5)!();
    s.resource("s://5", { read: () => "" }); // registered again: it comes last now
    expect((await client.listResources({ cursor: first.nextCursor! })).resources.map((r) => r.uri)).toEqual([
      "s://7",
      "s://8",
      "s://9",
    ]);
  });

  it("serves a page of statics shaped once until the list changes, and each caller its own scoped page", async () => {
    const s = new McpServer({ name: "t", version: "1", pageSize: 2 });
    for (let i = 1; i <= 4; i++) s.resource(`s://${i}`, { read: () => "" });
    const client = await connect(s);
    const a = await client.listResources();
    expect(await client.listResources()).toEqual(a);
    s.resource("s://0", { title: "zero", read: () => "" });
    expect((await walk(client, () => {})).flat()).toEqual(["s://1", "s://2", "s://3", "s://4", "s://0"]);
    // a static that needs a scope turns every page into the caller's own, found by skipping what it cannot see
    s.resource("secret://x", { scopes: ["admin"], read: () => "" });
    s.resource("s://5", { read: () => "" });
    const pages = await walk(client, () => {});
    expect(pages).toEqual([
      ["s://1", "s://2"],
      ["s://3", "s://4"],
      ["s://0", "s://5"],
    ]);
  });

  it("answers a cursor of the wrong shape with -32602", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("s://1", { read: () => "" });
    const client = await connect(s);
    for (const cursor of ["p2.x.1", "p2.s.", "p2.s.-1", "p2.s1", "p1.0", "p2.s.1.2"])
      await expect(client.listResources({ cursor })).rejects.toMatchObject({
        code: -32602,
        data: { cursor },
      });
  });

  it("answers a page from the middle of 100,000 statics without walking them", async () => {
    const reg = new ResourceRegistry(() => {});
    for (let i = 0; i < 100_000; i++) reg.add(`s://${i}`, { read: () => "" });
    const ctx = {
      features: featuresOf("2025-11-25"),
      auth: undefined,
      personal() {},
      cache() {},
    } as unknown as RequestContext;
    // pages of the default size, 2000 since it was chosen by what a client pays (docs/resources.md,
    // pagination); 100 before
    const size = DEFAULT_PAGE_SIZE;
    expect(size).toBe(2000);
    const first = await listResources(reg, {}, ctx);
    expect(first.nextCursor).toBe(`p2.s.${(size - 1).toString(36)}`);
    // every look at a static's number counted: the cursor is found by binary search, not by a scan
    let looks = 0;
    for (const e of reg.statics) {
      const seq = e.seq;
      Object.defineProperty(e, "seq", {
        get: () => {
          looks++;
          return seq;
        },
      });
    }
    const page = await listResources(reg, { cursor: `p2.s.${(49_999).toString(36)}` }, ctx);
    expect(page.resources).toHaveLength(size);
    expect((page.resources as { uri: string }[]).map((r) => r.uri)).toEqual(
      Array.from({ length: size }, (_, i) => `s://${50_000 + i}`),
    );
    expect(looks).toBeLessThan(2 * 17 + size);
    // only the pages asked for were shaped
    expect(reg.statics.filter((e) => e.shaped.size > 0)).toHaveLength(2 * size);
  });
});

describe("registration and listing", () => {
  it("lists statics in resources/list and templates in resources/templates/list, with every option", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("config://app", {
      name: "config",
      title: "Config",
      description: "The app configuration",
      mimeType: "text/plain",
      annotations: { audience: ["user"], priority: 0.5, lastModified: "2026-01-01T00:00:00Z" },
      size: 42,
      icons: [{ src: "https://x/i.png" }],
      _meta: { "example.com/a": 1 },
      read: () => "",
    });
    s.resource("users://{id}", {
      description: "A user",
      mimeType: "application/json",
      size: 1,
      read: () => "",
    });
    const p = rawPeer(s);
    await p.initialize();
    expect(await p.send({ jsonrpc: "2.0", id: 1, method: "resources/list" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resources: [
          {
            uri: "config://app",
            name: "config",
            title: "Config",
            description: "The app configuration",
            mimeType: "text/plain",
            annotations: { audience: ["user"], priority: 0.5, lastModified: "2026-01-01T00:00:00Z" },
            icons: [{ src: "https://x/i.png" }],
            _meta: { "example.com/a": 1 },
            size: 42,
          },
        ],
      },
    });
    expect(await p.send({ jsonrpc: "2.0", id: 2, method: "resources/templates/list" })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: {
        resourceTemplates: [
          {
            uriTemplate: "users://{id}",
            name: "users://{id}",
            description: "A user",
            mimeType: "application/json",
          },
        ],
      },
    });
  });

  it("drops title, icons, _meta and lastModified for older revisions", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("a://b", {
      title: "T",
      icons: [{ src: "https://x/i.png" }],
      _meta: { k: 1 },
      annotations: { priority: 1, lastModified: "2026-01-01T00:00:00Z" },
      read: () => "",
    });
    const client = await connect(s, { protocolVersion: "2025-03-26" });
    expect((await client.listResources()).resources).toEqual([
      { uri: "a://b", name: "a://b", annotations: { priority: 1 } },
    ]);
  });

  it("paginates statics and every template's list together, with opaque cursors", async () => {
    const s = new McpServer({ name: "t", version: "1", pageSize: 3 });
    s.resource("s://1", { read: () => "" });
    s.resource("s://2", { read: () => "" });
    s.resource("item://{n}", {
      mimeType: "text/plain",
      list: () => [1, 2, 3].map((n) => ({ uri: `item://${n}`, name: `Item ${n}` })),
      read: ({ n }) => n,
    });
    s.resource("other://{x}", {
      list: async () => [{ uri: "other://z", name: "z", mimeType: "text/csv" }],
      read: () => "",
    });
    const client = await sdkClient(s);
    const p1 = await client.listResources();
    expect(p1.resources.map((r) => r.uri)).toEqual(["s://1", "s://2", "item://1"]);
    expect(p1.resources[2]).toEqual({ uri: "item://1", name: "Item 1", mimeType: "text/plain" });
    const p2 = await client.listResources({ cursor: p1.nextCursor! });
    expect(p2.resources.map((r) => r.uri)).toEqual(["item://2", "item://3", "other://z"]);
    expect(p2.nextCursor).toBeUndefined();
    await expect(client.listResources({ cursor: "%%%" })).rejects.toMatchObject({ code: -32602 });
    const raw = rawPeer(s);
    await raw.initialize();
    expect(
      await raw.send({ jsonrpc: "2.0", id: 1, method: "resources/templates/list", params: { cursor: 5 } }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "Invalid cursor", data: { cursor: null } },
    });
  });

  it("throws at registration for a bad template, pointing at the place", () => {
    const s = new McpServer({ name: "t", version: "1" });
    expect(() => s.resource("files://{a}{b}", { read: () => "" })).toThrow(/files:\/\/\{a\}\{b\}\n\s+\^/);
    expect(() => s.resource("files://{a", { read: () => "" })).toThrow(/files:\/\/\{a\n/);
    expect(() => s.resource("x://{a}/{a}", { read: () => "" })).toThrow(/x:\/\/\{a\}\/\{a\}/);
    s.resource("x://{a}", { read: () => "" });
    expect(() => s.resource("x://{a}", { read: () => "" })).toThrow(
      "A resource template x://{a} is already registered",
    );
    expect(() => s.resource("x://y", {} as never)).toThrow("Resource x://y needs a read function");
  });

  it("removes a resource with its handle, and tells connected clients", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("a://1", { read: () => "1" });
    const h = s.resource("a://{n}", { read: () => "n" });
    const client = await connect(s);
    const changed = client.waitForNotification("notifications/resources/list_changed");
    h.remove();
    await changed;
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    await expect(client.readResource("a://2")).rejects.toMatchObject({ code: -32002 });
    expect(await client.readResource("a://1")).toEqual({
      contents: [{ uri: "a://1", mimeType: "text/plain", text: "1" }],
    });
  });
});

describe("resources/read", () => {
  function server(onError: (e: unknown) => void = () => {}) {
    const s = new McpServer({ name: "t", version: "1", onError });
    s.resource("text://a", { read: () => "hello" });
    s.resource("md://a", { mimeType: "text/markdown", read: () => "# hi" });
    s.resource("bin://a", { read: () => new Uint8Array([0, 1, 2, 253, 254, 255]) });
    s.resource("gif://a", { mimeType: "image/gif", read: () => new Uint8Array([71, 73, 70]).buffer });
    s.resource("json://a", { read: () => ({ books: 1204, authors: 391 }) });
    s.resource("list://a", { read: () => [1, 2] });
    s.resource("multi://a", {
      read: () => [
        { uri: "multi://a/1", text: "one" },
        { uri: "multi://a/2", blob: "AAE=", mimeType: "application/octet-stream" },
      ],
    });
    s.resource("users://{id}", {
      read: ({ id }) => {
        if (id !== "42") throw new McpError(-32002, `Resource not found: users://${id}`);
        return { id };
      },
    });
    s.resource("boom://a", {
      read: () => {
        throw new Error("db password is hunter2");
      },
    });
    s.resource("custom://a", {
      read: () => {
        throw new McpError(-32050, "Quota exceeded", { retryAfter: 5 });
      },
    });
    s.resource("undef://a", { read: () => undefined });
    return s;
  }

  it("sends each return value as the seed's table says", async () => {
    const client = await sdkClient(server());
    const read = async (uri: string) => (await client.readResource({ uri })).contents;
    expect(await read("text://a")).toEqual([{ uri: "text://a", mimeType: "text/plain", text: "hello" }]);
    expect(await read("md://a")).toEqual([{ uri: "md://a", mimeType: "text/markdown", text: "# hi" }]);
    expect(await read("bin://a")).toEqual([
      { uri: "bin://a", mimeType: "application/octet-stream", blob: "AAEC/f7/" },
    ]);
    expect(await read("gif://a")).toEqual([{ uri: "gif://a", mimeType: "image/gif", blob: "R0lG" }]);
    expect(await read("json://a")).toEqual([
      { uri: "json://a", mimeType: "application/json", text: '{"books":1204,"authors":391}' },
    ]);
    expect(await read("list://a")).toEqual([
      { uri: "list://a", mimeType: "application/json", text: "[1,2]" },
    ]);
    expect(await read("multi://a")).toEqual([
      { uri: "multi://a/1", text: "one" },
      { uri: "multi://a/2", blob: "AAE=", mimeType: "application/octet-stream" },
    ]);
  });

  it("answers a URI nothing matches with -32002 and data.uri, exactly", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(
      await p.send({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "nope://x" } }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32002, message: "Resource not found: nope://x", data: { uri: "nope://x" } },
    });
    expect(
      await p.send({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "users://7" } }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32002, message: "Resource not found: users://7", data: { uri: "users://7" } },
    });
    expect(await p.send({ jsonrpc: "2.0", id: 3, method: "resources/read", params: {} })).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32602, message: "resources/read needs a string uri" },
    });
  });

  it("maps not found to -32602 for 2026-07-28 requests, in the one place the modern revision uses", async () => {
    const reg = new ResourceRegistry(() => {});
    reg.add("users://{id}", {
      read: () => {
        throw new McpError(-32002, "Resource not found: users://1");
      },
    });
    const ctx = { features: featuresOf("2026-07-28"), cache() {} } as unknown as RequestContext;
    // a synchronous read fails synchronously: the method path makes no promise for it
    const thrown = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return error;
      }
      throw new Error("did not throw");
    };
    expect(thrown(() => readResource(reg, { uri: "none://x" }, ctx))).toEqual(
      new McpError(-32602, "Resource not found: none://x", { uri: "none://x" }),
    );
    expect(thrown(() => readResource(reg, { uri: "users://1" }, ctx))).toEqual(
      new McpError(-32602, "Resource not found: users://1", { uri: "users://1" }),
    );
    reg.add("later://{id}", {
      read: async () => {
        throw new McpError(-32002, "Resource not found: later://1");
      },
    });
    await expect(readResource(reg, { uri: "later://1" }, ctx)).rejects.toEqual(
      new McpError(-32602, "Resource not found: later://1", { uri: "later://1" }),
    );
  });

  it("passes a thrown McpError through, and hides any other throw behind -32603", async () => {
    const errors: unknown[] = [];
    const p = rawPeer(server((e) => errors.push(e)));
    await p.initialize();
    expect(
      await p.send({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "custom://a" } }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32050, message: "Quota exceeded", data: { retryAfter: 5 } },
    });
    for (const uri of ["boom://a", "undef://a"]) {
      expect(await p.send({ jsonrpc: "2.0", id: uri, method: "resources/read", params: { uri } })).toEqual({
        jsonrpc: "2.0",
        id: uri,
        error: { code: -32603, message: "Internal error" },
      });
    }
    expect(String(errors[0])).toContain("hunter2");
    expect(errors).toHaveLength(2);
  });

  it("answers a malformed percent escape with -32602", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("files://{+path}", { read: ({ path }) => path });
    const p = rawPeer(s);
    await p.initialize();
    const answer = await p.send({
      jsonrpc: "2.0",
      id: 1,
      method: "resources/read",
      params: { uri: "files://a%zzb" },
    });
    expect(answer.error.code).toBe(-32602);
    expect(answer.error.data).toEqual({ uri: "files://a%zzb" });
  });

  it("gives read the concrete uri and a signal that aborts on cancellation", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    let seen: { uri?: string; aborted?: boolean } = {};
    s.resource("slow://{x}", {
      read: (_p, ctx) =>
        new Promise((resolve) => {
          seen.uri = ctx.uri;
          ctx.signal.addEventListener("abort", () => {
            seen.aborted = true;
            resolve("late");
          });
        }),
    });
    const p = rawPeer(s);
    await p.initialize();
    const read = p.send({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "slow://a%20b" } });
    await tick();
    await p.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
    expect(await read).toBeUndefined();
    expect(seen).toEqual({ uri: "slow://a%20b", aborted: true });
    seen = {};
  });

  it("decodes values once and prefers an exact static URI over templates", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("files://{+path}", { read: ({ path }) => `template:${path}` });
    s.resource("files://docs/{name}", { read: ({ name }) => `doc:${name}` });
    s.resource("files://readme", { read: () => "static" });
    s.resource("q://search{?q,lang}", { read: (p) => JSON.stringify(p) });
    const client = await connect(s);
    const text = async (uri: string) =>
      ((await client.readResource(uri)).contents[0] as { text: string }).text;
    expect(await text("files://readme")).toBe("static");
    expect(await text("files://docs/a%20b.md")).toBe("doc:a b.md");
    expect(await text("files://src/a%252Fb")).toBe("template:src/a%2Fb");
    expect(await text("q://search?lang=fr&x=1&q=caf%C3%A9")).toBe('{"lang":"fr","q":"café"}');
    expect(await text("q://search")).toBe("{}");
  });
});

describe("path safety", () => {
  it("never lets a traversal reach read, in {var}, {+var} or query variables", async () => {
    const s = new McpServer({ name: "t", version: "1", onError: () => {} });
    const reached: string[] = [];
    const record = (p: Record<string, unknown>) => {
      reached.push(JSON.stringify(p));
      return "ok";
    };
    s.resource("one://{name}", { read: record });
    s.resource("many://{+path}", { read: record });
    s.resource("query://find{?path}", { read: record });
    s.resource("fallback://{+anything}", { read: () => "fallback" });
    const p = rawPeer(s);
    await p.initialize();
    let id = 0;
    for (const c of traversalCorpus) {
      for (const uri of [
        `one://${c.raw}`,
        `many://${c.raw}`,
        `many://base/${c.raw}`,
        `query://find?path=${c.raw}`,
      ]) {
        const answer = await p.send({ jsonrpc: "2.0", id: ++id, method: "resources/read", params: { uri } });
        // under "base/" a single ".." stays inside, so only the direct placements must all be refused
        if (c.unsafe && !uri.startsWith("many://base/")) {
          expect(answer.error?.code, `${c.why}: ${uri}`).toBeOneOf([-32002, -32602]);
        }
      }
    }
    expect(reached.length).toBeGreaterThan(0);
    for (const r of reached) {
      for (const v of Object.values(JSON.parse(r)) as string[]) expect(isUnsafePathValue(v), r).toBe(false);
    }
  });

  it("answers not found and tries no later template", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    let fallback = 0;
    s.resource("files://docs/{+path}", { read: () => "docs" });
    s.resource("files://{+path}", { read: () => String(++fallback) });
    const client = await connect(s);
    await expect(client.readResource("files://docs/../../etc/passwd")).rejects.toMatchObject({
      code: -32002,
    });
    expect(fallback).toBe(0);
  });

  it("can be turned off per resource, per variable, or for the whole server", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("raw://{+path}", { pathSafety: false, read: ({ path }) => path });
    s.resource("mixed://{a}/{+b}", { unsafe: ["b"], read: ({ a, b }) => `${a}|${b}` });
    const client = await connect(s);
    const text = async (uri: string) =>
      ((await client.readResource(uri)).contents[0] as { text: string }).text;
    expect(await text("raw://../x")).toBe("../x");
    expect(await text("mixed://ok/../../x")).toBe("ok|../../x");
    await expect(client.readResource("mixed://../b")).rejects.toMatchObject({ code: -32002 });
    const open = new McpServer({ name: "t", version: "1", pathSafety: false });
    open.resource("f://{+p}", { read: ({ p }) => p });
    expect(
      ((await (await connect(open)).readResource("f:///etc/passwd")).contents[0] as { text: string }).text,
    ).toBe("/etc/passwd");
  });
});

describe("completion of template variables", () => {
  it("completes with the chosen variables in context, at most 100 values", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("github://{owner}/{repo}", {
      complete: {
        owner: (value) => ["anthropic", "acme"].filter((o) => o.startsWith(value)),
        repo: (value, ctx) => Array.from({ length: 150 }, (_, i) => `${ctx.arguments.owner}-${value}${i}`),
      },
      read: () => "",
    });
    const client = await sdkClient(s);
    expect(
      await client.complete({
        ref: { type: "ref/resource", uri: "github://{owner}/{repo}" },
        argument: { name: "owner", value: "an" },
      }),
    ).toEqual({
      completion: { values: ["anthropic"] },
    });
    const repos = await client.complete({
      ref: { type: "ref/resource", uri: "github://{owner}/{repo}" },
      argument: { name: "repo", value: "x" },
      context: { arguments: { owner: "acme" } },
    });
    expect(repos.completion.values).toHaveLength(100);
    expect(repos.completion.values[0]).toBe("acme-x0");
    expect(repos.completion).toMatchObject({ total: 150, hasMore: true });
    await expect(
      client.complete({
        ref: { type: "ref/resource", uri: "nope://{x}" },
        argument: { name: "x", value: "" },
      }),
    ).rejects.toMatchObject({
      code: -32602,
    });
  });
});

describe("subscriptions", () => {
  it("sends resources/updated to exactly the connections subscribed to the URI", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("watched://a", { read: () => "a" });
    const a = await connect(s);
    const b = await connect(s);
    const c = await connect(s);
    await a.subscribe("watched://a");
    await b.subscribe("watched://other");
    s.resourceUpdated("watched://a");
    await tick();
    expect(a.notifications).toEqual([
      { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "watched://a" } },
    ]);
    expect(b.notifications).toEqual([]);
    expect(c.notifications).toEqual([]);
    await a.unsubscribe("watched://a");
    s.resourceUpdated("watched://a");
    await tick();
    expect(a.notifications).toHaveLength(1);
  });

  it("declares subscribe and listChanged, and answers subscribe/unsubscribe with exactly {}", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("w://a", { read: () => "" });
    const p = rawPeer(s);
    const init = await p.initialize();
    expect(init.result.capabilities.resources).toEqual({ subscribe: true, listChanged: true });
    expect(
      await p.send({ jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "w://a" } }),
    ).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(
      await p.send({ jsonrpc: "2.0", id: 2, method: "resources/unsubscribe", params: { uri: "w://a" } }),
    ).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    expect(await p.send({ jsonrpc: "2.0", id: 3, method: "resources/subscribe", params: {} })).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32602, message: "The uri must be a string" },
    });
  });

  it("drops a connection's subscriptions when it closes", async () => {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("w://a", { read: () => "" });
    const a = await connect(s);
    await a.subscribe("w://a");
    a.close();
    s.resourceUpdated("w://a");
    await tick();
    expect(a.notifications).toEqual([]);
  });
});

describe("through the official SDK client", () => {
  it("subscribes, hears resources/updated and list_changed, and is refused traversals", async () => {
    const { ResourceUpdatedNotificationSchema, ResourceListChangedNotificationSchema } = await import(
      "@modelcontextprotocol/sdk/types.js"
    );
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("watched://a", { read: () => "a" });
    s.resource("files://{+path}", { read: ({ path }) => path });
    const client = await sdkClient(s);
    const updated: string[] = [];
    let listChanged = 0;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void listChanged++);
    await client.subscribeResource({ uri: "watched://a" });
    s.resourceUpdated("watched://a");
    s.resourceUpdated("watched://b");
    s.resource("new://x", { read: () => "" });
    await tick();
    await tick();
    expect(updated).toEqual(["watched://a"]);
    expect(listChanged).toBe(1);
    await client.unsubscribeResource({ uri: "watched://a" });
    s.resourceUpdated("watched://a");
    await tick();
    expect(updated).toEqual(["watched://a"]);
    await expect(client.readResource({ uri: "files://../etc/passwd" })).rejects.toMatchObject({
      code: -32002,
    });
    await expect(client.readResource({ uri: "files://%2e%2e%2fetc" })).rejects.toMatchObject({
      code: -32002,
    });
    expect((await client.readResource({ uri: "files://a/b" })).contents).toEqual([
      { uri: "files://a/b", mimeType: "text/plain", text: "a/b" },
    ]);
  });
});

describe("RFC 6570 level 4 templates", () => {
  function server() {
    const s = new McpServer({ name: "t", version: "1" });
    s.resource("x://café/{year:4}/{+rest}", { read: ({ year, rest }) => `${year}|${rest}` });
    s.resource("shop://items{?sort,filters*}", { read: (params) => params });
    return s;
  }
  const read = (id: number, uri: string) => ({
    jsonrpc: "2.0",
    id,
    method: "resources/read",
    params: { uri },
  });

  it("reads a prefix and an encoded literal, written either way, with the URI as the client sent it", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send(read(1, "x://café/2026/a/b"))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { contents: [{ uri: "x://café/2026/a/b", mimeType: "text/plain", text: "2026|a/b" }] },
    });
    expect(await p.send(read(2, "x://caf%C3%A9/2026/x"))).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { contents: [{ uri: "x://caf%C3%A9/2026/x", mimeType: "text/plain", text: "2026|x" }] },
    });
    expect(await p.send(read(3, "x://café/20261/x"))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: {
        code: -32002,
        message: "Resource not found: x://café/20261/x",
        data: { uri: "x://café/20261/x" },
      },
    });
  });

  it("gives an exploded query variable the other keys as a record, each value checked for path safety", async () => {
    const p = rawPeer(server());
    await p.initialize();
    expect(await p.send(read(1, "shop://items?size=L&sort=asc&color=red"))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        contents: [
          {
            uri: "shop://items?size=L&sort=asc&color=red",
            mimeType: "application/json",
            text: '{"filters":{"size":"L","color":"red"},"sort":"asc"}',
          },
        ],
      },
    });
    expect(await p.send(read(2, "shop://items?f=..%2F..%2Fetc"))).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32002,
        message: "Resource not found: shop://items?f=..%2F..%2Fetc",
        data: { uri: "shop://items?f=..%2F..%2Fetc" },
      },
    });
  });
});

describe("URIs the official SDK's UriTemplate writes", () => {
  it("match the same template here, and read back the values", async () => {
    const { UriTemplate } = await import("@modelcontextprotocol/sdk/shared/uriTemplate.js");
    const cases: [string, Record<string, string | string[]>][] = [
      ["github://{owner}/{repo}/readme{?ref}", { owner: "octo", repo: "hé llo", ref: "main" }],
      ["files://{+path}", { path: "src/a b.ts" }],
      ["tree://root{/segs*}", { segs: ["a", "b"] }],
      ["search://{?q,lang}", { q: "a&b", lang: "en" }],
      ["x://café/{var}", { var: "x" }],
      ["s://x{?a}{&b}", { b: "2" }],
    ];
    const s = new McpServer({ name: "t", version: "1" });
    for (const [template] of cases) s.resource(template, { read: (params) => params });
    const client = await sdkClient(s);
    for (const [template, values] of cases) {
      const uri = new UriTemplate(template).expand(values);
      const [content] = (await client.readResource({ uri })).contents;
      expect([template, JSON.parse((content as { text: string }).text)]).toEqual([template, values]);
    }
  });
});

describe("template limits", () => {
  it("applies the server's limits at registration and to URIs", async () => {
    const s = new McpServer({
      name: "t",
      version: "1",
      uriTemplateLimits: { maxTemplateLength: 20, maxVariables: 1, maxUriLength: 30 },
    });
    expect(() => s.resource("x://{a}/{b}", { read: () => "" })).toThrow(/variables/);
    expect(() => s.resource(`x://${"a".repeat(30)}/{a}`, { read: () => "" })).toThrow(/long/);
    s.resource("x://{+a}", { read: ({ a }) => a });
    const client = await connect(s);
    expect((await client.readResource("x://short")).contents[0]).toMatchObject({ text: "short" });
    await expect(client.readResource(`x://${"y".repeat(40)}`)).rejects.toMatchObject({ code: -32002 });
  });
});

describe("pre-encoded pages", () => {
  it("write the text JSON.stringify would, and only for a plain answer", () => {
    const page = preEncode({ resources: [{ uri: "s://1", name: "é \u2028" }], nextCursor: "p2.s.0" });
    expect(Object.isFrozen(page)).toBe(true);
    for (const id of [7, 'a"b']) {
      const answer = { jsonrpc: "2.0" as const, id, result: page };
      expect(encodeMessage(answer)).toBe(JSON.stringify(answer));
    }
    // anything more on the message (or a batch) takes the ordinary way, whole
    const extra = { jsonrpc: "2.0", id: 1, result: page, more: 1 } as never;
    expect(encodeMessage(extra)).toBe(JSON.stringify(extra));
    const batch = [{ jsonrpc: "2.0" as const, id: 1, result: page }];
    expect(encodeMessage(batch)).toBe(JSON.stringify(batch));
  });

  it("write exactly what JSON.stringify writes, before and after a change, in two revisions", async () => {
    const reg = new ResourceRegistry(() => {}, { ...DEFAULT_SETTINGS, pageSize: 2 });
    for (let i = 1; i <= 3; i++)
      reg.add(`s://${i}`, {
        title: `T"${i}`,
        description: "é \u2028",
        icons: [{ src: "https://x/i.png" }],
        read: () => "",
      });
    for (const version of ["2024-11-05", "2025-11-25"] as const) {
      const ctx = { features: featuresOf(version), auth: undefined, personal() {}, cache() {} };
      const walk = async () => {
        const texts: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await listResources(reg, cursor === undefined ? {} : { cursor }, ctx as never);
          const answer = { jsonrpc: "2.0" as const, id: 1, result: page as never };
          // a copy has no kept text: JSON.stringify's own answer, to compare with
          expect(encodeMessage(answer)).toBe(encodeMessage({ ...answer, result: { ...page } }));
          texts.push(encodeMessage(answer));
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        return texts;
      };
      expect(await walk()).toHaveLength(2);
      const remove = reg.add("s://4", { read: () => "" });
      expect(await walk()).toHaveLength(2);
      remove();
    }
  });

  it("answer a page asked again with the text of the first answer", async () => {
    const s = new McpServer({ name: "t", version: "1", pageSize: 2 });
    for (let i = 1; i <= 5; i++) s.resource(`s://${i}`, { title: `T${i}`, read: () => "" });
    const client = await connect(s);
    const a = await client.listResources();
    const again = await client.listResources();
    expect(again).toEqual(a);
    expect(again).toEqual({
      resources: [
        { uri: "s://1", name: "s://1", title: "T1" },
        { uri: "s://2", name: "s://2", title: "T2" },
      ],
      nextCursor: "p2.s.1",
    });
  });
});
