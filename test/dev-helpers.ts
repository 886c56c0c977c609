/**
 * What the `picomcp dev` tests share: a server project in a fresh directory, and raw HTTP to the
 * console as curl would speak it (any Host, any header, the secret's header or not).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { type DevOptions, type DevRunner, runDev } from "../src/dev/runner.js";

const picomcp = fileURLToPath(new URL("../dist/index.js", import.meta.url));
const stdio = fileURLToPath(new URL("../dist/stdio.js", import.meta.url));

const running: DevRunner[] = [];
const dirs: string[] = [];

/** Stops every runner and removes every project the test made (call it in afterEach). */
export async function cleanUp(): Promise<void> {
  for (const dev of running.splice(0)) await dev.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Starts `picomcp dev` on a free port, quietly unless `log` is given; stopped by cleanUp(). */
export async function start(entry: string, options: Partial<DevOptions> = {}): Promise<DevRunner> {
  const dev = await runDev({ entry, port: 0, log: () => {}, debounceMs: 20, ...options });
  running.push(dev);
  return dev;
}

/** A server file in a fresh directory: its body is `code`, between the imports and `serveStdio`. */
export function project(code: string) {
  const dir = mkdtempSync(join(tmpdir(), "picomcp-dev-"));
  dirs.push(dir);
  const entry = join(dir, "server.js");
  const write = (body: string) =>
    writeFileSync(
      entry,
      `import { McpServer } from ${JSON.stringify(picomcp)};
import { serveStdio } from ${JSON.stringify(stdio)};
const server = new McpServer({ name: "p", version: "1" });
${body}
serveStdio(server);
`,
    );
  write(code);
  return { dir, entry, write };
}

/** This run's secret: the fragment of the address the runner prints. */
export function secretOf(dev: DevRunner): string {
  return new URL(dev.url).hash.slice(1);
}

/** What the console's own page sends with each request: the secret's header, and Sec-Fetch-Site as a browser sets it. */
export const pageHeaders = (dev: DevRunner) => ({
  host: new URL(dev.url).host,
  "x-picomcp-secret": secretOf(dev),
  "sec-fetch-site": "same-origin",
});

/** A raw request with any headers (fetch would not let a test set Host or Sec-Fetch-Site). */
export function raw(origin: string, method: string, path: string, headers: object, body = "") {
  return new Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: string;
  }>((done, fail) => {
    const req = request(new URL(path, origin), { method, headers: headers as never }, (res) => {
      let text = "";
      // an event stream never ends: its first frame is enough
      res.on("data", (c) => {
        text += c;
        if (String(res.headers["content-type"]).startsWith("text/event-stream") && text.includes("\n\n"))
          res.destroy();
      });
      res.on("close", () => done({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on("error", fail);
    req.end(body);
  });
}

/** The console's event stream, as the page reads it; `until` waits for a frame of one event. */
export async function events(dev: DevRunner) {
  const res = await fetch(`${dev.origin}/events`, { headers: { "x-picomcp-secret": secretOf(dev) } });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const frames: { event: string; data: string }[] = [];
  return {
    frames,
    /** Reads on until a frame of `event` whose data passes `test`; resolves with its data. */
    async until(event: string, test: (data: string) => boolean = () => true): Promise<string> {
      return (await this.next((f) => f.event === event && test(f.data), event)).data;
    },
    /** Reads on until a frame that passes `test`; resolves with it. */
    async next(
      test: (frame: { event: string; data: string }) => boolean,
      what = "the frame awaited",
    ): Promise<{ event: string; data: string }> {
      for (;;) {
        const cut = buffer.indexOf("\n\n");
        if (cut >= 0) {
          const lines = buffer.slice(0, cut).split("\n");
          buffer = buffer.slice(cut + 2);
          const frame = {
            event: lines[0]!.slice("event: ".length),
            data: lines
              .slice(1)
              .map((l) => l.slice("data: ".length))
              .join("\n"),
          };
          frames.push(frame);
          if (test(frame)) return frame;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`the event stream ended before ${what}`);
        buffer += value;
      }
    },
    close: () => reader.cancel(),
  };
}

/** Sends one message as the page would; resolves with the console's answer. */
export async function send(dev: DevRunner, message: object, headers: object = pageHeaders(dev)) {
  return raw(
    dev.origin,
    "POST",
    "/send",
    { "content-type": "application/json", ...headers },
    JSON.stringify(message),
  );
}

/**
 * Sends a message and waits for the server's answer under its id. Rejects when the runner's status changes
 * first (a restart or an exit: a server stopped before it answered never will; the page drops such requests too).
 */
export async function call(dev: DevRunner, message: { id: number | string }) {
  const stream = await events(dev);
  try {
    await stream.until("status"); // the first frame: the status when the stream opened
    expect((await send(dev, message)).status).toBe(202);
    const frame = await stream.next(
      (f) => f.event === "status" || (f.event === "rpc" && JSON.parse(f.data).id === message.id),
      `the answer to ${message.id}`,
    );
    if (frame.event === "status")
      throw new Error(`the server's status changed before it answered ${message.id}: ${frame.data}`);
    return JSON.parse(frame.data);
  } finally {
    await stream.close();
  }
}

/** The runner's status: the first frame of every event stream. */
export async function status(dev: DevRunner) {
  const stream = await events(dev);
  try {
    return JSON.parse(await stream.until("status"));
  } finally {
    await stream.close();
  }
}

/** A 2026-07-28 tools/call (no session needed) of tool `name`. */
export const toolCall = (id: number, name: string, args: object = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: {
    name,
    arguments: args,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});
