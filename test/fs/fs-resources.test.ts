// picomcp/fs as a user sees it on the wire: a directory listed page by page, each file read as text or as
// a blob by its bytes, MIME types from names, the options (hidden, include, exclude, maxBytes, prefix),
// and the watcher's notifications to subscribers in both eras, with each way of watching.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDirectoryResources } from "../../src/fs/directory.js";
import { type DirectoryOptions, directoryResources } from "../../src/fs/index.js";
import { McpServer } from "../../src/index.js";
import { encodeMessage } from "../../src/jsonrpc.js";
import type { JsonRpcMessage } from "../../src/types.js";
import { rawPeer } from "../helpers.js";
import { meta } from "../modern-helpers.js";

let base: string;
let root: string;
const cleanups: (() => void)[] = [];

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "picomcp-fs-")));
  root = join(base, "docs root");
  mkdirSync(join(root, "sub", "deeper"), { recursive: true });
  mkdirSync(join(root, ".git"));
  mkdirSync(join(root, "node_modules"));
  writeFileSync(join(root, "notes.md"), "# Notes\n");
  writeFileSync(join(root, "data.json"), '{"a":1}');
  writeFileSync(join(root, "logo.png"), Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  writeFileSync(join(root, "nul.txt"), "a\0b");
  writeFileSync(join(root, "latin1.txt"), Uint8Array.from([0x63, 0x61, 0x66, 0xe9]));
  writeFileSync(join(root, "bom.csv"), "\uFEFFa,b\n");
  writeFileSync(join(root, "README"), "plain");
  writeFileSync(join(root, "blob"), Uint8Array.from([0xff, 0xfe, 0x00]));
  writeFileSync(join(root, "café é.txt"), "accents");
  writeFileSync(join(root, "sub", "a.ts"), "export {};");
  writeFileSync(join(root, "sub", "deeper", "z.yaml"), "z: 1");
  writeFileSync(join(root, ".env"), "TOKEN=1");
  writeFileSync(join(root, ".git", "config"), "[core]");
  writeFileSync(join(root, "node_modules", "x.js"), "x");
});

afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  rmSync(base, { recursive: true, force: true });
});

function serve(options: DirectoryOptions = {}, pageSize = 100) {
  const server = new McpServer({ name: "fs", version: "1.0.0", pageSize });
  const files = directoryResources(server, root, { watch: false, ...options });
  cleanups.push(() => files.remove());
  const peer = rawPeer(server);
  const initialized = peer.initialize();
  let id = 1;
  const send = async (method: string, params: object = {}) => {
    await initialized;
    return peer.send({ jsonrpc: "2.0", id: id++, method, params });
  };
  const listAll = async () => {
    const pages: object[][] = [];
    let cursor: string | undefined;
    do {
      const { result } = await send("resources/list", cursor === undefined ? {} : { cursor });
      pages.push(result.resources);
      cursor = result.nextCursor;
    } while (cursor !== undefined);
    return pages;
  };
  return { server, files, peer, send, listAll };
}

const prefix = () => `${pathToFileURL(root).href}/`;

describe("picomcp/fs: a directory as resources", () => {
  it("lists every file below the root in path order, page by page, with MIME types from names", async () => {
    const { listAll, files } = serve({}, 4);
    const pages = await listAll();
    expect(pages.map((p) => p.length)).toEqual([4, 4, 4]);
    expect(pages.flat()).toEqual([
      { uri: `${prefix()}README`, name: "README" },
      { uri: `${prefix()}blob`, name: "blob" },
      { uri: `${prefix()}bom.csv`, name: "bom.csv", mimeType: "text/csv" },
      { uri: `${prefix()}caf%C3%A9%20%C3%A9.txt`, name: "café é.txt", mimeType: "text/plain" },
      { uri: `${prefix()}data.json`, name: "data.json", mimeType: "application/json" },
      { uri: `${prefix()}latin1.txt`, name: "latin1.txt", mimeType: "text/plain" },
      { uri: `${prefix()}logo.png`, name: "logo.png", mimeType: "image/png" },
      { uri: `${prefix()}node_modules/x.js`, name: "node_modules/x.js", mimeType: "text/javascript" },
      { uri: `${prefix()}notes.md`, name: "notes.md", mimeType: "text/markdown" },
      { uri: `${prefix()}nul.txt`, name: "nul.txt", mimeType: "text/plain" },
      { uri: `${prefix()}sub/a.ts`, name: "sub/a.ts", mimeType: "text/x-typescript" },
      { uri: `${prefix()}sub/deeper/z.yaml`, name: "sub/deeper/z.yaml", mimeType: "application/yaml" },
    ]);
    expect(prefix()).toContain("/docs%20root/");
    expect(files.template).toBe(`${prefix()}{+path}`);
    expect(files.uriOf("sub/a.ts")).toBe(`${prefix()}sub/a.ts`);
  });

  it("names the template in resources/templates/list, and completes paths", async () => {
    const { send } = serve({ title: "Docs" });
    expect((await send("resources/templates/list")).result.resourceTemplates).toEqual([
      {
        uriTemplate: `${prefix()}{+path}`,
        name: "docs root",
        title: "Docs",
        description: `Files under ${root}`,
      },
    ]);
    const { result } = await send("completion/complete", {
      ref: { type: "ref/resource", uri: `${prefix()}{+path}` },
      argument: { name: "path", value: "sub/" },
    });
    expect(result.completion).toEqual({
      values: ["sub/a.ts", "sub/deeper/z.yaml"],
      total: 2,
      hasMore: false,
    });
  });

  it("reads valid UTF-8 without a NUL as text, anything else as a base64 blob", async () => {
    const { send } = serve();
    const read = async (path: string) =>
      (await send("resources/read", { uri: prefix() + path })).result.contents;
    expect(await read("notes.md")).toEqual([
      { uri: `${prefix()}notes.md`, mimeType: "text/markdown", text: "# Notes\n" },
    ]);
    expect(await read("logo.png")).toEqual([
      { uri: `${prefix()}logo.png`, mimeType: "image/png", blob: "iVBORw0KGgo=" },
    ]);
    expect(await read("nul.txt")).toEqual([
      { uri: `${prefix()}nul.txt`, mimeType: "text/plain", blob: "YQBi" },
    ]);
    expect(await read("latin1.txt")).toEqual([
      { uri: `${prefix()}latin1.txt`, mimeType: "text/plain", blob: "Y2Fm6Q==" },
    ]);
    // the byte-order mark is kept: the text is the file's bytes, decoded
    expect(await read("bom.csv")).toEqual([
      { uri: `${prefix()}bom.csv`, mimeType: "text/csv", text: "\uFEFFa,b\n" },
    ]);
    // no extension: text/plain when it is text, application/octet-stream when not
    expect(await read("README")).toEqual([
      { uri: `${prefix()}README`, mimeType: "text/plain", text: "plain" },
    ]);
    expect(await read("blob")).toEqual([
      { uri: `${prefix()}blob`, mimeType: "application/octet-stream", blob: "//4A" },
    ]);
    expect(await read("caf%C3%A9%20%C3%A9.txt")).toEqual([
      { uri: `${prefix()}caf%C3%A9%20%C3%A9.txt`, mimeType: "text/plain", text: "accents" },
    ]);
  });

  it("names a file whose name holds URI delimiters by its percent-encoded name, and reads it back", async () => {
    writeFileSync(join(root, "100% #1?&=+;.txt"), "odd");
    const { send, listAll, files } = serve();
    const uri = `${prefix()}100%25%20%231%3F%26%3D%2B%3B.txt`;
    expect(files.uriOf("100% #1?&=+;.txt")).toBe(uri);
    expect((await listAll()).flat()).toContainEqual({
      uri,
      name: "100% #1?&=+;.txt",
      mimeType: "text/plain",
    });
    expect((await send("resources/read", { uri })).result.contents).toEqual([
      { uri, mimeType: "text/plain", text: "odd" },
    ]);
  });

  it("takes MIME types over the built-in table, with or without the dot", async () => {
    const { send, listAll } = serve({ mimeTypes: { ".md": "text/x-notes", TS: "application/typescript" } });
    expect((await listAll()).flat()).toContainEqual({
      uri: `${prefix()}notes.md`,
      name: "notes.md",
      mimeType: "text/x-notes",
    });
    expect((await send("resources/read", { uri: `${prefix()}sub/a.ts` })).result.contents[0].mimeType).toBe(
      "application/typescript",
    );
  });

  it("serves dotfiles only with hidden: true", async () => {
    const hiddenOff = serve();
    expect((await hiddenOff.send("resources/read", { uri: `${prefix()}.env` })).error.code).toBe(-32002);
    expect((await hiddenOff.send("resources/read", { uri: `${prefix()}.git/config` })).error.code).toBe(
      -32002,
    );
    const hiddenOn = serve({ hidden: true, exclude: /^node_modules$/ });
    const names = (await hiddenOn.listAll()).flat().map((r: any) => r.name);
    expect(names).toContain(".env");
    expect(names).toContain(".git/config");
    expect((await hiddenOn.send("resources/read", { uri: `${prefix()}.env` })).result.contents[0].text).toBe(
      "TOKEN=1",
    );
  });

  it("include and exclude: a file must pass include, and neither it nor a directory above it exclude", async () => {
    const { send, listAll } = serve({ include: /\.(md|ts|yaml)$/, exclude: (p) => p === "sub/deeper" });
    expect((await listAll()).flat().map((r: any) => r.name)).toEqual(["notes.md", "sub/a.ts"]);
    for (const path of ["data.json", "sub/deeper/z.yaml"])
      expect((await send("resources/read", { uri: prefix() + path })).error.code, path).toBe(-32002);
    // a global pattern gives the same answer each time (its lastIndex is not carried over)
    const g = serve({ exclude: /node_modules/g });
    for (let i = 0; i < 3; i++)
      expect((await g.send("resources/read", { uri: `${prefix()}node_modules/x.js` })).error.code).toBe(
        -32002,
      );
  });

  it("refuses a file over maxBytes with -32602 naming the URI, and reads one at the limit", async () => {
    writeFileSync(join(root, "big.txt"), "x".repeat(11));
    writeFileSync(join(root, "edge.txt"), "x".repeat(10));
    const { send } = serve({ maxBytes: 10 });
    expect(await send("resources/read", { uri: `${prefix()}big.txt` })).toEqual({
      jsonrpc: "2.0",
      id: expect.any(Number),
      error: {
        code: -32602,
        message: `${prefix()}big.txt is larger than 10 bytes, the most read at once`,
        data: { uri: `${prefix()}big.txt`, maxBytes: 10 },
      },
    });
    expect((await send("resources/read", { uri: `${prefix()}edge.txt` })).result.contents[0].text).toBe(
      "x".repeat(10),
    );
  });

  it("serves under a prefix of your own; maxListed bounds the list, not what can be read", async () => {
    const { send, listAll, files } = serve({ prefix: "docs://", maxListed: 2 });
    expect((await listAll()).flat()).toEqual([
      { uri: "docs://README", name: "README" },
      { uri: "docs://blob", name: "blob" },
    ]);
    expect(files.template).toBe("docs://{+path}");
    expect(await send("resources/read", { uri: "docs://sub/deeper/z.yaml" })).toMatchObject({
      result: { contents: [{ uri: "docs://sub/deeper/z.yaml", mimeType: "application/yaml", text: "z: 1" }] },
    });
  });

  it("refuses at registration a root that is missing, a file, or the root of a file system", () => {
    const server = new McpServer({ name: "fs", version: "1.0.0" });
    expect(() => directoryResources(server, join(base, "missing"))).toThrow(/cannot be served: ENOENT/);
    expect(() => directoryResources(server, join(root, "notes.md"))).toThrow(/is not a directory/);
    expect(() => directoryResources(server, "/")).toThrow(
      '"/" is the root of a file system; serve one directory, not everything',
    );
  });

  it("remove() takes the template away", async () => {
    const { files, send } = serve();
    files.remove();
    expect((await send("resources/read", { uri: `${prefix()}notes.md` })).error.code).toBe(-32002);
  });
});

const SUB = "io.modelcontextprotocol/subscriptionId";

describe.each([
  { mode: "one watcher per directory", recursive: false },
  { mode: "one recursive watcher", recursive: true },
])("picomcp/fs: changes on disk, $mode", ({ recursive }) => {
  /** A server watching the root, a 2025-11-25 session and a 2026-07-28 listen on it. */
  async function watched() {
    const server = new McpServer({ name: "fs", version: "1.0.0", onError: () => {} });
    const files = createDirectoryResources(server, root, { debounce: 10 }, { recursive });
    cleanups.push(() => files.remove());
    await files.ready;
    const session = rawPeer(server);
    await session.initialize();
    const uri = files.uriOf("sub/deeper/z.yaml");
    expect(
      await session.send({ jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri } }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {},
    });
    const stream: any[] = [];
    const abort = new AbortController();
    cleanups.push(() => abort.abort());
    void server.handle(
      {
        jsonrpc: "2.0",
        id: "L",
        method: "subscriptions/listen",
        params: {
          _meta: meta(),
          notifications: { resourcesListChanged: true, resourceSubscriptions: [uri] },
        },
      },
      server.connect({ send: () => {} }),
      { send: (m: JsonRpcMessage) => void stream.push(JSON.parse(encodeMessage(m))), signal: abort.signal },
    );
    await expect.poll(() => stream.length).toBe(1);
    return { server, files, session, stream, uri };
  }

  it("an edited file: notifications/resources/updated to its subscriber in each era", async () => {
    const { session, stream, uri } = await watched();
    writeFileSync(join(root, "sub", "deeper", "z.yaml"), "z: 2");
    const updated = { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } };
    await expect.poll(() => session.sent).toContainEqual(updated);
    await expect.poll(() => stream).toContainEqual({ ...updated, params: { uri, _meta: { [SUB]: "L" } } });
    // an edit changes no name: nothing says the list changed
    expect(session.sent.filter((m) => m.method === "notifications/resources/list_changed")).toEqual([]);
  });

  it("a file added, then deleted: list_changed in each era, and the list says so", async () => {
    const { session, stream, files } = await watched();
    const listChanged = () =>
      session.sent.filter((m) => m.method === "notifications/resources/list_changed").length;
    const heard = () => stream.filter((m) => m.method === "notifications/resources/list_changed").length;
    writeFileSync(join(root, "sub", "deeper", "new.txt"), "new");
    await expect.poll(listChanged).toBe(1);
    await expect.poll(heard).toBe(1);
    const listed = async () =>
      (
        (await session.send({ jsonrpc: "2.0", id: 9, method: "resources/list", params: {} })).result
          .resources as any[]
      ).map((r) => r.uri);
    expect(await listed()).toContain(files.uriOf("sub/deeper/new.txt"));
    unlinkSync(join(root, "sub", "deeper", "new.txt"));
    await expect.poll(listChanged).toBe(2);
    await expect.poll(heard).toBe(2);
    expect(await listed()).not.toContain(files.uriOf("sub/deeper/new.txt"));
  });

  it("a new directory is watched too: a file written in it is announced", async () => {
    const { session, files } = await watched();
    mkdirSync(join(root, "fresh"));
    writeFileSync(join(root, "fresh", "one.txt"), "1");
    const listed = async () =>
      (
        (await session.send({ jsonrpc: "2.0", id: 9, method: "resources/list", params: {} })).result
          .resources as any[]
      ).map((r) => r.uri);
    await expect.poll(listed).toContain(files.uriOf("fresh/one.txt"));
    const uri = files.uriOf("fresh/one.txt");
    await session.send({ jsonrpc: "2.0", id: 10, method: "resources/subscribe", params: { uri } });
    writeFileSync(join(root, "fresh", "one.txt"), "2");
    await expect
      .poll(() => session.sent)
      .toContainEqual({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } });
  });

  it("a dotfile written, or a name that is never served: no notification", async () => {
    const { session, uri } = await watched();
    writeFileSync(join(root, ".env"), "TOKEN=2");
    writeFileSync(join(root, "back\\slash.txt"), "x");
    // then a change that is announced: the ones before it were in the same window or an earlier one
    writeFileSync(join(root, "sub", "deeper", "z.yaml"), "z: 3");
    await expect
      .poll(() => session.sent)
      .toContainEqual({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } });
    expect(session.sent.filter((m) => m.params?.uri !== uri)).toEqual([]);
  });
});
