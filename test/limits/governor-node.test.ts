// The Node bridge offers the client's address as the key of an anonymous caller: two anonymous
// clients on real sockets (127.0.0.1 and 127.0.0.2) then have rate budgets of their own; without
// the key they share one.
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type NodeServer, remoteAddress, serve } from "../../src/http/node.js";
import { governed, META } from "../governor-helpers.js";

const servers: NodeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** A 2026-07-28 tools/call from `localAddress`; its status. */
function callFrom(url: string, localAddress: string, id: number): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: {}, _meta: META },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        localAddress,
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "echo",
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode!));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("remoteAddress as limits.key", () => {
  it("gives each address a bucket of its own; without it every anonymous caller shares one", async () => {
    const rates = { methods: { "tools/call": { perMinute: 1 } } };
    for (const key of [remoteAddress, undefined]) {
      const { server } = governed({ rates });
      const http = await serve(server, { port: 0, ...(key ? { limits: { key } } : {}) });
      servers.push(http);
      expect(await callFrom(http.url, "127.0.0.1", 1)).toBe(200);
      expect(await callFrom(http.url, "127.0.0.2", 2)).toBe(key ? 200 : 429);
      expect(await callFrom(http.url, "127.0.0.1", 3)).toBe(429);
    }
    expect(remoteAddress(new Request("http://x/"))).toBeUndefined();
  });
});
