// Mirrored headers agree with the body in every era where they are sent: a 2025 request whose Mcp-Method,
// Mcp-Name or Mcp-Param-* contradict it is refused (-32020, 400), as a 2026-07-28 one is; integer
// Mcp-Param-* values are compared exactly, not as binary64.
import { afterEach, describe, expect, it } from "vitest";
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";
import { call, initBody, initialize, post } from "../http-helpers.js";
import { meta } from "../modern-helpers.js";

const handlers: HttpHandler[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

function setup(options: HttpHandlerOptions = {}) {
  const server = new McpServer({ name: "agree", version: "1.0.0", onError: () => {} });
  server.tool("whoami", { run: () => "me" });
  server.tool("delete_all", { run: () => "deleted" });
  server.tool("where", {
    input: {
      type: "object",
      properties: {
        count: { type: "integer", "x-mcp-header": "Count" },
        region: { type: "string", "x-mcp-header": "Region" },
      },
    },
    run: (args: { count?: number }) => `count=${args.count ?? "-"}`,
  });
  server.prompt("hi", { get: () => "hi" });
  const handler = createHttpHandler(server, options);
  handlers.push(handler);
  return handler;
}

const mismatch = (id: number | undefined, why: string) => ({
  jsonrpc: "2.0",
  ...(id === undefined ? {} : { id }),
  error: { code: -32020, message: `Header mismatch: ${why}` },
});

async function wire(res: Response) {
  return [res.status, await res.json()];
}

describe("a 2025-11-25 session request with mirrored headers", () => {
  it("is refused when Mcp-Method or Mcp-Name contradicts its body: a gateway routed on them", async () => {
    const handler = setup();
    const sid = await initialize(handler);
    const headers = { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
    expect(
      await wire(await post(handler, call(1, "delete_all"), { ...headers, "mcp-method": "tools/list" })),
    ).toEqual([
      400,
      mismatch(1, 'the Mcp-Method header "tools/list" does not match the method "tools/call"'),
    ]);
    expect(
      await wire(await post(handler, call(2, "delete_all"), { ...headers, "mcp-name": "whoami" })),
    ).toEqual([400, mismatch(2, "the Mcp-Name header does not match params.name")]);
    const list = { jsonrpc: "2.0", id: 3, method: "tools/list" };
    expect(await wire(await post(handler, list, { ...headers, "mcp-name": "whoami" }))).toEqual([
      400,
      mismatch(3, "the Mcp-Name header is sent, but tools/list names nothing"),
    ]);
    const answer = { jsonrpc: "2.0", id: "x", result: {} };
    expect(await wire(await post(handler, answer, { ...headers, "mcp-method": "tools/call" }))).toEqual([
      400,
      mismatch(undefined, 'the Mcp-Method header "tools/call" does not match the body, which is no request'),
    ]);
  });

  it("is served when they agree, or are not sent", async () => {
    const handler = setup();
    const sid = await initialize(handler);
    const headers = { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
    for (const extra of [
      {},
      { "mcp-method": "tools/call", "mcp-name": "whoami" },
      { "mcp-name": ` =?base64?${btoa("whoami")}?= ` },
    ]) {
      const res = await post(handler, call(4, "whoami"), { ...headers, ...extra });
      expect([res.status, (await res.json()).result?.content]).toEqual([200, [{ type: "text", text: "me" }]]);
    }
    const prompt = { jsonrpc: "2.0", id: 5, method: "prompts/get", params: { name: "hi" } };
    expect((await post(handler, prompt, { ...headers, "mcp-name": "hi" })).status).toBe(200);
  });

  it("is refused when a sent Mcp-Param-* contradicts the argument", async () => {
    const handler = setup();
    const sid = await initialize(handler);
    const headers = { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
    const res = await post(handler, call(6, "where", { count: 5 }), { ...headers, "mcp-param-count": "6" });
    expect(await wire(res)).toEqual([
      400,
      mismatch(6, "the Mcp-Param-Count header does not match arguments.count"),
    ]);
    // not sent: nothing to contradict in this era
    const plain = await post(handler, call(7, "where", { count: 5 }), headers);
    expect((await plain.json()).result.content[0].text).toBe("count=5");
  });

  it("is refused without sessions, on initialize, and in a batch where one message disagrees", async () => {
    const stateless = setup({ sessions: false });
    const res = await post(stateless, call(8, "delete_all"), {
      "mcp-protocol-version": "2025-11-25",
      "mcp-method": "ping",
    });
    expect(await wire(res)).toEqual([
      400,
      mismatch(8, 'the Mcp-Method header "ping" does not match the method "tools/call"'),
    ]);
    const init = await post(setup(), initBody(), { "mcp-method": "tools/call" });
    expect(await wire(init)).toEqual([
      400,
      mismatch(0, 'the Mcp-Method header "tools/call" does not match the method "initialize"'),
    ]);
    const batching = setup();
    const sid = await initialize(batching, "2025-03-26");
    const batch = [call(9, "whoami"), { jsonrpc: "2.0", id: 10, method: "tools/list" }];
    const b = await post(batching, batch, {
      "mcp-session-id": sid,
      "mcp-protocol-version": "2025-03-26",
      "mcp-method": "tools/call",
    });
    expect(await wire(b)).toEqual([
      400,
      // 2025-03-26 spells an answer to no request with "id": null
      {
        ...mismatch(undefined, 'the Mcp-Method header "tools/call" does not match the method "tools/list"'),
        id: null,
      },
    ]);
  });
});

describe("an integer Mcp-Param-* header", () => {
  const modern = (handler: HttpHandler, count: number, header: string) =>
    post(
      handler,
      {
        jsonrpc: "2.0",
        id: 11,
        method: "tools/call",
        params: { name: "where", arguments: { count }, _meta: meta() },
      },
      {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "where",
        "mcp-param-count": header,
      },
    );

  it("matches the argument only when it denotes exactly the same integer", async () => {
    const handler = setup();
    for (const v of ["41.99999999999999999", "42.00000000000000001", "42.5", "4.2", "1e400", "42e-1"]) {
      expect(await wire(await modern(handler, 42, v))).toEqual([
        400,
        mismatch(11, "the Mcp-Param-Count header does not match arguments.count"),
      ]);
    }
    for (const v of ["42", "42.000", "4.2e1", "420E-1", "0.42e+2"])
      expect((await modern(handler, 42, v)).status).toBe(200);
    expect((await modern(handler, 0, "-0.0e5")).status).toBe(200);
    // a large integer argument: exact in binary64, and exactly what the header spells
    expect((await modern(handler, 2 ** 60, "1152921504606846976")).status).toBe(200);
    expect((await modern(handler, 2 ** 60, "1152921504606846977")).status).toBe(400);
  });
});
