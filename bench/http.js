// The fetch handler in-process, both eras side by side: a tools/call POST in a 2025-11-25 session, the
// same call as a 2026-07-28 request (headers checked, a fresh connection per request, an x-mcp-header
// argument mirrored), and tools/list in each. Microseconds per request (Request built, Response read),
// the best of 5 interleaved rounds.
// Run after `npm run build`; `node bench/http.js [dist dir]` measures another build (e.g. main's).
import { pathToFileURL } from "node:url";

const dist = process.argv[2]
  ? pathToFileURL(`${process.argv[2]}/`).href
  : new URL("../dist/", import.meta.url).href;
const { McpServer } = await import(`${dist}index.js`);
const { createHttpHandler } = await import(`${dist}http/index.js`);

const URL_ = "http://127.0.0.1:3000/mcp";
const BASE = {
  host: "127.0.0.1:3000",
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
};
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

function setup() {
  const server = new McpServer({ name: "bench", version: "1" });
  server.tool("where", {
    description: "region is mirrored",
    input: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } },
    run: ({ region }) => `region=${region}`,
  });
  for (let i = 0; i < 20; i++) server.tool(`t${i}`, { description: `tool ${i}`, run: () => "x" });
  return createHttpHandler(server);
}

const post = (handler, body, headers) =>
  handler(
    new Request(URL_, { method: "POST", headers: { ...BASE, ...headers }, body: JSON.stringify(body) }),
  ).then(async (r) => {
    if (r.status !== 200) throw new Error(`status ${r.status}: ${await r.text()}`);
    return r.text();
  });

async function legacy(handler) {
  const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "b", version: "1" } };
  const res = await handler(
    new Request(URL_, {
      method: "POST",
      headers: BASE,
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: init }),
    }),
  );
  const sid = res.headers.get("mcp-session-id");
  await res.text();
  const h = { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
  await handler(
    new Request(URL_, {
      method: "POST",
      headers: { ...BASE, ...h },
      body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    }),
  );
  return h;
}

/** Microseconds per call; NaN when the build does not serve it (an older build and 2026-07-28). */
async function time(n, fn) {
  try {
    await fn(-1);
  } catch {
    return Number.NaN;
  }
  for (let i = 0; i < 500; i++) await fn(i);
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  return Number(process.hrtime.bigint() - t) / n / 1000;
}

export async function benchHttp(n = 5000) {
  const handler = setup();
  const session = await legacy(handler);
  const modern = (method, extra = {}) => ({
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...extra,
  });
  const call = (id, params) => ({ jsonrpc: "2.0", id, method: "tools/call", params });
  const list = (id, params) => ({ jsonrpc: "2.0", id, method: "tools/list", params });
  const cases = {
    legacyCallUs: (i) => post(handler, call(i, { name: "where", arguments: { region: "eu" } }), session),
    modernCallUs: (i) =>
      post(
        handler,
        call(i, { name: "where", arguments: { region: "eu" }, _meta: META }),
        modern("tools/call", { "mcp-name": "where", "mcp-param-region": "eu" }),
      ),
    legacyListUs: (i) => post(handler, list(i, {}), session),
    modernListUs: (i) => post(handler, list(i, { _meta: META }), modern("tools/list")),
  };
  // interleaved rounds, the best of each: the machine is shared, and noise only ever adds time
  const best = {};
  for (let round = 0; round < 5; round++) {
    for (const [name, fn] of Object.entries(cases))
      best[name] = Math.min(best[name] ?? Infinity, await time(n, fn));
  }
  handler.close();
  return Object.fromEntries(Object.entries(best).map(([k, v]) => [k, +v.toFixed(1)]));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) console.table([await benchHttp()]);
