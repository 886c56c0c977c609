// The Node and Hono recipes of docs/http.md, run as written (test/docs.test.ts checks the page shows these files).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { toNodeListener } from "picomcp/node";
import { afterEach, describe, expect, it } from "vitest";
import app from "../examples/docs/http-hono.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function greet(url: string) {
  const client = new Client({ name: "recipe-test", version: "1.0.0" });
  cleanups.push(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client.callTool({ name: "greet", arguments: { name: "Ada" } });
}

describe("docs/http.md recipes", () => {
  it("Node: serve() listens on 127.0.0.1 at /mcp and serves the SDK client", async () => {
    const file = fileURLToPath(new URL("../build/examples/docs/http-node.js", import.meta.url));
    const child: ChildProcess = spawn(process.execPath, [file], {
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    cleanups.push(() => child.kill());
    const [line] = await once(child.stderr!, "data");
    const url = /MCP server at (\S+)/.exec(String(line))![1]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(await greet(url)).toEqual({ content: [{ type: "text", text: "Hello, Ada!" }] });
    expect((await fetch(url.replace(/\/mcp$/, "/other"))).status).toBe(404);
  });

  it("Hono: app.all('/mcp', (c) => mcp(c.req.raw)) serves MCP beside the app's own routes", async () => {
    const http: Server = createServer(toNodeListener(app.fetch));
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise((r) => http.close(r)));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    expect(await greet(`${base}/mcp`)).toEqual({ content: [{ type: "text", text: "Hello, Ada!" }] });
    expect(await (await app.fetch(new Request(`${base}/`))).text()).toBe("A greeter, with MCP at /mcp");
    const foreign = await app.fetch(
      new Request(`${base}/mcp`, {
        method: "POST",
        headers: { host: "evil.example", "content-type": "application/json" },
      }),
    );
    expect(foreign.status).toBe(403);
  });
});
