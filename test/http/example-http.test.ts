import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it } from "vitest";

const example = fileURLToPath(new URL("../../build/examples/bookshop.js", import.meta.url));
let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill("SIGTERM");
});

/** Starts the example as `npm start` does (HTTP on 127.0.0.1), on a free port; resolves with the URL it prints. */
function start(): Promise<{ url: string; banner: string }> {
  child = spawn(process.execPath, [example], {
    env: { ...process.env, PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child!.stdout!.on("data", (c) => {
      out += c;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(out);
      if (m && out.includes("Press Ctrl+C")) resolve({ url: m[1]!, banner: out });
    });
    child!.on("exit", (code) => reject(new Error(`the example exited with ${code}`)));
  });
}

describe("the npm start example", () => {
  it("serves a client over HTTP on 127.0.0.1 and prints how to connect", async () => {
    const { url, banner } = await start();
    expect(banner).toContain("npx @modelcontextprotocol/inspector");
    const client = new Client({ name: "sdk", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search_books", "add_book"]);
    expect(await client.callTool({ name: "search_books", arguments: { query: "lem" } })).toEqual({
      content: [{ type: "text", text: "3: Solaris — Stanisław Lem" }],
    });
    await client.close();
    // the raw curl line of the banner works as printed
    const body = /-d '([^']+)'/.exec(banner)![1]!;
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body,
    });
    expect(res.status).toBe(200);
    expect((await res.json()).result.serverInfo).toEqual({ name: "bookshop", version: "1.0.0" });
  });
});
