// examples/filesystem.ts, the lesson's filesystem server over one allowed directory, through the official
// clients over stdio: SDK v1 in a 2025-11-25 session (resources/subscribe) and SDK v2 at 2026-07-28
// (subscriptions/listen). Both list the same files, read them, are refused what lies outside, and hear
// the same changes.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
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
let v1: Client;
let v2: ClientV2;
const url = (rel: string) => pathToFileURL(join(root, rel)).href;

beforeAll(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "picomcp-fs-")));
  root = join(base, "root dir");
  mkdirSync(join(root, "sub"), { recursive: true });
  mkdirSync(join(root, "node_modules"));
  writeFileSync(join(root, "notes.md"), "# Notes\n");
  writeFileSync(join(root, "sub", "data.json"), '{"a":1}');
  writeFileSync(join(root, "logo.png"), PNG);
  writeFileSync(join(root, ".env"), "TOKEN=hidden");
  writeFileSync(join(root, "node_modules", "dep.js"), "dep");
  writeFileSync(join(base, "secret.txt"), "outside the root");
  symlinkSync(join(base, "secret.txt"), join(root, "escape.txt"));
  symlinkSync(base, join(root, "up"));
  symlinkSync(join(root, "notes.md"), join(root, "alias.md"));
  v1 = new Client({ name: "sdk-v1", version: "1.0.0" });
  await v1.connect(new StdioClientTransport({ command: process.execPath, args: [example, root] }));
  v2 = new ClientV2(
    { name: "sdk-v2", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await v2.connect(new StdioV2({ command: process.execPath, args: [example, root] }));
});

afterAll(async () => {
  await v1?.close();
  await v2?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("examples/filesystem.ts through the official clients over stdio", () => {
  it("speaks 2025-11-25 with SDK v1 and 2026-07-28 with SDK v2", () => {
    expect(v2.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  });

  it("lists every file inside the root, with MIME types from names: no symlink, no dotfile, no excluded folder", async () => {
    const expected = [
      { uri: url("logo.png"), name: "logo.png", mimeType: "image/png" },
      { uri: url("notes.md"), name: "notes.md", mimeType: "text/markdown" },
      { uri: url("sub/data.json"), name: "sub/data.json", mimeType: "application/json" },
    ];
    expect((await v1.listResources()).resources).toEqual(expected);
    expect((await v2.listResources()).resources).toEqual(expected);
    expect(url("notes.md")).toContain("/root%20dir/notes.md");
    const template = {
      uriTemplate: `${pathToFileURL(root).href}/{+path}`,
      name: basename(root),
      description: `Files under ${root}`,
    };
    expect((await v1.listResourceTemplates()).resourceTemplates).toEqual([template]);
    expect((await v2.listResourceTemplates()).resourceTemplates).toEqual([template]);
  });

  it("reads text as text and binary as a base64 blob, in both eras", async () => {
    for (const client of [v1, v2] as Client[]) {
      expect((await client.readResource({ uri: url("notes.md") })).contents).toEqual([
        { uri: url("notes.md"), mimeType: "text/markdown", text: "# Notes\n" },
      ]);
      expect((await client.readResource({ uri: url("logo.png") })).contents).toEqual([
        { uri: url("logo.png"), mimeType: "image/png", blob: Buffer.from(PNG).toString("base64") },
      ]);
    }
  });

  it("refuses traversal, absolute paths, symlinks (in or out), dotfiles and directories", async () => {
    const refused = [
      `${pathToFileURL(root).href}/../secret.txt`,
      `${pathToFileURL(root).href}/sub/%2e%2e/%2e%2e/secret.txt`,
      `${pathToFileURL(root).href}/sub%5C..%5C..%5Csecret.txt`,
      `${pathToFileURL(root).href}/notes.md%00.png`,
      "file:////etc/passwd",
      url("escape.txt"),
      url("up/secret.txt"),
      url("alias.md"),
      url(".env"),
      url("node_modules/dep.js"),
      url("sub"),
      url("missing.md"),
      pathToFileURL(join(base, "secret.txt")).href,
    ];
    for (const uri of refused) {
      // not found: -32002 in a 2025 session, -32602 at 2026-07-28
      await expect(v1.readResource({ uri }), uri).rejects.toMatchObject({ code: -32002 });
      await expect(v2.readResource({ uri }), uri).rejects.toMatchObject({ code: -32602 });
    }
  });

  it("serves the same files through list_resources and read_resource", async () => {
    const listed = await v1.callTool({ name: "list_resources", arguments: {} });
    expect((listed.structuredContent as any).resources.map((r: any) => r.uri)).toHaveLength(3);
    expect(await v1.callTool({ name: "read_resource", arguments: { uri: url("sub/data.json") } })).toEqual({
      content: [
        {
          type: "resource",
          resource: { uri: url("sub/data.json"), mimeType: "application/json", text: '{"a":1}' },
        },
      ],
    });
    const escaped = await v1.callTool({ name: "read_resource", arguments: { uri: url("escape.txt") } });
    expect(escaped).toEqual({
      content: [{ type: "text", text: `Resource not found: ${url("escape.txt")}` }],
      isError: true,
    });
  });

  it("completes paths below the root", async () => {
    const { completion } = await v1.complete({
      ref: { type: "ref/resource", uri: `${pathToFileURL(root).href}/{+path}` },
      argument: { name: "path", value: "sub/" },
    });
    expect(completion.values).toEqual(["sub/data.json"]);
  });

  it("pushes notifications/resources/updated to a subscriber in each era when a file changes", async () => {
    const heard: string[] = [];
    v1.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n) => void heard.push(`v1 ${n.params.uri}`),
    );
    v2.setNotificationHandler(
      "notifications/resources/updated",
      (n) => void heard.push(`v2 ${n.params.uri}`),
    );
    await v1.subscribeResource({ uri: url("notes.md") });
    const listen = await v2.listen({ resourceSubscriptions: [url("notes.md")] });
    try {
      writeFileSync(join(root, "notes.md"), "# Notes\nchanged\n");
      await expect.poll(() => heard).toContain(`v1 ${url("notes.md")}`);
      await expect.poll(() => heard).toContain(`v2 ${url("notes.md")}`);
    } finally {
      await listen.close();
    }
    expect((await v2.readResource({ uri: url("notes.md") })).contents[0]).toMatchObject({
      text: "# Notes\nchanged\n",
    });
  });

  it("pushes notifications/resources/list_changed in each era when a file appears or goes", async () => {
    let changes = { v1: 0, v2: 0 };
    v1.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changes.v1++);
    v2.setNotificationHandler("notifications/resources/list_changed", () => void changes.v2++);
    const listen = await v2.listen({ resourcesListChanged: true });
    try {
      writeFileSync(join(root, "sub", "new.txt"), "new");
      await expect.poll(() => changes).toEqual({ v1: 1, v2: 1 });
      const names = async (c: Client) => (await c.listResources()).resources.map((r) => r.name);
      expect(await names(v1)).toContain("sub/new.txt");
      expect(await names(v2 as unknown as Client)).toContain("sub/new.txt");
      changes = { v1: 0, v2: 0 };
      rmSync(join(root, "sub", "new.txt"));
      await expect.poll(() => changes).toEqual({ v1: 1, v2: 1 });
      expect(await names(v1)).not.toContain("sub/new.txt");
    } finally {
      await listen.close();
    }
  });
});
