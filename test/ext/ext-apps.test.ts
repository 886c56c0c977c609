// The MCP Apps example (examples/apps.ts) through real clients over HTTP: the SDK v1 client at
// 2025-11-25 and the SDK v2 client pinned to 2026-07-28 list the tool, read its ui:// page, and
// find the MIME type and _meta an Apps host needs.
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../examples/apps.js";
import { type NodeServer, serve } from "../../src/http/node.js";
import { McpServer } from "../../src/index.js";

let http: NodeServer;
beforeAll(async () => {
  // the example is built on the package (picomcp), so it is served by the package's own transport
  const { serve: servePackage } = await import("picomcp/node");
  http = (await servePackage(server, { port: 0 })) as NodeServer;
});
afterAll(() => http.close());

const TOOL_META = { ui: { resourceUri: "ui://dice/roll.html" }, "ui/resourceUri": "ui://dice/roll.html" };

async function check(client: {
  listTools(): Promise<{ tools: any[] }>;
  listResources(): Promise<{ resources: any[] }>;
  readResource(p: { uri: string }): Promise<{ contents: any[] }>;
  callTool(p: { name: string; arguments: object }): Promise<any>;
}) {
  const [tool] = (await client.listTools()).tools;
  expect(tool.name).toBe("roll_dice");
  expect(tool._meta).toEqual(TOOL_META);
  const listed = (await client.listResources()).resources;
  expect(listed).toEqual([
    {
      uri: "ui://dice/roll.html",
      name: "roll_dice",
      mimeType: "text/html;profile=mcp-app",
      _meta: { ui: { prefersBorder: true } },
    },
  ]);
  const { contents } = await client.readResource({ uri: tool._meta.ui.resourceUri });
  expect(contents).toHaveLength(1);
  expect(contents[0].uri).toBe("ui://dice/roll.html");
  expect(contents[0].mimeType).toBe("text/html;profile=mcp-app");
  expect(contents[0]._meta).toEqual({ ui: { prefersBorder: true } });
  expect(contents[0].text).toMatch(/^<!doctype html>/);
  expect(contents[0].text).toContain('method: "ui/initialize"');
  const result = await client.callTool({ name: "roll_dice", arguments: { count: 3 } });
  expect(result.structuredContent.rolls).toHaveLength(3);
  for (const n of result.structuredContent.rolls) expect(n >= 1 && n <= 6).toBe(true);
}

describe("the MCP Apps example", () => {
  it("serves the SDK v1 client at 2025-11-25: the tool links to its ui:// page", async () => {
    const client = new Client({ name: "host", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    try {
      expect(client.getServerCapabilities()?.extensions).toBeUndefined();
      await check(client as never);
    } finally {
      await client.close();
    }
  });

  it("serves the SDK v2 client at 2026-07-28 the same page and the same _meta", async () => {
    const client = new ClientV2({ name: "host", version: "1.0.0" }, {
      capabilities: {
        extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
      },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    } as never);
    await client.connect(new TransportV2(new URL(http.url)));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      await check(client as never);
    } finally {
      await client.close();
    }
  });
});

describe("server.app", () => {
  it("keeps the tool's own _meta, sets visibility and csp, and builds the page per read", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    let reads = 0;
    s.app("chart", {
      _meta: { "example.com/x": 1, ui: { extra: true } },
      visibility: ["app"],
      ui: {
        uri: "ui://charts/bar",
        html: () => `<p>${++reads}</p>`,
        csp: { connectDomains: ["https://api.example.com"] },
      },
      run: () => "ok",
    });
    const c = new Client({ name: "c", version: "1" });
    const h = await serve(s, { port: 0 });
    try {
      await c.connect(new StreamableHTTPClientTransport(new URL(h.url)));
      expect((await c.listTools()).tools[0]?._meta).toEqual({
        "example.com/x": 1,
        ui: { extra: true, resourceUri: "ui://charts/bar", visibility: ["app"] },
        "ui/resourceUri": "ui://charts/bar",
      });
      const read = async () => (await c.readResource({ uri: "ui://charts/bar" })).contents[0];
      expect(await read()).toEqual({
        uri: "ui://charts/bar",
        mimeType: "text/html;profile=mcp-app",
        text: "<p>1</p>",
        _meta: { ui: { csp: { connectDomains: ["https://api.example.com"] } } },
      });
      expect(await read()).toMatchObject({ text: "<p>2</p>" });
    } finally {
      await c.close();
      await h.close();
    }
  });

  it("rejects a page that is not a fixed ui:// URI, and leaves nothing registered when the tool name is taken", () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    expect(() => s.app("a", { ui: { uri: "https://x/a.html", html: "" }, run: () => "" })).toThrow(
      'App "a": ui.uri must start with ui://',
    );
    // a template would answer every ui:// URI it matches with the one page
    for (const uri of ["ui://{page}", "ui://x/{+path}.html", "ui://x/a.html{?v}"]) {
      expect(() => s.app("a", { ui: { uri, html: "" }, run: () => "" })).toThrow(
        `App "a": ui.uri must be a fixed URI, not a template: ${JSON.stringify(uri)} has {…}`,
      );
    }
    s.tool("taken", { run: () => "" });
    expect(() => s.app("taken", { ui: { uri: "ui://x/a.html", html: "" }, run: () => "" })).toThrow();
    // the page was removed again: registering it once more works
    s.app("free", { ui: { uri: "ui://x/a.html", html: "" }, run: () => "" });
  });
});
