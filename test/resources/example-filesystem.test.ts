import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const example = fileURLToPath(new URL("../../build/examples/filesystem.js", import.meta.url));
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let base: string;
let root: string;
let client: Client;
const url = (rel: string) => pathToFileURL(join(root, rel)).href;

beforeAll(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "picomcp-fs-")));
  root = join(base, "root dir");
  mkdirSync(join(root, "sub"), { recursive: true });
  writeFileSync(join(root, "notes.md"), "# Notes\n");
  writeFileSync(join(root, "sub", "data.json"), '{"a":1}');
  writeFileSync(join(root, "logo.png"), PNG);
  writeFileSync(join(base, "secret.txt"), "outside the root");
  symlinkSync(join(base, "secret.txt"), join(root, "escape.txt"));
  symlinkSync(base, join(root, "up"));
  symlinkSync(join(root, "notes.md"), join(root, "alias.md"));
  client = new Client({ name: "sdk", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [example, root] }));
});

afterAll(async () => {
  await client?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("examples/filesystem.ts through the SDK client over stdio", () => {
  it("lists every file that stays inside the root, with MIME types from extensions", async () => {
    expect((await client.listResources()).resources).toEqual([
      { uri: url("alias.md"), name: "alias.md", mimeType: "text/markdown" },
      { uri: url("logo.png"), name: "logo.png", mimeType: "image/png" },
      { uri: url("notes.md"), name: "notes.md", mimeType: "text/markdown" },
      { uri: url("sub/data.json"), name: "sub/data.json", mimeType: "application/json" },
    ]);
    expect(url("notes.md")).toContain("/root%20dir/notes.md");
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      { uriTemplate: "file:///{+path}", name: "file", description: `A file under ${root}` },
    ]);
  });

  it("reads text as text and binary as a base64 blob", async () => {
    expect(await client.readResource({ uri: url("notes.md") })).toEqual({
      contents: [{ uri: url("notes.md"), mimeType: "text/markdown", text: "# Notes\n" }],
    });
    expect((await client.readResource({ uri: url("logo.png") })).contents).toEqual([
      { uri: url("logo.png"), mimeType: "image/png", blob: Buffer.from(PNG).toString("base64") },
    ]);
  });

  it("refuses traversal, absolute paths, symlinks that leave the root, and directories", async () => {
    const refused = [
      `${pathToFileURL(root).href}/../secret.txt`,
      `${pathToFileURL(root).href}/sub/%2e%2e/%2e%2e/secret.txt`,
      "file:////etc/passwd",
      url("escape.txt"),
      url("up/secret.txt"),
      url("sub"),
      url("missing.md"),
      pathToFileURL(join(base, "secret.txt")).href,
    ];
    for (const uri of refused) {
      await expect(client.readResource({ uri }), uri).rejects.toMatchObject({ code: -32002 });
    }
  });

  it("serves the same files through list_resources and read_resource", async () => {
    const listed = await client.callTool({ name: "list_resources", arguments: {} });
    expect((listed.structuredContent as any).resources.map((r: any) => r.uri)).toHaveLength(4);
    expect(
      await client.callTool({ name: "read_resource", arguments: { uri: url("sub/data.json") } }),
    ).toEqual({
      content: [
        {
          type: "resource",
          resource: { uri: url("sub/data.json"), mimeType: "application/json", text: '{"a":1}' },
        },
      ],
    });
    const escaped = await client.callTool({ name: "read_resource", arguments: { uri: url("escape.txt") } });
    expect(escaped).toEqual({
      content: [{ type: "text", text: `Resource not found: ${url("escape.txt")}` }],
      isError: true,
    });
  });

  it("completes paths", async () => {
    const prefix = root.slice(1);
    const { completion } = await client.complete({
      ref: { type: "ref/resource", uri: "file:///{+path}" },
      argument: { name: "path", value: `${prefix}/sub/` },
    });
    expect(completion.values).toEqual([`${prefix}/sub/data.json`]);
  });

  it("pushes notifications/resources/updated when a subscribed file changes", async () => {
    const heard: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void heard.push(n.params.uri));
    await client.subscribeResource({ uri: url("notes.md") });
    writeFileSync(join(root, "notes.md"), "# Notes\nchanged\n");
    await expect.poll(() => heard, { timeout: 5000 }).toContain(url("notes.md"));
    expect((await client.readResource({ uri: url("notes.md") })).contents[0]).toMatchObject({
      text: "# Notes\nchanged\n",
    });
  });

  it("pushes notifications/resources/list_changed when a file appears or goes, and lists it", async () => {
    let changes = 0;
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changes++);
    writeFileSync(join(root, "sub", "new.txt"), "new");
    await expect.poll(() => changes, { timeout: 5000 }).toBeGreaterThan(0);
    const names = async () => (await client.listResources()).resources.map((r) => r.name);
    expect(await names()).toContain("sub/new.txt");
    const before = changes;
    rmSync(join(root, "sub", "new.txt"));
    await expect.poll(() => changes, { timeout: 5000 }).toBeGreaterThan(before);
    expect(await names()).not.toContain("sub/new.txt");
  });
});
