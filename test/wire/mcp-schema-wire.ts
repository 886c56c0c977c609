/**
 * A server that uses every primitive, and two raw clients of it (stdio through `serveStdio`, Streamable HTTP
 * through `createHttpHandler`), each recording every message the server sends: responses (with the method
 * they answer), notifications and requests. Used by test/wire/mcp-schema.test.ts.
 */
import { PassThrough } from "node:stream";
import { nameField } from "../../src/http/headers.js";
import { createHttpHandler, type HttpHandler } from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";
import { serveStdio } from "../../src/stdio.js";

const ICONS = [{ src: "https://example.com/icon.png", mimeType: "image/png", sizes: ["48x48"] }];
const PNG = "iVBORw0KGgo=";

/** Every primitive, every optional field picomcp can send. */
export function wireServer(): McpServer {
  const server = new McpServer({
    name: "wire",
    version: "1.0.0",
    title: "Wire",
    description: "Uses every primitive",
    websiteUrl: "https://example.com",
    icons: ICONS,
    instructions: "Call echo first.",
    experimental: { "com.example/beta": {} },
    onError: () => {},
  });
  server.tool("echo", {
    title: "Echo",
    description: "Echoes its text",
    icons: ICONS,
    annotations: { readOnlyHint: true, title: "Echo" },
    _meta: { "com.example/tool": 1 },
    input: { type: "object", properties: { text: { type: "string" } }, additionalProperties: false },
    run: ({ text }: { text?: string }) => text ?? "",
  });
  server.tool("structured", {
    description: "Structured output",
    output: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    run: () => ({ n: 1 }),
  });
  server.tool("media", {
    description: "Every content block",
    run: () => ({
      content: [
        {
          type: "text",
          text: "t",
          annotations: { audience: ["user"], priority: 1, lastModified: "2026-01-01T00:00:00Z" },
        },
        { type: "image", data: PNG, mimeType: "image/png", _meta: { "com.example/k": 1 } },
        { type: "audio", data: PNG, mimeType: "audio/wav" },
        { type: "resource_link", uri: "docs://readme", name: "readme", title: "Readme", icons: ICONS },
        {
          type: "resource",
          resource: {
            uri: "docs://readme",
            text: "x",
            mimeType: "text/plain",
            _meta: { "com.example/k": 1 },
          },
        },
      ],
      _meta: { "com.example/result": 1 },
    }),
  });
  server.tool("chatty", {
    description: "Logs and reports progress",
    run: (_a, ctx) => {
      ctx.log("info", { step: 1 }, "wire");
      ctx.progress(1, 2, "half way");
      return "done";
    },
  });
  server.tool("fails", {
    description: "Throws",
    run: () => {
      throw new Error("no");
    },
  });
  server.tool("ask", {
    description: "Elicits",
    run: async (_a, ctx) => {
      const r = await ctx.elicit(
        { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
        { key: "name" },
      );
      return r.action;
    },
  });
  server.tool("sample", {
    description: "Samples",
    run: async (_a, ctx) => {
      const r = await ctx.sample(
        { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 5 },
        { key: "sample" },
      );
      return r.model;
    },
  });
  server.tool("roots", {
    description: "Lists roots",
    run: async (_a, ctx) => (await ctx.roots({ key: "roots" })).map((r) => r.uri).join(","),
  });
  server.tool("job", {
    description: "Runs as a task",
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task({ statusMessage: "started" });
      return "job done";
    },
  });
  server.resource("docs://readme", {
    title: "Readme",
    description: "The readme",
    mimeType: "text/plain",
    size: 1,
    icons: ICONS,
    annotations: { audience: ["user"], priority: 0.5, lastModified: "2026-01-01T00:00:00Z" },
    _meta: { "com.example/res": 1 },
    read: () => [{ uri: "docs://readme", text: "x", mimeType: "text/plain", _meta: { "com.example/k": 1 } }],
  });
  server.resource("blob://one", { mimeType: "image/png", read: () => new Uint8Array([1, 2, 3]) });
  server.resource("notes://{id}{?tag*}", {
    title: "Note",
    description: "A note",
    mimeType: "text/plain",
    icons: ICONS,
    list: () => [{ uri: "notes://1", name: "one", title: "One" }],
    complete: { id: (v) => ["1", "2"].filter((x) => x.startsWith(v)) },
    read: ({ id }) => `note ${id}`,
  });
  server.prompt("greet", {
    title: "Greet",
    description: "Greets",
    icons: ICONS,
    args: [{ name: "who", description: "Whom", required: true }],
    complete: { who: (v) => ["Ada", "Alan"].filter((x) => x.startsWith(v)) },
    get: ({ who }) => [
      { role: "user", content: { type: "text", text: `Hi ${who}` } },
      { role: "assistant", content: { type: "resource", resource: { uri: "docs://readme", text: "x" } } },
    ],
  });
  server.skill("review", {
    description: "Reviews code",
    instructions: "# Review\n",
    files: { "refs/list.md": "# List\n" },
  });
  server.app("chart", {
    description: "A chart",
    ui: { uri: "ui://wire/chart.html", html: "<!doctype html><p>chart</p>" },
    run: () => "chart",
  });
  return server;
}

/** A message the server sent, and (for a response) the method of the request it answers. */
export interface Seen {
  readonly message: any;
  readonly method?: string;
}

/** A raw client: `request` resolves with the response; server requests are answered by `answer`. */
export interface Wire {
  readonly seen: Seen[];
  request(method: string, params?: object): Promise<any>;
  notify(method: string, params?: object): Promise<void>;
  /** A request whose answer comes later (a listen): resolves once `until` holds for what was seen. */
  open(method: string, params: object, until: (seen: Seen[]) => boolean): Promise<{ close(): Promise<void> }>;
  close(): Promise<void>;
}

/** What a client answers to the server's requests (legacy era). */
export function answer(method: string): object {
  if (method === "elicitation/create") return { action: "accept", content: { name: "Ada" } };
  if (method === "sampling/createMessage")
    return { role: "assistant", content: { type: "text", text: "hello" }, model: "m" };
  if (method === "roots/list") return { roots: [{ uri: "file:///w", name: "w" }] };
  return {};
}

/** The client over stdio: one line per message, both ways. */
export function stdioWire(server: McpServer): Wire {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const running = serveStdio(server, { stdin, stdout, guardConsole: false, onEnd: () => {} });
  const seen: Seen[] = [];
  const pending = new Map<number, { method: string; resolve: (m: any) => void }>();
  let next = 1;
  let buf = "";
  const write = (m: object) => void stdin.write(`${JSON.stringify(m)}\n`);
  stdout.on("data", (chunk: Buffer) => {
    buf += chunk.toString("utf8");
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const message = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      const waiting = message.method === undefined ? pending.get(message.id) : undefined;
      seen.push(waiting ? { message, method: waiting.method } : { message });
      if (waiting) {
        pending.delete(message.id);
        waiting.resolve(message);
      } else if (message.method !== undefined && message.id !== undefined)
        write({ jsonrpc: "2.0", id: message.id, result: answer(message.method) });
    }
  });
  const request = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      const id = next++;
      pending.set(id, { method, resolve });
      write({ jsonrpc: "2.0", id, method, params });
    });
  return {
    seen,
    request,
    notify: async (method, params = {}) => write({ jsonrpc: "2.0", method, params }),
    open: async (method, params, until) => {
      const id = next++;
      const done = new Promise<any>((resolve) => pending.set(id, { method, resolve }));
      write({ jsonrpc: "2.0", id, method, params });
      await waitFor(() => until(seen));
      return {
        close: async () => {
          write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
          void done;
        },
      };
    },
    close: async () => {
      stdin.end();
      await running.closed;
    },
  };
}

/** Polls `condition` (the test's timeout bounds it). */
export async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 2));
}

const URL_ = "http://127.0.0.1:3000/mcp";
const ACCEPT = { accept: "application/json, text/event-stream", "content-type": "application/json" };

/** Reads SSE events off `body`, calling `onMessage` for each `data:`; resolves when the stream ends. */
async function readSse(
  body: ReadableStream<Uint8Array>,
  onMessage: (m: any) => void,
  signal?: AbortSignal,
): Promise<void> {
  const reader = body.getReader();
  // closing the stream is how an HTTP client cancels (a listen) or leaves (a session's GET stream)
  signal?.addEventListener("abort", () => void reader.cancel().catch(() => {}), { once: true });
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      for (let end = buf.indexOf("\n\n"); end >= 0; end = buf.indexOf("\n\n")) {
        const event = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = event
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .join("\n");
        if (data) onMessage(JSON.parse(data));
      }
    }
  } catch {
    // the stream was cancelled: the listen or the session ended
  }
}

/**
 * The client over Streamable HTTP. A session (`version` of the initialize era) keeps a GET stream open for
 * what belongs to no request; 2026-07-28 sends the headers that mirror the body on every POST.
 */
export function httpWire(server: McpServer, version: string): Wire & { readonly handler: HttpHandler } {
  const handler = createHttpHandler(server);
  const modern = version === "2026-07-28";
  const seen: Seen[] = [];
  let session: string | undefined;
  let next = 1;
  const streams: Promise<void>[] = [];
  const controllers: AbortController[] = [];
  const headersFor = (message: any): { [k: string]: string } => {
    const h: { [k: string]: string } = { ...ACCEPT, host: "127.0.0.1:3000" };
    if (session) h["mcp-session-id"] = session;
    if (session || modern) h["mcp-protocol-version"] = version;
    if (modern && message.method) {
      h["mcp-method"] = message.method;
      const field = nameField(message.method);
      const name = field && message.params?.[field];
      if (typeof name === "string") h["mcp-name"] = name;
    }
    return h;
  };
  const post = (message: object) =>
    handler(
      new Request(URL_, { method: "POST", headers: headersFor(message), body: JSON.stringify(message) }),
    );
  const onServerMessage = (message: any, method: string, id: number, resolve?: (m: any) => void) => {
    if (message.method === undefined && message.id === id) {
      seen.push({ message, method });
      resolve?.(message);
      return;
    }
    seen.push({ message });
    if (message.method !== undefined && message.id !== undefined)
      void post({ jsonrpc: "2.0", id: message.id, result: answer(message.method) });
  };
  const send = async (method: string, params: object, signal?: AbortSignal) => {
    const id = next++;
    const message = { jsonrpc: "2.0", id, method, params };
    const res = await post(message);
    if (method === "initialize") session = res.headers.get("mcp-session-id") ?? undefined;
    if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      let got: any;
      const read = readSse(res.body!, (m) => onServerMessage(m, method, id, (r) => (got = r)), signal);
      return { id, res, read, result: () => got };
    }
    const body = await res.json();
    onServerMessage(body, method, id);
    return { id, res, read: Promise.resolve(), result: () => body };
  };
  return {
    handler,
    seen,
    request: async (method, params = {}) => {
      const sent = await send(method, params);
      await sent.read;
      if (method === "initialize") {
        await post({ jsonrpc: "2.0", method: "notifications/initialized" });
        const controller = new AbortController();
        controllers.push(controller);
        const res = await handler(
          new Request(URL_, { method: "GET", headers: { ...headersFor({}), accept: "text/event-stream" } }),
        );
        if (res.body) streams.push(readSse(res.body, (m) => onServerMessage(m, "", -1), controller.signal));
      }
      return sent.result();
    },
    notify: async (method, params = {}) => void (await post({ jsonrpc: "2.0", method, params })),
    open: async (method, params, until) => {
      const controller = new AbortController();
      controllers.push(controller);
      const sent = await send(method, params, controller.signal);
      streams.push(sent.read);
      await waitFor(() => until(seen));
      return {
        close: async () => {
          controller.abort();
          await sent.read;
        },
      };
    },
    close: async () => {
      for (const c of controllers) c.abort();
      handler.close();
      await Promise.all(streams);
    },
  };
}
