// A notification whose handling rejects (a server bug) still ends its exchange: the handler answers
// 500 and the request's connection is closed, no longer among those a drain would cancel.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createHttpHandler } from "../../src/http/index.js";
import { McpServer } from "../../src/index.js";
import { POST_HEADERS, URL_ } from "../http-helpers.js";

const restore: (() => void)[] = [];
afterEach(() => {
  for (const r of restore.splice(0)) r();
});

describe("a rejected notification", () => {
  it("is answered 500 and its connection is closed", async () => {
    const server = new McpServer({ name: "failing", version: "1.0.0", onError: () => {} });
    const handleNow = vi
      .spyOn(server, "handleNow")
      .mockImplementation(() => Promise.reject(new Error("bug")));
    restore.push(() => handleNow.mockRestore());
    const connect = server.connect.bind(server);
    const opened: ReturnType<typeof connect>[] = [];
    const spy = vi.spyOn(server, "connect").mockImplementation((options) => {
      const c = connect(options);
      opened.push(c);
      return c;
    });
    restore.push(() => spy.mockRestore());
    const handler = createHttpHandler(server, { sessions: false });
    restore.push(() => handler.close());
    const res = await handler(
      new Request(URL_, {
        method: "POST",
        headers: { ...POST_HEADERS, "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/roots/list_changed" }),
      }),
    );
    expect(res.status).toBe(500);
    expect(handleNow).toHaveBeenCalledTimes(1);
    expect(opened.map((c) => c.closed)).toEqual([true]);
  });
});
