// The Node bridge keys an anonymous caller by its address: two anonymous clients on real sockets
// (127.0.0.1 and 127.0.0.2) have rate budgets of their own; a limits.key that names no one makes
// them share one.
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

describe("anonymous callers of the Node bridge", () => {
  it("each address has a bucket of its own by default (and with remoteAddress as limits.key); a key that names none makes them one", async () => {
    const rates = { methods: { "tools/call": { perMinute: 1 } } };
    for (const key of [undefined, remoteAddress, () => undefined]) {
      const { server } = governed({ rates });
      const http = await serve(server, { port: 0, ...(key ? { limits: { key } } : {}) });
      servers.push(http);
      const own = key !== undefined && key !== remoteAddress ? 429 : 200;
      expect(await callFrom(http.url, "127.0.0.1", 1)).toBe(200);
      expect(await callFrom(http.url, "127.0.0.2", 2)).toBe(own);
      expect(await callFrom(http.url, "127.0.0.1", 3)).toBe(429);
    }
    expect(remoteAddress(new Request("http://x/"))).toBeUndefined();
  });
});
