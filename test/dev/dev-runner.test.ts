import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type DevRunner, nodeArgs, runDev } from "../../src/dev/runner.js";

const cli = fileURLToPath(new URL("../../dist/dev/cli.js", import.meta.url));
const picomcp = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
const stdio = fileURLToPath(new URL("../../dist/stdio.js", import.meta.url));

const running: DevRunner[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const dev of running.splice(0)) await dev.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A server file in a fresh directory; its one tool answers `answer`. */
function project(answer: string) {
  const dir = mkdtempSync(join(tmpdir(), "picomcp-dev-"));
  dirs.push(dir);
  const entry = join(dir, "server.js");
  const write = (text: string) =>
    writeFileSync(
      entry,
      `import { McpServer } from ${JSON.stringify(picomcp)};
import { serveStdio } from ${JSON.stringify(stdio)};
const server = new McpServer({ name: "p", version: "1" });
server.tool("answer", { run: () => ${JSON.stringify(text)} });
serveStdio(server);
`,
    );
  write(answer);
  return { dir, entry, write };
}

async function start(entry: string, port = 0) {
  const dev = await runDev({ entry, port, log: () => {}, debounceMs: 20 });
  running.push(dev);
  return dev;
}

/** Reads the console's event stream until `until` holds for one of its `rpc` messages. */
async function call(url: string, message: object, until: (m: any) => boolean) {
  const res = await fetch(`${url}events`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const sent = await fetch(`${url}send`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(message),
  });
  expect(sent.status).toBe(202);
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the event stream ended");
    buffer += value;
    for (const frame of buffer.split("\n\n")) {
      if (!frame.startsWith("event: rpc\n")) continue;
      const m = JSON.parse(frame.slice("event: rpc\ndata: ".length));
      if (until(m)) {
        await reader.cancel();
        return m;
      }
    }
  }
}

/** The runner's status: the first frame of every event stream. */
async function status(url: string) {
  const res = await fetch(`${url}events`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (!buffer.includes("\n\n")) buffer += (await reader.read()).value ?? "";
  await reader.cancel();
  return JSON.parse(buffer.slice("event: status\ndata: ".length, buffer.indexOf("\n\n")));
}

const toolCall = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: {
    name: "answer",
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});

/** A raw request with any Host header (fetch would not let a test set it). */
function raw(url: string, method: string, path: string, headers: object, body = "") {
  return new Promise<{ status: number; body: string }>((done, fail) => {
    const req = request(new URL(path, url), { method, headers: headers as never }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => done({ status: res.statusCode!, body: text }));
    });
    req.on("error", fail);
    req.end(body);
  });
}

describe("picomcp dev: the runner", () => {
  it("passes messages both ways, and restarts the server when a file beside it changes", async () => {
    const p = project("one");
    const dev = await start(p.entry);
    const first = await call(dev.url, toolCall(1), (m) => m.id === 1);
    expect(first.result.content).toEqual([{ type: "text", text: "one" }]);
    p.write("two");
    await expect
      .poll(() => status(dev.url), { timeout: 10_000 })
      .toMatchObject({ state: "running", generation: 2 });
    expect((await call(dev.url, toolCall(2), (m) => m.id === 2)).result.content).toEqual([
      { type: "text", text: "two" },
    ]);
  });

  it("takes a free port when the one asked for is taken, and listens on 127.0.0.1 only", async () => {
    const taken = createServer();
    await new Promise<void>((ok) => taken.listen(0, "127.0.0.1", ok));
    const port = (taken.address() as { port: number }).port;
    try {
      const dev = await start(project("x").entry, port);
      expect(dev.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(dev.url).not.toBe(`http://127.0.0.1:${port}/`);
    } finally {
      taken.close();
    }
  });

  it("refuses other hosts, other origins, non-JSON bodies, and unknown paths", async () => {
    const dev = await start(project("x").entry);
    const host = new URL(dev.url).host;
    const json = { "content-type": "application/json" };
    expect(await raw(dev.url, "GET", "/", { host: "evil.example" })).toEqual({
      status: 403,
      body: "Forbidden host",
    });
    expect(
      await raw(dev.url, "POST", "/send", { host, ...json, origin: "http://evil.example" }, "{}"),
    ).toEqual({ status: 403, body: "Forbidden origin" });
    expect(await raw(dev.url, "POST", "/send", { host, "content-type": "text/plain" }, "{}")).toEqual({
      status: 415,
      body: "Content-Type must be application/json",
    });
    expect(await raw(dev.url, "POST", "/send", { host, ...json }, "{not json")).toEqual({
      status: 400,
      body: "The body is not JSON",
    });
    expect((await raw(dev.url, "GET", "/../package.json", { host })).status).toBe(404);
    const page = await raw(dev.url, "GET", "/", { host: host.replace("127.0.0.1", "localhost") });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script type="module" src="/console.js"></script>');
  });

  it("says how to run a .ts entry on a Node that cannot strip types", () => {
    expect(nodeArgs("server.js", "20.19.0")).toEqual(["server.js"]);
    expect(nodeArgs("server.ts", "23.6.0")).toEqual(["server.ts"]);
    expect(nodeArgs("server.ts", "22.18.0")).toEqual(["server.ts"]);
    expect(nodeArgs("server.mts", "22.6.0")).toEqual(["--experimental-strip-types", "server.mts"]);
    expect(() => nodeArgs("server.ts", "20.19.0")).toThrow(
      "Node 20.19.0 cannot run server.ts as it is: build it first (npx tsc) and pass the .js file, or use Node 22.18+, which strips types",
    );
  });

  it("the picomcp command prints its usage, and names a missing entry", async () => {
    const run = (...args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((done) => {
        const child = spawn(process.execPath, [cli, ...args]);
        let stderr = "";
        child.stderr.on("data", (c) => (stderr += c));
        child.on("exit", (code) => done({ code, stderr }));
      });
    const usage = await run();
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^Usage: picomcp dev <entry.js>/);
    expect(await run("dev", "missing.js")).toEqual({
      code: 1,
      stderr: "picomcp dev: missing.js does not exist\n",
    });
  });
});
