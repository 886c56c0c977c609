// docs/composition.md's gateway: a stdio server (the SDK v1 server as a child) published over HTTP
// through picomcp/proxy, with sign-in (a bearer token per person) and limits per person in front; the
// SDK v2 client calls it as two people.
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProtectedHandler } from "../src/auth/index.js";
import { LIMIT_CODE } from "../src/limits/shares.js";
import { createProxy, type ProxyServer } from "../src/proxy/index.js";

const v1 = fileURLToPath(new URL("./fixtures/proxy-upstream-v1.js", import.meta.url));
const RESOURCE = "http://127.0.0.1:3000/mcp";
const TOKENS: { [token: string]: { subject: string; scopes: string[] } } = {
  ann: { subject: "ann", scopes: [] },
  bob: { subject: "bob", scopes: [] },
};

let proxy: ProxyServer;
let handle: (request: Request) => Promise<Response>;

beforeAll(async () => {
  proxy = await createProxy(
    { command: process.execPath, args: [v1], stderr: "ignore" },
    { tools: { hide: ["crash", "add"] }, limits: { requests: { perPrincipal: 1 } }, onError: () => {} },
  );
  handle = createProtectedHandler(proxy, {
    resource: RESOURCE,
    authorizationServers: ["https://auth.example.test"],
    verifyToken: (token) => TOKENS[token],
  });
});
afterAll(async () => {
  await proxy.shutdown();
});

async function person(token: string) {
  const client = new Client({ name: token, version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(RESOURCE), {
      fetch: (url, init) => handle(new Request(url, init)),
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe("a stdio server published over HTTP behind sign-in and limits", () => {
  it("challenges a request without a token, pointing to the issuer", async () => {
    const res = await handle(
      new Request(RESOURCE, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    );
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain(
      'resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it("serves a signed-in person the narrowed tools, and counts each person's requests apart", async () => {
    const ann = await person("ann");
    const bob = await person("bob");
    try {
      const names = (await ann.listTools()).tools.map((t) => t.name);
      expect(names).toContain("echo");
      expect(names).not.toContain("crash");
      const abort = new AbortController();
      let inFlight!: () => void;
      const started = new Promise<void>((r) => {
        inFlight = r;
      });
      const slow = ann
        .callTool({ name: "slow" }, { signal: abort.signal, onprogress: () => inFlight() })
        .catch((e) => e);
      await started;
      // Ann's one request is taken: her next one is refused over HTTP with 429 and the limit's body
      const refused = await ann.callTool({ name: "echo", arguments: { text: "again" } }).catch((e) => e);
      expect(refused.data.status).toBe(429);
      expect(JSON.parse(refused.data.text).error).toMatchObject({
        code: LIMIT_CODE,
        data: { limit: "requests" },
      });
      // Bob's share is his own
      expect(await bob.callTool({ name: "echo", arguments: { text: "hi" } })).toMatchObject({
        content: [{ type: "text", text: "hi" }],
      });
      abort.abort();
      await slow;
    } finally {
      await Promise.all([ann.close(), bob.close()]);
    }
  });
});
