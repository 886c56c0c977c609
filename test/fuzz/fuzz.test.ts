import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createHttpHandler } from "../../src/http/index.js";
import { McpError, McpServer } from "../../src/index.js";
import { encodeMessage } from "../../src/jsonrpc.js";

function server() {
  const s = new McpServer({ name: "fuzz", version: "1", onError: () => {} });
  s.tool("echo", {
    input: { type: "object", properties: { t: { type: "string" } } },
    run: ({ t }) => String(t),
  });
  s.tool("throws", {
    run: () => {
      throw new Error("x");
    },
  });
  s.resource("files://{+path}", { read: ({ path }) => path });
  s.resource("q://s{?a,b}", { read: (p) => p });
  s.prompt("p", { args: [{ name: "a", required: true }], complete: { a: (v) => [v] }, get: ({ a }) => a });
  s.prompt("mcp", {
    get: () => {
      throw new McpError(-32099, "no");
    },
  });
  return s;
}

const methods = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "notifications/cancelled",
  "notifications/initialized",
  "nope",
];

const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>) =>
  fc.oneof({ arbitrary: good, weight: 9 }, { arbitrary: bad, weight: 1 });

const params = fc.record(
  {
    name: mostly(fc.constantFrom("echo", "throws", "p", "mcp", "x"), fc.jsonValue()),
    uri: mostly(
      fc.oneof(
        fc.constantFrom("files://a/../../b", "files://%zz", "q://s?b=1&a=%C3%A9", "files://x"),
        fc.string(),
      ),
      fc.jsonValue(),
    ),
    arguments: mostly(
      fc.dictionary(fc.constantFrom("t", "a", "x"), fc.oneof(fc.string(), fc.jsonValue())),
      fc.jsonValue(),
    ),
    cursor: fc.oneof(fc.string(), fc.jsonValue()),
    level: mostly(fc.constantFrom("debug", "error"), fc.jsonValue()),
    protocolVersion: mostly(
      fc.constantFrom("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"),
      fc.jsonValue(),
    ),
    ref: mostly(
      fc.oneof(
        fc.record({ type: fc.constant("ref/prompt"), name: fc.constantFrom("p", "mcp", "x") }),
        fc.record({
          type: fc.constant("ref/resource"),
          uri: fc.constantFrom("files://{+path}", "q://s{?a,b}", "x"),
        }),
      ),
      fc.jsonValue(),
    ),
    argument: mostly(
      fc.record({ name: fc.constantFrom("a", "path", "b"), value: fc.string() }),
      fc.jsonValue(),
    ),
    requestId: fc.oneof(fc.integer(), fc.string(), fc.jsonValue()),
    _meta: fc.oneof(fc.record({ progressToken: fc.oneof(fc.string(), fc.integer()) }), fc.jsonValue()),
  },
  { requiredKeys: [] },
);

/** Messages that look like JSON-RPC: mostly well formed, with every field sometimes wrong or missing. */
const message = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        jsonrpc: mostly(fc.constant("2.0"), fc.jsonValue()),
        id: mostly(fc.oneof(fc.integer(), fc.string()), fc.oneof(fc.constant(null), fc.jsonValue())),
        method: mostly(fc.constantFrom(...methods), fc.jsonValue()),
        params: mostly(params, fc.jsonValue()),
      },
      { requiredKeys: ["jsonrpc", "id", "method"] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        jsonrpc: fc.oneof(fc.constant("2.0"), fc.jsonValue()),
        id: fc.jsonValue(),
        method: fc.jsonValue(),
        params: fc.jsonValue(),
        result: fc.jsonValue(),
        error: fc.jsonValue(),
      },
      { requiredKeys: [] },
    ),
  },
);

const validId = (id: unknown) => typeof id === "string" || (typeof id === "number" && Number.isFinite(id));

describe("fuzzing the dispatcher", () => {
  it("answers every request exactly once, well formed, and never throws", async () => {
    const s = server();
    let reached = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"),
        fc.array(fc.oneof({ arbitrary: message, weight: 4 }, { arbitrary: fc.jsonValue(), weight: 1 }), {
          maxLength: 20,
        }),
        async (version, messages) => {
          const conn = s.connect({
            send: (m) => void encodeMessage(m),
            initialized: { protocolVersion: version },
          });
          for (const m of messages) {
            const answer = await s.handle(m, conn);
            const asObject =
              typeof m === "object" && m !== null && !Array.isArray(m)
                ? (m as { [k: string]: unknown })
                : undefined;
            const isNotification =
              asObject &&
              asObject.jsonrpc === "2.0" &&
              typeof asObject.method === "string" &&
              !("id" in asObject);
            const isResponse =
              asObject &&
              asObject.jsonrpc === "2.0" &&
              asObject.method === undefined &&
              "id" in asObject &&
              ("result" in asObject || "error" in asObject);
            if (isNotification || isResponse) {
              expect(answer).toBeUndefined();
              continue;
            }
            expect(answer).toBeDefined();
            const wire = JSON.parse(encodeMessage(answer!));
            for (const a of Array.isArray(wire) ? wire : [wire]) {
              expect(a.jsonrpc).toBe("2.0");
              expect("result" in a !== "error" in a).toBe(true);
              if ("error" in a) {
                expect(Number.isInteger(a.error.code)).toBe(true);
                expect(typeof a.error.message).toBe("string");
              }
            }
            if (
              !Array.isArray(wire) &&
              asObject &&
              validId(asObject.id) &&
              asObject.jsonrpc === "2.0" &&
              typeof asObject.method === "string"
            ) {
              expect(wire.id).toBe(asObject.id);
            }
            // answers from past the envelope checks: results, or errors of the method itself
            const code = Array.isArray(wire) ? undefined : wire.error?.code;
            if (!Array.isArray(wire) && ![-32700, -32600, -32601].includes(code)) reached++;
          }
          conn.close();
        },
      ),
      { numRuns: 300 },
    );
    // the generator reaches the handlers, not only the envelope checks
    expect(reached).toBeGreaterThan(300);
  });
});

describe("fuzzing the HTTP handler", () => {
  it("answers any body with a 2xx or 4xx and a JSON-RPC body, never a 5xx", async () => {
    const handler = createHttpHandler(server(), { sessions: false });
    const body = fc.oneof(
      fc.string(),
      message.map((m) => JSON.stringify(m)),
      fc.array(message).map((m) => JSON.stringify(m)),
      fc.uint8Array().map((b) => Buffer.from(b).toString("latin1")),
    );
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.constantFrom("2025-03-26", "2025-06-18", "2025-11-25", "junk", ""),
        async (text, version) => {
          const headers: Record<string, string> = {
            host: "127.0.0.1:3000",
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          };
          if (version) headers["mcp-protocol-version"] = version;
          const res = await handler(
            new Request("http://127.0.0.1:3000/mcp", { method: "POST", headers, body: text }),
          );
          expect(res.status < 500, `${res.status} for ${text.slice(0, 80)}`).toBe(true);
          if (res.status !== 202) {
            const type = res.headers.get("content-type") ?? "";
            const payload = await res.text();
            if (type.startsWith("application/json")) expect(() => JSON.parse(payload)).not.toThrow();
            else expect(type).toBe("text/event-stream");
          }
        },
      ),
      { numRuns: 300 },
    );
    handler.close();
  });
});
