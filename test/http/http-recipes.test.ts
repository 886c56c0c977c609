// The Node, Express, Hono, Bun and Deno recipes of docs/http.md, run as written (test/docs/docs.test.ts checks the page shows these files).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { toNodeListener } from "picomcp/node";
import { afterEach, describe, expect, it } from "vitest";
import app from "../../examples/docs/http-hono.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const root = fileURLToPath(new URL("../..", import.meta.url));
const built = (file: string) => `${root}build/examples/${file}`;

/** Starts a recipe with PORT=0, reads its URL from stderr, greets through the SDK client, and checks a 404 beside it. */
async function servesGreet(bin: string, args: string[]): Promise<string> {
  const child: ChildProcess = spawn(bin, args, {
    cwd: root,
    env: { ...process.env, PORT: "0", NO_COLOR: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  cleanups.push(() => child.kill());
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (chunk) => {
      stderr += chunk;
      const m = /MCP server at (\S+)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`${bin} exited (${code}): ${stderr}`)));
  });
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  expect(await greet(url)).toEqual({ content: [{ type: "text", text: "Hello, Ada!" }] });
  expect((await fetch(url.replace(/\/mcp$/, "/other"))).status).toBe(404);
  return url;
}

async function greet(url: string) {
  const client = new Client({ name: "recipe-test", version: "1.0.0" });
  cleanups.push(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client.callTool({ name: "greet", arguments: { name: "Ada" } });
}

describe("docs/http.md recipes", () => {
  it("Node: serve() listens on 127.0.0.1 at /mcp and serves the SDK client", async () => {
    await servesGreet(process.execPath, [built("docs/http-node.js")]);
  });

  it("Express: app.all('/mcp', toNodeListener(handler)) beside the app's own routes", async () => {
    const url = await servesGreet(process.execPath, [built("docs/http-express.js")]);
    expect(await (await fetch(url.replace(/\/mcp$/, "/"))).text()).toBe("A greeter, with MCP at /mcp");
  });

  it("Bun: Bun.serve with the fetch handler, as written", async () => {
    await servesGreet(`${root}node_modules/.bin/bun`, ["examples/runtimes/http-bun.ts"]);
  });

  it("Deno: Deno.serve with the fetch handler, npm:picomcp mapped to this build", async () => {
    mkdirSync(`${root}.test-out`, { recursive: true });
    const map = `${root}.test-out/deno-import-map.json`;
    writeFileSync(
      map,
      JSON.stringify({
        imports: { "npm:picomcp": "../dist/index.js", "npm:picomcp/http": "../dist/http/index.js" },
      }),
    );
    await servesGreet(`${root}node_modules/.bin/deno`, [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-env=PORT",
      "--allow-read=.",
      "--no-prompt",
      `--import-map=${map}`,
      "examples/runtimes/http-deno.ts",
    ]);
  }, 30_000);

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
