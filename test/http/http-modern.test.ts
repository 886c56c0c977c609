// The 2026-07-28 revision over Streamable HTTP, on the wire: dual-era routing, the headers that
// mirror the body, statuses, SSE and listen streams, cancellation by closing, CORS.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createHttpHandler, type HttpHandler } from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";
import { initialize, messagesOf, POST_HEADERS, readEvents, request, URL_ } from "../http-helpers.js";

const V = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
};
const INFO = { "io.modelcontextprotocol/serverInfo": { name: "modern-http", version: "1.0.0" } };
const SUPPORTED = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

const handlers: HttpHandler[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

function setup(options: Parameters<typeof createHttpHandler>[1] = {}) {
  const server = new McpServer({ name: "modern-http", version: "1.0.0", onError: () => {} });
  const seen = { cancelled: 0 };
  server.tool("echo", { description: "echo", run: (a: { text?: string }) => a.text ?? "" });
  server.tool("where", {
    description: "mirrors region, count, dry and nested.zone into headers",
    input: {
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        count: { type: "integer", "x-mcp-header": "Count" },
        dry: { type: "boolean", "x-mcp-header": "Dry" },
        nested: { type: "object", properties: { zone: { type: "string", "x-mcp-header": "Zone" } } },
      },
    },
    run: (a: { region?: string | null }) => `region=${a.region ?? "<none>"}`,
  });
  server.tool("chatty", {
    description: "logs, then answers",
    run: (_a, ctx) => {
      ctx.log("info", "working");
      return "done";
    },
  });
  server.tool("ask", {
    description: "needs elicitation",
    run: async (_a, ctx) => {
      const r = await ctx.elicit({
        message: "name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } },
      });
      return JSON.stringify(r);
    },
  });
  server.tool("slow", {
    description: "waits until cancelled",
    run: (_a, ctx) =>
      new Promise<string>((resolve) => {
        const t = setTimeout(() => resolve("late"), 5000);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          seen.cancelled++;
          resolve("cancelled");
        });
      }),
  });
  server.tool("busy", {
    description: "reports progress, then waits until cancelled",
    run: (_a, ctx) => {
      ctx.progress(1, 2);
      return new Promise<string>((resolve) => {
        ctx.signal.addEventListener("abort", () => {
          seen.cancelled++;
          resolve("cancelled");
        });
      });
    },
  });
  server.resource("note://a", { description: "a note", read: () => "a" });
  server.prompt("hi", { description: "hi", get: () => "hi" });
  const handler = createHttpHandler(server, options);
  handlers.push(handler);
  return { server, handler, seen };
}

/** A 2026-07-28 POST with the headers a conforming client sends, overridable (`null` drops one). */
function modern(
  handler: HttpHandler,
  method: string,
  params: { [k: string]: unknown } = {},
  headers: { [k: string]: string | null } = {},
  id: number | string = 1,
  signal?: AbortSignal,
) {
  const base: { [k: string]: string } = { ...POST_HEADERS, "mcp-protocol-version": V, "mcp-method": method };
  const name = method === "resources/read" ? params.uri : params.name;
  if (typeof name === "string") base["mcp-name"] = name;
  for (const [k, v] of Object.entries(headers)) {
    delete base[k.toLowerCase()];
    if (v !== null) base[k] = v;
  }
  const body = { jsonrpc: "2.0", id, method, params: { _meta: META, ...params } };
  return handler(
    new Request(URL_, { method: "POST", headers: base, body: JSON.stringify(body), signal: signal ?? null }),
  );
}

function raw(handler: HttpHandler, body: unknown, headers: { [k: string]: string } = {}) {
  return handler(
    new Request(URL_, {
      method: "POST",
      headers: { ...POST_HEADERS, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

const err = (id: number | string | undefined, code: number, message: string, data?: unknown) => ({
  jsonrpc: "2.0",
  ...(id === undefined ? {} : { id }),
  error: data === undefined ? { code, message } : { code, message, data },
});

const text = (t: string) => ({ resultType: "complete", content: [{ type: "text", text: t }], _meta: INFO });

async function expectAnswer(res: Response | Promise<Response>, status: number, body: unknown) {
  const r = await res;
  expect({ status: r.status, type: r.headers.get("content-type"), body: await r.json() }).toEqual({
    status,
    type: "application/json",
    body,
  });
  return r;
}

describe("dual-era routing", () => {
  it("a server/discover probe gets a modern answer, with or without headers", async () => {
    const { handler } = setup();
    const r = await expectAnswer(modern(handler, "server/discover"), 200, {
      jsonrpc: "2.0",
      id: 1,
      result: {
        resultType: "complete",
        supportedVersions: SUPPORTED,
        capabilities: {
          logging: {},
          completions: {},
          tools: { listChanged: true },
          resources: { listChanged: true, subscribe: true },
          prompts: { listChanged: true },
        },
        ttlMs: 0,
        cacheScope: "private",
        _meta: INFO,
      },
    });
    expect(r.headers.get("mcp-session-id")).toBeNull();
    // a bare probe with no version header and no _meta still gets a 2026-07-28 error, never a legacy one
    await expectAnswer(
      raw(handler, { jsonrpc: "2.0", id: 7, method: "server/discover" }),
      400,
      err(
        7,
        -32602,
        'Invalid params: _meta must carry "io.modelcontextprotocol/protocolVersion" (a string) and "io.modelcontextprotocol/clientCapabilities" (an object)',
      ),
    );
  });

  it("_meta in the body selects the modern pipeline even without the version header", async () => {
    const { handler } = setup();
    await expectAnswer(
      raw(
        handler,
        { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: META } },
        { "mcp-method": "tools/list" },
      ),
      400,
      err(2, -32020, "Header mismatch: the MCP-Protocol-Version header is required"),
    );
  });

  it("initialize opens a legacy session; its requests stay legacy; neither era → 400 naming the versions", async () => {
    const { handler } = setup();
    const sid = await initialize(handler);
    await expectAnswer(
      raw(
        handler,
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "L" } } },
        {
          "mcp-session-id": sid,
          "mcp-protocol-version": "2025-11-25",
        },
      ),
      200,
      { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "L" }] } },
    );
    // a live session with a 2026-07-28 header is still that session: the version is refused
    const wrong = await raw(
      handler,
      { jsonrpc: "2.0", id: 4, method: "tools/list" },
      {
        "mcp-session-id": sid,
        "mcp-protocol-version": V,
      },
    );
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error.code).toBe(-32022);
    const none = await raw(handler, { jsonrpc: "2.0", id: 5, method: "tools/list" });
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual(
      err(
        undefined,
        -32000,
        `Bad Request: Mcp-Session-Id header is required (initialize first, or send a 2026-07-28 request with _meta); supported versions: ${SUPPORTED.join(", ")}`,
        { supported: SUPPORTED },
      ),
    );
  });

  it("an older, unknown MCP-Protocol-Version outside a session names every revision of the endpoint", async () => {
    const { handler } = setup();
    await expectAnswer(
      raw(handler, { jsonrpc: "2.0", id: 6, method: "tools/list" }, { "mcp-protocol-version": "1.0" }),
      400,
      err(
        undefined,
        -32022,
        `Bad Request: unsupported MCP-Protocol-Version "1.0"; supported: ${SUPPORTED.join(", ")}`,
        {
          supported: SUPPORTED,
          requested: "1.0",
        },
      ),
    );
  });

  it("an unknown Mcp-Session-Id on a modern request is ignored, and none is minted", async () => {
    const { handler } = setup();
    const r = await expectAnswer(
      modern(
        handler,
        "tools/call",
        { name: "echo", arguments: { text: "x" } },
        { "mcp-session-id": "stale" },
      ),
      200,
      {
        jsonrpc: "2.0",
        id: 1,
        result: text("x"),
      },
    );
    expect(r.headers.get("mcp-session-id")).toBeNull();
    expect(handler.sessionCount).toBe(0);
  });

  it("stateless legacy mode (sessions: false) keeps serving plain requests beside modern ones", async () => {
    const { handler } = setup({ sessions: false });
    await expectAnswer(
      raw(handler, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "old" } },
      }),
      200,
      { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "old" }] } },
    );
    await expectAnswer(modern(handler, "tools/call", { name: "echo", arguments: { text: "new" } }), 200, {
      jsonrpc: "2.0",
      id: 1,
      result: text("new"),
    });
  });
});

describe("modern requests: POST only, one message, the revision's statuses", () => {
  it("GET and DELETE are 405 with Allow: POST", async () => {
    const { handler } = setup();
    for (const method of ["GET", "DELETE"]) {
      const r = await request(handler, method, { "mcp-protocol-version": V, accept: "text/event-stream" });
      expect({ status: r.status, allow: r.headers.get("allow"), body: await r.json() }).toEqual({
        status: 405,
        allow: "POST",
        body: err(undefined, -32600, "Method Not Allowed: 2026-07-28 requests use POST"),
      });
    }
  });

  it("a notification is 202; a response, a batch or a non-object is 400 -32600", async () => {
    const { handler } = setup();
    const h = { "mcp-protocol-version": V };
    const n = await raw(handler, { jsonrpc: "2.0", method: "notifications/whatever" }, h);
    expect([n.status, await n.text()]).toEqual([202, ""]);
    await expectAnswer(
      raw(handler, { jsonrpc: "2.0", id: 1, result: {} }, h),
      400,
      err(undefined, -32600, "Invalid Request: clients do not send responses in 2026-07-28"),
    );
    await expectAnswer(
      raw(handler, [{ jsonrpc: "2.0", id: 1, method: "tools/list" }], h),
      400,
      err(undefined, -32600, "Invalid Request: batches are not part of 2026-07-28"),
    );
    await expectAnswer(
      raw(handler, "42", h),
      400,
      err(undefined, -32600, "Invalid Request: a message must be a JSON object"),
    );
    await expectAnswer(
      raw(handler, "{nope", h),
      400,
      err(undefined, -32700, "Parse error: the message is not valid JSON"),
    );
  });

  it("transport refusals use the revision's codes, never -32000", async () => {
    const { handler } = setup({ maxBodyBytes: 64 });
    const h = { "mcp-protocol-version": V };
    await expectAnswer(
      raw(handler, {}, { ...h, accept: "application/json" }),
      406,
      err(undefined, -32600, "Not Acceptable: Accept must list application/json and text/event-stream"),
    );
    await expectAnswer(
      raw(handler, {}, { ...h, "content-type": "text/plain" }),
      415,
      err(undefined, -32600, "Unsupported Media Type: Content-Type must be application/json"),
    );
    await expectAnswer(
      raw(handler, "x".repeat(100), h),
      413,
      err(undefined, -32600, "Payload Too Large: the body must not exceed 64 bytes"),
    );
  });

  it("missing _meta 400 -32602; unsupported version 400 -32022; missing capability 400 -32021", async () => {
    const { handler } = setup();
    const noMeta = await handler(
      new Request(URL_, {
        method: "POST",
        headers: { ...POST_HEADERS, "mcp-protocol-version": V, "mcp-method": "tools/list" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/list",
          params: { _meta: { "io.modelcontextprotocol/protocolVersion": V } },
        }),
      }),
    );
    expect([noMeta.status, (await noMeta.json()).error.code]).toEqual([400, -32602]);
    const v = "2099-01-01";
    const meta = { ...META, "io.modelcontextprotocol/protocolVersion": v };
    await expectAnswer(
      modern(handler, "server/discover", { _meta: meta }, { "mcp-protocol-version": v }),
      400,
      err(1, -32022, `Unsupported protocol version: ${v}`, { supported: SUPPORTED, requested: v }),
    );
    const cap = await modern(handler, "tools/call", { name: "ask", arguments: {} });
    expect(cap.status).toBe(400);
    expect(await cap.json()).toMatchObject({
      id: 1,
      error: { code: -32021, data: { requiredCapabilities: { elicitation: {} } } },
    });
  });

  it("unknown and removed methods are 404 -32601; other errors 200", async () => {
    const { handler } = setup();
    for (const method of [
      "nope/nothing",
      "initialize",
      "ping",
      "logging/setLevel",
      "resources/subscribe",
      "resources/unsubscribe",
    ]) {
      await expectAnswer(
        modern(handler, method, { uri: "note://a" }, { "mcp-name": null }, "m"),
        404,
        err("m", -32601, `Method not found: ${method}`),
      );
    }
    await expectAnswer(
      modern(handler, "tools/call", { name: "missing", arguments: {} }),
      200,
      err(1, -32602, "Unknown tool: missing", { name: "missing" }),
    );
  });
});

describe("headers that mirror the body (-32020)", () => {
  const mismatch = (why: string, id: number | string = 1) => err(id, -32020, `Header mismatch: ${why}`);

  it("MCP-Protocol-Version must equal _meta's version", async () => {
    const { handler } = setup();
    const meta = { ...META, "io.modelcontextprotocol/protocolVersion": "v999" };
    await expectAnswer(
      modern(handler, "server/discover", { _meta: meta }),
      400,
      mismatch('the MCP-Protocol-Version header "2026-07-28" does not match _meta "v999"'),
    );
  });

  it("Mcp-Method: required, exact, case-sensitive value, case-insensitive name", async () => {
    const { handler } = setup();
    await expectAnswer(
      modern(handler, "tools/list", {}, { "mcp-method": null }),
      400,
      mismatch("the Mcp-Method header is required"),
    );
    await expectAnswer(
      modern(handler, "tools/list", {}, { "mcp-method": "TOOLS/LIST" }),
      400,
      mismatch('the Mcp-Method header "TOOLS/LIST" does not match the method "tools/list"'),
    );
    const ok = await modern(handler, "tools/list", {}, { "MCP-METHOD": "tools/list" });
    expect(ok.status).toBe(200);
  });

  it("Mcp-Name: params.name, params.uri; trimmed; the base64 form decoded", async () => {
    const { handler } = setup();
    await expectAnswer(
      modern(handler, "tools/call", { name: "echo", arguments: {} }, { "mcp-name": null }),
      400,
      mismatch("the Mcp-Name header is required for tools/call"),
    );
    await expectAnswer(
      modern(handler, "tools/call", { name: "echo", arguments: {} }, { "mcp-name": "other" }),
      400,
      mismatch("the Mcp-Name header does not match params.name"),
    );
    await expectAnswer(
      modern(handler, "resources/read", { uri: "note://a" }, { "mcp-name": "note://b" }),
      400,
      mismatch("the Mcp-Name header does not match params.uri"),
    );
    await expectAnswer(
      modern(handler, "tasks/get", { taskId: "t1" }, { "mcp-name": "t2" }),
      400,
      mismatch("the Mcp-Name header does not match params.taskId"),
    );
    await expectAnswer(
      modern(handler, "prompts/get", { name: "hi" }, { "mcp-name": null }),
      400,
      mismatch("the Mcp-Name header is required for prompts/get"),
    );
    await expectAnswer(
      modern(handler, "tools/call", { name: "echo", arguments: { text: "t" } }, { "mcp-name": "  echo  " }),
      200,
      { jsonrpc: "2.0", id: 1, result: text("t") },
    );
    await expectAnswer(
      modern(
        handler,
        "tools/call",
        { name: "echo", arguments: { text: "b" } },
        { "mcp-name": `=?base64?${btoa("echo")}?=` },
      ),
      200,
      { jsonrpc: "2.0", id: 1, result: text("b") },
    );
    const read = await modern(handler, "resources/read", { uri: "note://a" });
    expect(read.status).toBe(200);
  });

  it("Mcp-Param-*: required when the argument is given, decoded strictly, compared by type", async () => {
    const { handler } = setup();
    const where = (args: object, headers: { [k: string]: string | null }) =>
      modern(handler, "tools/call", { name: "where", arguments: args }, headers);
    const ok = (t: string) => ({ jsonrpc: "2.0", id: 1, result: text(t) });
    await expectAnswer(
      where({ region: "us-west1" }, { "mcp-param-region": "us-west1" }),
      200,
      ok("region=us-west1"),
    );
    await expectAnswer(
      where({ region: "Hello" }, { "Mcp-Param-Region": "=?base64?SGVsbG8=?=" }),
      200,
      ok("region=Hello"),
    );
    await expectAnswer(
      where({ region: "Hello, 世界" }, { "mcp-param-region": "=?base64?SGVsbG8sIOS4lueVjA==?=" }),
      200,
      ok("region=Hello, 世界"),
    );
    await expectAnswer(
      where({ region: "SGVsbG8=" }, { "mcp-param-region": "SGVsbG8=" }),
      200,
      ok("region=SGVsbG8="),
    );
    await expectAnswer(
      where({ region: "=?base64?SGVsbG8=" }, { "mcp-param-region": "=?base64?SGVsbG8=" }),
      200,
      ok("region==?base64?SGVsbG8="),
    );
    // null or absent: the header is not expected
    await expectAnswer(where({ region: null }, {}), 200, {
      jsonrpc: "2.0",
      id: 1,
      // past the headers: the tool's own schema refuses the null
      result: {
        ...text("Invalid arguments for tool where: region: expected string, received null"),
        isError: true,
      },
    });
    await expectAnswer(where({}, {}), 200, ok("region=<none>"));
    // integers compare numerically, booleans as true/false, nested properties by their path
    await expectAnswer(
      where(
        { count: 42, dry: true, nested: { zone: "z1" } },
        { "mcp-param-count": "42.0", "mcp-param-dry": "true", "mcp-param-zone": "z1" },
      ),
      200,
      ok("region=<none>"),
    );
    const bad = (why: string) => mismatch(why);
    await expectAnswer(
      where({ region: "Hello" }, {}),
      400,
      bad("the Mcp-Param-Region header is required when arguments.region is given"),
    );
    await expectAnswer(
      where({ region: "Hello" }, { "mcp-param-region": "Help" }),
      400,
      bad("the Mcp-Param-Region header does not match arguments.region"),
    );
    for (const v of ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", `=?base64?${btoa("\xff\xfe")}?=`]) {
      await expectAnswer(
        where({ region: "Hello" }, { "mcp-param-region": v }),
        400,
        bad("the Mcp-Param-Region header is not a valid value (plain visible ASCII, or =?base64?…?=)"),
      );
    }
    await expectAnswer(
      where({ count: 42 }, { "mcp-param-count": "43" }),
      400,
      bad("the Mcp-Param-Count header does not match arguments.count"),
    );
    // numerically, as a decimal number: a proxy that routes on the header reads what the server reads
    for (const v of ["0x2A", "0b101010", "0o52", "+42", "042", "42.", ".42e2", "4_2"]) {
      await expectAnswer(
        where({ count: 42 }, { "mcp-param-count": v }),
        400,
        bad("the Mcp-Param-Count header does not match arguments.count"),
      );
    }
    for (const v of ["42", "42.00", "4.2e1", "4200E-2"]) {
      await expectAnswer(where({ count: 42 }, { "mcp-param-count": v }), 200, ok("region=<none>"));
    }
    await expectAnswer(where({ count: -7 }, { "mcp-param-count": "-7" }), 200, ok("region=<none>"));
    await expectAnswer(
      where({ dry: false }, { "mcp-param-dry": "False" }),
      400,
      bad("the Mcp-Param-Dry header does not match arguments.dry"),
    );
    await expectAnswer(
      where({ nested: { zone: "z1" } }, {}),
      400,
      bad("the Mcp-Param-Zone header is required when arguments.nested.zone is given"),
    );
  });
});

describe("x-mcp-header annotations are checked at registration", () => {
  const server = new McpServer({ name: "reg", version: "1.0.0" });
  const register =
    (properties: object, extra: object = {}) =>
    () =>
      server.tool("bad", { input: { type: "object", properties, ...extra } as never, run: () => "" });
  it.each([
    [
      { a: { type: "number", "x-mcp-header": "A" } },
      {},
      '/properties/a is only allowed on a property of type "string", "integer" or "boolean"',
    ],
    [
      { a: { type: "string", "x-mcp-header": "A B" } },
      {},
      "/properties/a must be a header name token (letters, digits, !#$%&'*+.^_`|~-)",
    ],
    [
      { a: { type: "string", "x-mcp-header": "" } },
      {},
      "/properties/a must be a header name token (letters, digits, !#$%&'*+.^_`|~-)",
    ],
    [
      { a: { type: "string", "x-mcp-header": "R" }, b: { type: "string", "x-mcp-header": "r" } },
      {},
      '/properties/b repeats "r" (names are case-insensitive)',
    ],
    [
      { a: { type: "array", items: { type: "string", "x-mcp-header": "A" } } },
      {},
      "/properties/a/items is only allowed on a property reached through properties",
    ],
    [
      {},
      { anyOf: [{ properties: { a: { type: "string", "x-mcp-header": "A" } } }] },
      "/anyOf/0/properties/a is only allowed on a property reached through properties",
    ],
    [
      {},
      { $defs: { d: { type: "string", "x-mcp-header": "A" } } },
      "/$defs/d is only allowed on a property reached through properties",
    ],
  ])("%j %j", (properties, extra, where) => {
    expect(register(properties, extra)).toThrow(new TypeError(`Tool "bad": the "x-mcp-header" at ${where}`));
  });
  it("a Standard Schema's metadata carries it too (zod .meta)", () => {
    const input = z.object({
      region: z.string().meta({ "x-mcp-header": "Region" }),
      n: z.number().int().meta({ "x-mcp-header": "N" }).optional(),
    });
    server.tool("zod", { input, run: () => "" });
    expect(server.toolHeaders("zod")).toEqual([
      { path: ["region"], name: "Region", header: "mcp-param-region", type: "string" },
      { path: ["n"], name: "N", header: "mcp-param-n", type: "integer" },
    ]);
    const float = z.object({ x: z.number().meta({ "x-mcp-header": "X" }) });
    expect(() => server.tool("float", { input: float, run: () => "" })).toThrow(
      'Tool "float": the "x-mcp-header" at /properties/x is only allowed on a property of type "string", "integer" or "boolean"',
    );
  });

  it("a root annotation is refused too; a nested properties chain is fine", () => {
    expect(() =>
      server.tool("root", { input: { type: "object", "x-mcp-header": "X", properties: {} }, run: () => "" }),
    ).toThrow(
      'Tool "root": the "x-mcp-header" at the schema root is only allowed on a property reached through properties',
    );
    expect(
      register({ o: { type: "object", properties: { z: { type: "integer", "x-mcp-header": "Z" } } } }),
    ).not.toThrow();
  });
});

describe("streams", () => {
  it("SSE once a notification precedes the result: no ids, X-Accel-Buffering: no", async () => {
    const { handler } = setup();
    const meta = { ...META, "io.modelcontextprotocol/logLevel": "info" };
    const res = await modern(handler, "tools/call", { name: "chatty", arguments: {}, _meta: meta });
    expect([res.status, res.headers.get("content-type"), res.headers.get("x-accel-buffering")]).toEqual([
      200,
      "text/event-stream",
      "no",
    ]);
    const events = await readEvents(res);
    expect(events.every((e) => e.id === undefined && e.retry === undefined)).toBe(true);
    expect(messagesOf(events)).toEqual([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "working" } },
      { jsonrpc: "2.0", id: 1, result: text("done") },
    ]);
    // without a logLevel nothing is logged, so the answer is plain JSON
    await expectAnswer(modern(handler, "tools/call", { name: "chatty", arguments: {} }), 200, {
      jsonrpc: "2.0",
      id: 1,
      result: text("done"),
    });
  });

  it("closing an SSE response cancels its request", async () => {
    const { handler, seen } = setup();
    const meta = { ...META, progressToken: "p" };
    const res = await modern(handler, "tools/call", { name: "busy", arguments: {}, _meta: meta });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const events = await readEvents(res, 1);
    expect(messagesOf(events)).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: "p", progress: 1, total: 2 },
      },
    ]);
    for (let i = 0; seen.cancelled === 0 && i < 100; i++) await new Promise((r) => setTimeout(r, 5));
    expect(seen.cancelled).toBe(1);
  });

  it("closing the request cancels it", async () => {
    const { handler, seen } = setup();
    const abort = new AbortController();
    const pending = modern(handler, "tools/call", { name: "slow", arguments: {} }, {}, 1, abort.signal);
    await new Promise((r) => setTimeout(r, 20));
    abort.abort();
    const res = await pending;
    expect(res.status).toBe(202);
    expect(seen.cancelled).toBe(1);
  });

  it("subscriptions/listen: ack first, keep-alives, only the kinds asked for, beside a legacy session", async () => {
    const { server, handler } = setup({ keepAliveMs: 20 });
    const sid = await initialize(handler);
    const legacy = await request(handler, "GET", {
      accept: "text/event-stream",
      "mcp-session-id": sid,
      "mcp-protocol-version": "2025-11-25",
    });
    const res = await modern(
      handler,
      "subscriptions/listen",
      { notifications: { toolsListChanged: true, promptsListChanged: false } },
      {},
      "L",
    );
    expect([res.status, res.headers.get("content-type"), res.headers.get("x-accel-buffering")]).toEqual([
      200,
      "text/event-stream",
      "no",
    ]);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    while (!buf.includes(": keepalive")) buf += (await reader.read()).value ?? "";
    server.prompt("p2", { description: "p2", get: () => "p2" });
    server.tool("t2", { description: "t2", run: () => "t2" });
    while (!buf.includes("tools/list_changed")) buf += (await reader.read()).value ?? "";
    await reader.cancel();
    const frames = buf
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    const sub = { "io.modelcontextprotocol/subscriptionId": "L" };
    expect(frames).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { toolsListChanged: true }, _meta: sub },
      },
      { jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: sub } },
    ]);
    expect(buf).not.toContain("id: ");
    // the legacy session's GET stream got both, in its own shape
    const old = messagesOf(await readEvents(legacy, 3, 500));
    expect(old).toEqual([
      { jsonrpc: "2.0", method: "notifications/prompts/list_changed" },
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    ]);
  });
  it("maxListenStreams caps open listen streams: one more is 503, a closed one frees its place", async () => {
    const { handler } = setup({ maxListenStreams: 1 });
    const listen = (id: number) =>
      modern(handler, "subscriptions/listen", { notifications: { toolsListChanged: true } }, {}, id);
    const first = await listen(1);
    expect(first.headers.get("content-type")).toBe("text/event-stream");
    const full = await listen(2);
    expect([full.status, full.headers.get("retry-after"), await full.json()]).toEqual([
      503,
      "5",
      err(2, -32603, "Service Unavailable: too many listen streams are open"),
    ]);
    await first.body!.cancel();
    await new Promise((r) => setTimeout(r, 10));
    const again = await listen(3);
    expect(again.headers.get("content-type")).toBe("text/event-stream");
    await again.body!.cancel();
  });

  it("closing the handler ends a listen stream with its final result", async () => {
    const { handler } = setup();
    const res = await modern(
      handler,
      "subscriptions/listen",
      { notifications: { promptsListChanged: true } },
      {},
      5,
    );
    const reading = readEvents(res);
    await new Promise((r) => setTimeout(r, 10));
    handler.close();
    const sub = { "io.modelcontextprotocol/subscriptionId": 5 };
    expect(messagesOf(await reading)).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { promptsListChanged: true }, _meta: sub },
      },
      { jsonrpc: "2.0", id: 5, result: { resultType: "complete", _meta: { ...INFO, ...sub } } },
    ]);
  });
});

describe("CORS for browser clients", () => {
  const origin = "http://localhost:5173";

  it("a preflight allows the new headers; responses expose what a client reads", async () => {
    const { handler } = setup();
    const pre = await handler(
      new Request(URL_, {
        method: "OPTIONS",
        headers: {
          host: "127.0.0.1:3000",
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "mcp-protocol-version, mcp-method, mcp-name, mcp-param-region",
        },
      }),
    );
    expect([
      pre.status,
      pre.headers.get("access-control-allow-headers"),
      pre.headers.get("access-control-allow-origin"),
    ]).toEqual([204, "mcp-protocol-version, mcp-method, mcp-name, mcp-param-region", origin]);
    const bare = await handler(
      new Request(URL_, { method: "OPTIONS", headers: { host: "127.0.0.1:3000", origin } }),
    );
    expect(bare.headers.get("access-control-allow-headers")).toBe(
      "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name",
    );
    const res = await modern(handler, "tools/list", {}, { origin });
    expect([
      res.status,
      res.headers.get("access-control-allow-origin"),
      res.headers.get("access-control-expose-headers"),
    ]).toEqual([200, origin, "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after"]);
  });
});

describe("an errorStatus hook that fails", () => {
  it.each([
    [
      "throws",
      () => {
        throw new Error("hook bug");
      },
    ],
    ["gives headers no Response can carry", () => ({ status: 403, headers: { "x-why": "a\nb" } })],
  ])("%s: the default status, in both eras; every request still gets its one answer", async (_what, hook) => {
    const { handler } = setup({ errorStatus: hook });
    const res = await modern(handler, "tools/call", { name: "nope" });
    expect([res.status, res.headers.get("x-why"), (await res.json()).error.code]).toEqual([
      200,
      null,
      -32602,
    ]);
    const sid = await initialize(handler);
    const legacy = await handler(
      new Request(URL_, {
        method: "POST",
        headers: { ...POST_HEADERS, "mcp-session-id": sid },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "nope" } }),
      }),
    );
    expect(legacy.status).toBe(200);
    expect(await legacy.json()).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32602, message: "Unknown tool: nope", data: { name: "nope" } },
    });
  });
});
