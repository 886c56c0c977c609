// docs/migrate.md: each step's picomcp side, run as the page shows it (test/docs/docs.test.ts checks that
// the page shows these files). Needs `npm run build` (the transports example runs from build/).
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connect } from "picomcp/testing";
import { afterEach, describe, expect, it } from "vitest";
import { handle } from "../../examples/docs/migrate-v1-auth.js";
import { server as resources } from "../../examples/docs/migrate-v1-resources.js";
import { server as tools } from "../../examples/docs/migrate-v1-tools.js";
import { server as deployer } from "../../examples/docs/migrate-v2.js";

const transports = fileURLToPath(
  new URL("../../build/examples/docs/migrate-v1-transports.js", import.meta.url),
);
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("docs/migrate.md: from SDK v1", () => {
  it("tools: input wrapped in z.object, defaults applied, output as structuredContent, a throw as isError", async () => {
    const client = await connect(tools);
    expect((await client.listTools()).tools.map((t) => [t.name, t.title, t.annotations])).toEqual([
      ["search_books", "Search books", undefined],
      ["count_books", undefined, undefined],
      ["delete_book", undefined, { destructiveHint: true }],
    ]);
    expect(await client.callTool("search_books", { query: "owls" })).toEqual({
      content: [{ type: "text", text: "Up to 10 books about owls" }],
    });
    expect(await client.callTool("count_books", { shelf: "sf" })).toEqual({
      content: [{ type: "text", text: '{"shelf":"sf","total":42}' }],
      structuredContent: { shelf: "sf", total: 42 },
    });
    expect(await client.callTool("delete_book", { id: "7" })).toEqual({
      content: [{ type: "text", text: "Deleted 7" }],
    });
    expect(await client.callTool("delete_book", { id: "0" })).toEqual({
      content: [{ type: "text", text: "No book 0" }],
      isError: true,
    });
  });

  it("resources, a template with list and complete, and a prompt", async () => {
    const client = await connect(resources);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      "config://app",
      "books://1",
      "books://2",
    ]);
    expect(await client.readResource("config://app")).toEqual({
      contents: [{ uri: "config://app", mimeType: "application/json", text: '{"theme":"dark"}' }],
    });
    expect(((await client.readResource("books://2")).contents[0] as { text: string }).text).toBe("Kindred");
    expect(
      await client.complete({ type: "ref/resource", uri: "books://{id}" }, { argument: "id", value: "1" }),
    ).toEqual({ completion: { values: ["1"] } });
    expect((await client.getPrompt("review", { title: "Kindred" })).messages).toEqual([
      { role: "user", content: { type: "text", text: "Write a short review of Kindred." } },
    ]);
  });

  it("transports: serveStdio in place of StdioServerTransport", async () => {
    const client = new Client({ name: "sdk-v1", version: "1.0.0" });
    cleanups.push(() => client.close());
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [transports], stderr: "pipe" }),
    );
    expect(await client.callTool({ name: "ping_shop", arguments: {} })).toEqual({
      content: [{ type: "text", text: "pong" }],
    });
  });

  it("transports: serve() in place of express and a transport per session", async () => {
    const child: ChildProcess = spawn(process.execPath, [transports, "--http"], {
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    cleanups.push(() => child.kill());
    const url = await new Promise<string>((resolve, reject) => {
      let stderr = "";
      child.stderr!.on("data", (chunk) => {
        stderr += chunk;
        const m = /MCP server at (\S+)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.on("exit", (code) => reject(new Error(`exited (${code}): ${stderr}`)));
    });
    const client = new Client({ name: "sdk-v1", version: "1.0.0" });
    cleanups.push(() => client.close());
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect(await client.callTool({ name: "ping_shop", arguments: {} })).toEqual({
      content: [{ type: "text", text: "pong" }],
    });
  });

  it("auth: one handler serves the metadata and challenges a request without a token", async () => {
    const prm = await handle(new Request("https://mcp.example.com/.well-known/oauth-protected-resource/mcp"));
    expect(await prm.json()).toMatchObject({
      resource: "https://mcp.example.com/mcp",
      authorization_servers: ["https://auth.example.com"],
    });
    const res = await handle(
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
});

describe("docs/migrate.md: from SDK v2", () => {
  for (const protocolVersion of ["2025-11-25", "2026-07-28"]) {
    it(`ctx in place of ctx.mcpReq: log, elicit (an input round at 2026-07-28), signal (${protocolVersion})`, async () => {
      const asked: string[] = [];
      const client = await connect(deployer, {
        protocolVersion,
        onElicit: (params) => {
          asked.push((params as { message: string }).message);
          return { action: "accept", content: { confirm: true } };
        },
      });
      const result = await client.callTool("deploy", { env: "staging" });
      expect(result.content).toEqual([{ type: "text", text: "Deployed to staging" }]);
      expect(asked).toEqual(["Deploy to staging?"]);
    });
  }

  it("a declined confirmation deploys nothing", async () => {
    const client = await connect(deployer, { onElicit: () => ({ action: "decline" }) });
    expect((await client.callTool("deploy", { env: "production" })).content).toEqual([
      { type: "text", text: "Not deployed" },
    ]);
  });
});
