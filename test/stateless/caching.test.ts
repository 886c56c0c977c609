/** 2026-07-28 caching hints of lists. */
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { modernPeer } from "../modern-helpers.js";

describe("2026-07-28: the caching hint of resources/list", () => {
  it("is the shortest of statics and templates, and follows a template's removal", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0", cache: { ttlMs: 60_000, scope: "public" } });
    s.resource("test://a", { read: () => "a" });
    const t = s.resource("test://t/{id}", { cache: { ttlMs: 5000 }, read: ({ id }) => id });
    const p = modernPeer(s);
    const hint = async () => {
      const { ttlMs, cacheScope } = (await p.request("resources/list")).answer.result;
      return { ttlMs, cacheScope };
    };
    expect(await hint()).toEqual({ ttlMs: 5000, cacheScope: "public" });
    t.remove();
    expect(await hint()).toEqual({ ttlMs: 60_000, cacheScope: "public" });
    s.resource("test://p/{id}", { cache: { scope: "private" }, read: ({ id }) => id });
    expect(await hint()).toEqual({ ttlMs: 60_000, cacheScope: "private" });
  });
});
