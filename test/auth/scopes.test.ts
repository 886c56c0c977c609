// Per-primitive scopes: lists show what the caller may use, and a call without the scopes is refused.
import { describe, expect, it } from "vitest";
import type { AuthInfo } from "../../src/connection.js";
import { McpServer } from "../../src/index.js";
import { visibleTo } from "../../src/registry.js";
import type { JsonRpcMessage } from "../../src/types.js";

function scopedServer() {
  const server = new McpServer({ name: "scoped", version: "1.0.0", onError: () => {} });
  server.tool("echo", { run: () => "echo" });
  server.tool("write_note", { scopes: ["notes:write"], run: () => "written" });
  server.prompt("audit", {
    scopes: ["admin"],
    args: [{ name: "who" }],
    complete: { who: () => ["alice"] },
    get: () => "audit",
  });
  server.resource("note://public", { read: () => "public" });
  server.resource("note://private", { scopes: ["notes:read"], read: () => "private" });
  server.resource("files://{name}", {
    scopes: ["files:read"],
    list: () => [{ uri: "files://a", name: "a" }],
    complete: { name: () => ["a"] },
    read: ({ name }) => `file ${name}`,
  });
  return server;
}

/** A peer whose connection carries `auth` (or none), already initialized. */
async function peer(auth?: AuthInfo) {
  const server = scopedServer();
  const connection = server.connect({ send: (_m: JsonRpcMessage) => {}, ...(auth ? { auth } : {}) });
  let id = 0;
  const send = async (method: string, params: object = {}) =>
    JSON.parse(JSON.stringify(await server.handle({ jsonrpc: "2.0", id: ++id, method, params }, connection)));
  await send("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  });
  return send;
}

const names = (list: { [k: string]: unknown }[]) => list.map((x) => x.name ?? x.uri ?? x.uriTemplate);

describe("per-primitive scopes", () => {
  it("lists only what a caller without credentials may use", async () => {
    const send = await peer();
    expect(names((await send("tools/list")).result.tools)).toEqual(["echo"]);
    expect((await send("prompts/list")).result.prompts).toEqual([]);
    expect(names((await send("resources/list")).result.resources)).toEqual(["note://public"]);
    expect((await send("resources/templates/list")).result.resourceTemplates).toEqual([]);
  });

  it("lists everything to a caller holding every scope", async () => {
    const send = await peer({ scopes: ["notes:write", "notes:read", "files:read", "admin"] });
    expect(names((await send("tools/list")).result.tools)).toEqual(["echo", "write_note"]);
    expect(names((await send("prompts/list")).result.prompts)).toEqual(["audit"]);
    expect(names((await send("resources/list")).result.resources)).toEqual([
      "note://public",
      "note://private",
      "a",
    ]);
    expect(names((await send("resources/templates/list")).result.resourceTemplates)).toEqual([
      "files://{name}",
    ]);
    expect((await send("tools/call", { name: "write_note" })).result).toEqual({
      content: [{ type: "text", text: "written" }],
    });
  });

  it("refuses a call, a get, a read and a completion without the scopes, naming them", async () => {
    const send = await peer({ scopes: ["notes:read"] });
    const refusal = (id: number, message: string, scopes: string[]) => ({
      jsonrpc: "2.0",
      id,
      error: { code: -32600, message, data: { error: "insufficient_scope", scopes } },
    });
    expect(await send("tools/call", { name: "write_note" })).toEqual(
      refusal(2, "Forbidden: tool write_note needs the scope notes:write", ["notes:write"]),
    );
    expect(await send("prompts/get", { name: "audit" })).toEqual(
      refusal(3, "Forbidden: prompt audit needs the scope admin", ["admin"]),
    );
    expect(await send("resources/read", { uri: "files://a" })).toEqual(
      refusal(4, "Forbidden: resource files://a needs the scope files:read", ["files:read"]),
    );
    expect(
      await send("completion/complete", {
        ref: { type: "ref/prompt", name: "audit" },
        argument: { name: "who", value: "" },
      }),
    ).toEqual(refusal(5, "Forbidden: prompt audit needs the scope admin", ["admin"]));
    expect(
      await send("completion/complete", {
        ref: { type: "ref/resource", uri: "files://{name}" },
        argument: { name: "name", value: "" },
      }),
    ).toEqual(
      refusal(6, "Forbidden: resource template files://{name} needs the scope files:read", ["files:read"]),
    );
    // the scope it holds is enough for what needs only that
    expect((await send("resources/read", { uri: "note://private" })).result.contents[0].text).toBe("private");
  });

  it("takes only a list of scopes: a string's substrings are no scopes", async () => {
    const send = await peer({ scopes: "notes:read:all" as never });
    expect((await send("resources/read", { uri: "note://private" })).error.data).toEqual({
      error: "insufficient_scope",
      scopes: ["notes:read"],
    });
  });

  it("marks a list as personal only when it has scoped entries", () => {
    let personal = false;
    const ctx = {
      auth: undefined,
      personal: () => {
        personal = true;
      },
    };
    const open = [{ scopes: undefined }];
    expect(visibleTo(open, ctx)).toBe(open);
    expect(personal).toBe(false);
    expect(visibleTo([...open, { scopes: ["x"] }], ctx)).toEqual(open);
    expect(personal).toBe(true);
  });

  it("throws at registration for scopes that are not scope names", () => {
    const server = new McpServer({ name: "t", version: "1" });
    expect(() => server.tool("a", { scopes: ["two words"], run: () => "" })).toThrow(
      'Tool "a": scopes must be a list of OAuth scope names',
    );
    expect(() => server.tool("b", { scopes: "x" as never, run: () => "" })).toThrow("scopes must be a list");
    expect(() => server.prompt("c", { scopes: ["offline_access"], get: () => "" })).toThrow(
      'Prompt "c": offline_access is a grant for refresh tokens',
    );
  });
});
