import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { rawPeer } from "../helpers.js";
import { modernPeer, SERVER_META } from "../modern-helpers.js";

const SKILLS = "io.modelcontextprotocol/skills";
const SKILL_MD =
  '---\nlicense: "MIT"\nname: "code-review"\ndescription: "Reviews a diff: \\"carefully\\""\n---\n\n# Steps\n';
const CHECKLIST = "- tests\n";
const digest = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

function server(options: object = {}) {
  const s = new McpServer({ name: "t", version: "1.0.0", ...options });
  const reg = s.skill("code-review", {
    description: 'Reviews a diff: "carefully"',
    instructions: "# Steps\n",
    frontmatter: { license: "MIT" },
    files: { "references/checklist.md": CHECKLIST },
  });
  return { s, reg };
}

const ENTRY = {
  uri: "skill://code-review/SKILL.md",
  frontmatter: { license: "MIT", name: "code-review", description: 'Reviews a diff: "carefully"' },
  resources: [
    { uri: "skill://code-review/SKILL.md", digest: digest(SKILL_MD), size: Buffer.byteLength(SKILL_MD) },
    {
      uri: "skill://code-review/references/checklist.md",
      digest: digest(CHECKLIST),
      size: Buffer.byteLength(CHECKLIST),
    },
  ],
};

describe("skills (io.modelcontextprotocol/skills)", () => {
  it("declares the extension (and resources) in both eras while a skill is registered", async () => {
    const { s, reg } = server();
    const p = modernPeer(s);
    const caps = (await p.request("server/discover")).answer.result.capabilities;
    expect(caps.extensions).toEqual({ [SKILLS]: { directoryRead: true } });
    expect(caps.resources).toEqual({ subscribe: true, listChanged: true });
    expect((await rawPeer(s).initialize()).result.capabilities.extensions).toEqual({
      [SKILLS]: { directoryRead: true },
    });
    reg.remove();
    const after = (await p.request("server/discover")).answer.result.capabilities;
    expect(after.extensions).toBeUndefined();
    expect((await p.request("skills/list")).answer.error.code).toBe(-32601);
  });

  it("skills/list and skills/get give the entry with every file's digest and size, and caching hints", async () => {
    const p = modernPeer(server().s);
    expect((await p.request("skills/list")).answer.result).toEqual({
      resultType: "complete",
      skills: [ENTRY],
      ttlMs: 0,
      cacheScope: "private",
      _meta: SERVER_META,
    });
    expect((await p.request("skills/get", { uri: ENTRY.uri })).answer.result).toEqual({
      resultType: "complete",
      skill: ENTRY,
      ttlMs: 0,
      cacheScope: "private",
      _meta: SERVER_META,
    });
    const unknown = "skill://nope/SKILL.md";
    expect((await p.request("skills/get", { uri: unknown })).answer.error).toEqual({
      code: -32602,
      message: `Unknown skill: ${unknown}`,
      data: { uri: unknown },
    });
    expect((await p.request("skills/get", {})).answer.error.code).toBe(-32602);
  });

  it("serves SKILL.md and the files as resources, the manifest as text/markdown named from its frontmatter", async () => {
    const p = modernPeer(server().s);
    expect((await p.request("resources/list")).answer.result.resources).toEqual([
      {
        uri: "skill://code-review/SKILL.md",
        name: "code-review",
        description: 'Reviews a diff: "carefully"',
        mimeType: "text/markdown",
      },
      {
        uri: "skill://code-review/references/checklist.md",
        name: "references/checklist.md",
        mimeType: "text/markdown",
      },
    ]);
    expect((await p.request("resources/read", { uri: ENTRY.uri })).answer.result.contents).toEqual([
      { uri: ENTRY.uri, mimeType: "text/markdown", text: SKILL_MD },
    ]);
  });

  it("reads a skill's folders: direct children, subfolders as inode/directory, anything else -32602", async () => {
    const p = modernPeer(server().s);
    const read = async (uri: string) => (await p.request("resources/directory/read", { uri })).answer;
    expect((await read("skill://code-review")).result).toEqual({
      resultType: "complete",
      resources: [
        { uri: "skill://code-review/SKILL.md", name: "SKILL.md", mimeType: "text/markdown" },
        { uri: "skill://code-review/references", name: "references", mimeType: "inode/directory" },
      ],
      _meta: SERVER_META,
    });
    expect((await read("skill://code-review/references/")).result.resources).toEqual([
      {
        uri: "skill://code-review/references/checklist.md",
        name: "checklist.md",
        mimeType: "text/markdown",
      },
    ]);
    for (const uri of [
      "skill://code-review/SKILL.md",
      "skill://nope",
      "skill://code-review/refs",
      "file:///x",
    ])
      expect((await read(uri)).error).toEqual({
        code: -32602,
        message: `Not a directory: ${uri}`,
        data: { uri },
      });
  });

  it("pages skills/list with whole entries", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", pageSize: 1 });
    s.skill("a-one", { description: "A", instructions: "" });
    s.skill("b-two", { description: "B", instructions: "" });
    const legacy = rawPeer(s);
    await legacy.initialize();
    const first = await legacy.send({ jsonrpc: "2.0", id: 1, method: "skills/list", params: {} });
    expect(first.result.skills.map((e: { uri: string }) => e.uri)).toEqual(["skill://a-one/SKILL.md"]);
    const second = await legacy.send({
      jsonrpc: "2.0",
      id: 2,
      method: "skills/list",
      params: { cursor: first.result.nextCursor },
    });
    expect(second.result).toEqual({
      skills: [
        {
          uri: "skill://b-two/SKILL.md",
          frontmatter: { name: "b-two", description: "B" },
          resources: [expect.objectContaining({ uri: "skill://b-two/SKILL.md" })],
        },
      ],
    });
  });

  it("refuses bad names, paths and duplicates at registration", () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    for (const bad of ["Code", "a--b", "-a", "a".repeat(65), ""])
      expect(() => s.skill(bad, { description: "d", instructions: "" })).toThrow(/Invalid skill name/);
    for (const path of ["../x.md", "/abs.md", "a//b.md", "SKILL.md", "a/./b"])
      expect(() => s.skill("ok", { description: "d", instructions: "", files: { [path]: "" } })).toThrow(
        /invalid file path/,
      );
    expect(() => s.skill("ok", { description: "", instructions: "" })).toThrow(
      'Skill "ok" needs a description',
    );
    s.skill("ok", { description: "d", instructions: "" });
    expect(() => s.skill("ok", { description: "d", instructions: "" })).toThrow(
      'Skill "ok" is already registered',
    );
  });
});

describe("a skill whose file URI is taken", () => {
  it("is not registered at all", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    s.resource("skill://dup/SKILL.md", { read: () => "mine" });
    expect(() =>
      s.skill("dup", { description: "d", instructions: "", files: { "notes.md": "x" } }),
    ).toThrow();
    const p = modernPeer(s);
    expect((await p.request("skills/list")).answer.error.code).toBe(-32601);
    expect(
      (await p.request("resources/list")).answer.result.resources.map((r: { uri: string }) => r.uri),
    ).toEqual(["skill://dup/SKILL.md"]);
  });
});

describe("a 2025-11-25 session initialized before any skill", () => {
  it("gets -32601 for skills/list, as it was not told of skills; a later session is served", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    const before = rawPeer(s);
    expect((await before.initialize("2025-11-25")).result.capabilities.extensions).toBeUndefined();
    s.skill("a-one", { description: "A", instructions: "" });
    const after = rawPeer(s);
    expect((await after.initialize("2025-11-25")).result.capabilities.extensions).toEqual({
      [SKILLS]: { directoryRead: true },
    });
    const list = { jsonrpc: "2.0", id: 1, method: "skills/list", params: {} };
    expect(await before.send(list)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32601, message: "Method not found: skills/list" },
    });
    expect((await after.send(list)).result.skills).toHaveLength(1);
  });
});
