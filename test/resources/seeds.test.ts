// Every example of the Resources pages, as a new user would write it, on the wire with the official
// clients of both eras over HTTP: the SDK v1 client in a 2025-11-25 session and the SDK v2 client pinned
// to 2026-07-28. The pages' fetches go to a local stand-in of raw.githubusercontent.com.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeServer, serve } from "../../src/http/node.js";
import { type ErrorInfo, link, McpError, McpServer } from "../../src/index.js";

let web: Server;
let base: string;
let http: NodeServer;
const logged: [string, ErrorInfo][] = [];

/** The GIF of the pages' placeholder cover. */
const GIF = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

function seedServer() {
  const server = new McpServer({
    name: "seeds",
    version: "1.0.0",
    onError: (e, info) => void logged.push([(e as Error).message, info]),
  });
  const loadConfig = () => "theme=dark\nlanguage=en";
  const toHttp = (uri: string) => `${base}/${uri.slice("web://".length)}`;
  const db = { users: { find: async (id: string) => (id === "42" ? { id, name: "Ada" } : undefined) } };

  server.resource("config://app", {
    description: "The app configuration",
    read: () => loadConfig(),
  });
  // the lesson's resources/list and resources/read of a DB config
  server.resource("config://db", {
    name: "DB config",
    mimeType: "application/json",
    read: () => ({ host: "..." }),
  });
  server.resource("github://{owner}/{repo}/readme", {
    mimeType: "text/markdown",
    read: async ({ owner, repo }) => {
      const res = await fetch(`${base}/${owner}/${repo}/HEAD/README.md`);
      return res.text();
    },
  });
  server.resource("files://{+path}", { read: ({ path }) => `file ${path}` });
  server.resource("web://{+path}", {
    read: (_params, { uri, signal }) => fetch(toHttp(uri), { signal }).then((r) => r.text()),
  });
  server.resource("users://{id}", {
    read: async ({ id }) => {
      const user = await db.users.find(id);
      if (!user) throw new McpError(-32002, `Resource not found: users://${id}`);
      return user;
    },
  });
  server.resource("users://{user_id}/profile", {
    description: "A customer's profile.",
    read: ({ user_id }) => `User ${user_id}: 12 orders since 2021.`,
  });
  server.resource("docs://readme", {
    mimeType: "text/markdown",
    read: () => "# Bookshop\n\nSearch the catalog with the `search_books` tool.",
  });
  server.resource("stats://catalog", {
    mimeType: "application/json",
    read: () => ({ books: 1204, authors: 391 }),
  });
  server.resource("covers://placeholder", {
    mimeType: "image/gif",
    read: () => Uint8Array.from(atob(GIF), (c) => c.charCodeAt(0)),
  });
  server.resource("bundle://two", {
    read: () => [
      { uri: "bundle://two#a", text: "first" },
      { uri: "bundle://two#b", mimeType: "image/gif", blob: GIF },
    ],
  });
  server.resource("legacy://v1", {
    read: () => ({ contents: [{ uri: "legacy://v1", mimeType: "text/plain", text: "from SDK v1" }] }),
  });
  server.tool("q3_report", {
    run: async () => link("reports://2026-q3", "Q3 report", { mimeType: "application/pdf" }),
  });
  return server;
}

type Reader = {
  readResource(p: { uri: string }): Promise<{ contents: unknown[] }>;
  listResources(): Promise<{ resources: unknown[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: unknown[] }>;
  callTool(p: { name: string; arguments: object }): Promise<unknown>;
  close(): Promise<void>;
};

async function v1(url: URL): Promise<Reader> {
  const client = new V1Client({ name: "sdk-v1", version: "1.0.0" });
  await client.connect(new V1Transport(url));
  expect(client.getServerVersion()?.name).toBe("seeds");
  return client as unknown as Reader;
}

async function v2(url: URL): Promise<Reader> {
  const client = new V2Client(
    { name: "sdk-v2", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new V2Transport(url));
  expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  return client as unknown as Reader;
}

beforeAll(async () => {
  web = createServer((req, res) => {
    if (req.url === "/octo/cat/HEAD/README.md") res.end("# cat\n");
    else if (req.url === "/docs/intro") res.end("intro page");
    else res.writeHead(404).end("missing");
  });
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  http = await serve(seedServer(), { port: 0, hostname: "127.0.0.1" });
});

afterAll(async () => {
  await http.close();
  await new Promise((r) => web.close(r));
});

const eras = [
  ["SDK v1 client, 2025-11-25", v1, -32002],
  ["SDK v2 client, 2026-07-28", v2, -32602],
] as const;

describe.each(eras)("the Resources pages' examples: %s", (_, connect, notFoundCode) => {
  let c: Reader;
  beforeAll(async () => {
    c = await connect(new URL(http.url));
  });
  afterAll(() => c.close());
  const read = async (uri: string) => (await c.readResource({ uri })).contents;

  it("lists the statics and the templates as registered", async () => {
    const { resources } = await c.listResources();
    expect(resources).toEqual([
      { uri: "config://app", name: "config://app", description: "The app configuration" },
      { uri: "config://db", name: "DB config", mimeType: "application/json" },
      { uri: "docs://readme", name: "docs://readme", mimeType: "text/markdown" },
      { uri: "stats://catalog", name: "stats://catalog", mimeType: "application/json" },
      { uri: "covers://placeholder", name: "covers://placeholder", mimeType: "image/gif" },
      { uri: "bundle://two", name: "bundle://two" },
      { uri: "legacy://v1", name: "legacy://v1" },
    ]);
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      {
        uriTemplate: "github://{owner}/{repo}/readme",
        name: "github://{owner}/{repo}/readme",
        mimeType: "text/markdown",
      },
      { uriTemplate: "files://{+path}", name: "files://{+path}" },
      { uriTemplate: "web://{+path}", name: "web://{+path}" },
      { uriTemplate: "users://{id}", name: "users://{id}" },
      {
        uriTemplate: "users://{user_id}/profile",
        name: "users://{user_id}/profile",
        description: "A customer's profile.",
      },
    ]);
  });

  it("reads each example as its table says", async () => {
    expect(await read("config://app")).toEqual([
      { uri: "config://app", mimeType: "text/plain", text: "theme=dark\nlanguage=en" },
    ]);
    expect(await read("config://db")).toEqual([
      { uri: "config://db", mimeType: "application/json", text: '{"host":"..."}' },
    ]);
    expect(await read("github://octo/cat/readme")).toEqual([
      { uri: "github://octo/cat/readme", mimeType: "text/markdown", text: "# cat\n" },
    ]);
    expect(await read("files://src/index.ts")).toEqual([
      { uri: "files://src/index.ts", mimeType: "text/plain", text: "file src/index.ts" },
    ]);
    expect(await read("web://docs/intro")).toEqual([
      { uri: "web://docs/intro", mimeType: "text/plain", text: "intro page" },
    ]);
    expect(await read("users://42")).toEqual([
      { uri: "users://42", mimeType: "application/json", text: '{"id":"42","name":"Ada"}' },
    ]);
    expect(await read("users://42/profile")).toEqual([
      { uri: "users://42/profile", mimeType: "text/plain", text: "User 42: 12 orders since 2021." },
    ]);
    expect(await read("users://ada/profile")).toEqual([
      { uri: "users://ada/profile", mimeType: "text/plain", text: "User ada: 12 orders since 2021." },
    ]);
    expect(await read("docs://readme")).toEqual([
      {
        uri: "docs://readme",
        mimeType: "text/markdown",
        text: "# Bookshop\n\nSearch the catalog with the `search_books` tool.",
      },
    ]);
    expect(await read("stats://catalog")).toEqual([
      { uri: "stats://catalog", mimeType: "application/json", text: '{"books":1204,"authors":391}' },
    ]);
    expect(await read("covers://placeholder")).toEqual([
      { uri: "covers://placeholder", mimeType: "image/gif", blob: GIF },
    ]);
    expect(await read("bundle://two")).toEqual([
      { uri: "bundle://two#a", text: "first" },
      { uri: "bundle://two#b", mimeType: "image/gif", blob: GIF },
    ]);
    expect(await read("legacy://v1")).toEqual([
      { uri: "legacy://v1", mimeType: "text/plain", text: "from SDK v1" },
    ]);
  });

  it("answers not found for no match and for the read's own McpError, in the era's code", async () => {
    await expect(read("nothing://here")).rejects.toMatchObject({
      code: notFoundCode,
      message: expect.stringContaining("Resource not found: nothing://here"),
    });
    await expect(read("users://7")).rejects.toMatchObject({
      code: notFoundCode,
      message: expect.stringContaining("Resource not found: users://7"),
    });
  });

  it("links to a resource from a tool", async () => {
    expect(await c.callTool({ name: "q3_report", arguments: {} })).toMatchObject({
      content: [
        { type: "resource_link", uri: "reports://2026-q3", name: "Q3 report", mimeType: "application/pdf" },
      ],
    });
  });
});
