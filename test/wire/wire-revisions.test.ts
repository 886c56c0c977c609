/**
 * The wire differences between revisions that the strict schema check (test/wire/mcp-schema.test.ts) found,
 * and the open edges decided in docs/eras.md, as exact JSON per revision.
 */
import { describe, expect, it } from "vitest";
import { createHttpHandler } from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";
import { rawPeer } from "../helpers.js";
import { POST_HEADERS, URL_ } from "../http-helpers.js";
import { meta, modernPeer } from "../modern-helpers.js";

const ICONS = [{ src: "https://example.com/i.png", mimeType: "image/png" }];
const INFO = {
  name: "full",
  version: "2.0.0",
  title: "Full",
  description: "Says all about itself",
  icons: ICONS,
  websiteUrl: "https://example.com",
};

function server() {
  const s = new McpServer({ ...INFO, onError: () => {} });
  s.resource("ui://app/page.html", {
    mimeType: "text/html;profile=mcp-app",
    read: () => [
      {
        uri: "ui://app/page.html",
        mimeType: "text/html;profile=mcp-app",
        text: "<p>",
        _meta: { ui: { a: 1 } },
      },
    ],
  });
  s.skill("review", { description: "Reviews", instructions: "# Review\n" });
  return s;
}

describe("resources/read contents by revision", () => {
  const content = { uri: "ui://app/page.html", mimeType: "text/html;profile=mcp-app", text: "<p>" };
  for (const [version, withMeta] of [
    ["2024-11-05", false],
    ["2025-03-26", false],
    ["2025-06-18", true],
    ["2025-11-25", true],
  ] as const) {
    it(`${version}: ${withMeta ? "keeps" : "drops"} a content's _meta`, async () => {
      const p = rawPeer(server());
      await p.initialize(version);
      expect(
        await p.send({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: content.uri } }),
      ).toEqual({
        jsonrpc: "2.0",
        id: 1,
        result: { contents: [withMeta ? { ...content, _meta: { ui: { a: 1 } } } : content] },
      });
    });
  }
});

describe("server/discover tells the whole Implementation", () => {
  it("serverInfo with title, description, icons and websiteUrl; other results name and version", async () => {
    const p = modernPeer(server());
    const discover = (await p.request("server/discover")).answer.result;
    expect(discover._meta).toEqual({ "io.modelcontextprotocol/serverInfo": INFO });
    const read = (await p.request("resources/read", { uri: "ui://app/page.html" })).answer.result;
    expect(read._meta).toEqual({ "io.modelcontextprotocol/serverInfo": { name: "full", version: "2.0.0" } });
  });

  it("a 2025-06-18 session gets what its Implementation has: the title only", async () => {
    const init = await rawPeer(server()).initialize("2025-06-18");
    expect(init.result.serverInfo).toEqual({ name: "full", version: "2.0.0", title: "Full" });
  });
});

describe("capabilities.extensions before 2026-07-28", () => {
  it("is declared to every revision (docs/eras.md)", async () => {
    for (const v of ["2024-11-05", "2025-06-18", "2025-11-25"]) {
      const init = await rawPeer(server()).initialize(v);
      expect(init.result.capabilities.extensions).toEqual({
        "io.modelcontextprotocol/skills": { directoryRead: true },
      });
    }
  });
});

describe("subscriptions/listen without notifications", () => {
  it("-32602 on stdio's seam, and HTTP 200 with the same JSON over HTTP", async () => {
    const s = server();
    const error = {
      code: -32602,
      message: "subscriptions/listen needs a notifications object",
    };
    expect((await modernPeer(s).request("subscriptions/listen")).answer).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error,
    });
    const handler = createHttpHandler(s);
    const res = await handler(
      new Request(URL_, {
        method: "POST",
        headers: {
          ...POST_HEADERS,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "subscriptions/listen",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "subscriptions/listen",
          params: { _meta: meta() },
        }),
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 7, error });
    handler.close();
  });
});
