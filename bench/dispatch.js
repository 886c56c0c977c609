// Server-side dispatch, side by side: the same requests, as JSON text, into picomcp and into the official
// SDK's McpServer; each answer is serialized back to text. Run after `npm run build`.
import { ResourceTemplate, McpServer as SdkServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { McpServer } from "../dist/index.js";

const INIT = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } };

/** A picomcp server with `nTemplates` templates, as a text-in/text-out handler (`modern`: 2026-07-28 requests, no initialize). */
export function picomcp(nTemplates, modern = false) {
  const server = new McpServer({ name: "bench", version: "1" });
  server.tool("add", { input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => String(a + b) });
  for (let i = 0; i < nTemplates; i++)
    server.resource(`app${i}://items/{id}`, { read: ({ id }) => `item ${id}` });
  server.resource("config://app", { read: () => "theme=dark" });
  const conn = server.connect({ send: () => {} });
  if (!modern) server.handle({ jsonrpc: "2.0", id: 0, method: "initialize", params: INIT }, conn);
  return async (text) => JSON.stringify(await server.handle(JSON.parse(text), conn));
}

const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}';

/** The same request as a 2026-07-28 client sends it: with the `_meta` envelope in its params. */
const withMeta = (makeText) => (i) => {
  const text = makeText(i);
  return text.includes('"params":{')
    ? text.replace('"params":{', `"params":{${META},`)
    : `${text.slice(0, -1)},"params":{${META}}}`;
};

/** The same server on the official SDK. */
export function sdk(nTemplates) {
  const server = new SdkServer({ name: "bench", version: "1" });
  server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  for (let i = 0; i < nTemplates; i++) {
    server.registerResource(
      `t${i}`,
      new ResourceTemplate(`app${i}://items/{id}`, { list: undefined }),
      {},
      (uri, { id }) => ({
        contents: [{ uri: uri.href, mimeType: "text/plain", text: `item ${id}` }],
      }),
    );
  }
  server.registerResource("config", "config://app", {}, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "theme=dark" }],
  }));
  const waiting = new Map();
  const transport = {
    start: async () => {},
    close: async () => {},
    send: async (message) => {
      const text = JSON.stringify(message);
      const resolve = waiting.get(message.id);
      waiting.delete(message.id);
      resolve?.(text);
    },
  };
  server.connect(transport);
  let ready = false;
  return async (text) => {
    if (!ready) {
      ready = true;
      await new Promise((r) => {
        waiting.set(-1, r);
        transport.onmessage({ jsonrpc: "2.0", id: -1, method: "initialize", params: INIT });
      });
      transport.onmessage({ jsonrpc: "2.0", method: "notifications/initialized" });
    }
    const message = JSON.parse(text);
    return new Promise((r) => {
      waiting.set(message.id, r);
      transport.onmessage(message);
    });
  };
}

/** ns per request of `handle` over `iterations` requests made by `makeText(i)`, after a warm-up. */
export async function time(handle, makeText, iterations) {
  for (let i = 0; i < Math.min(2000, iterations); i++) await handle(makeText(i));
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) await handle(makeText(i));
  return ((performance.now() - t0) * 1e6) / iterations; // ns per request
}

const cases = [
  ["ping", (i) => `{"jsonrpc":"2.0","id":${i + 1},"method":"ping"}`],
  ["tools/list", (i) => `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/list"}`],
  [
    "tools/call (zod input)",
    (i) =>
      `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":{"name":"add","arguments":{"a":${i},"b":2}}}`,
  ],
  [
    "resources/read static",
    (i) => `{"jsonrpc":"2.0","id":${i + 1},"method":"resources/read","params":{"uri":"config://app"}}`,
  ],
  [
    "resources/read template (100 registered)",
    (i) => `{"jsonrpc":"2.0","id":${i + 1},"method":"resources/read","params":{"uri":"app57://items/${i}"}}`,
  ],
];

/**
 * Rows of { case, picomcpNs, sdkNs, ratio, picomcpModernNs }: ratio > 1 means picomcp (2025-11-25
 * session) is that many times faster; the last column is the same request in the 2026-07-28 era
 * (no `ping` there).
 */
export async function benchDispatch(iterations = 20_000) {
  const rows = [];
  for (const [name, makeText] of cases) {
    const p = await time(picomcp(100), makeText, iterations);
    const s = await time(sdk(100), makeText, iterations);
    const m = name === "ping" ? undefined : await time(picomcp(100, true), withMeta(makeText), iterations);
    rows.push({
      case: name,
      picomcpNs: Math.round(p),
      sdkNs: Math.round(s),
      ratio: +(s / p).toFixed(2),
      picomcpModernNs: m === undefined ? "—" : Math.round(m),
    });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchDispatch());
  console.table(await benchReadScaling());
}

/**
 * resources/read of a template URI with N templates registered, picomcp and the SDK side by side. All
 * servers are built first and measured in interleaved rounds (median kept), so that heap growth and
 * machine load weigh on every N alike.
 */
export async function benchReadScaling(ns = [10, 100, 1000, 5000], iterations = 4_000, rounds = 5) {
  const hit = (n) => (i) =>
    `{"jsonrpc":"2.0","id":${i + 1},"method":"resources/read","params":{"uri":"app${n >> 1}://items/${i}"}}`;
  const miss = (i) =>
    `{"jsonrpc":"2.0","id":${i + 1},"method":"resources/read","params":{"uri":"nothing://items/${i}"}}`;
  const servers = ns.map((n) => ({ n, p: picomcp(n), s: sdk(n), hit: [], miss: [], sdk: [] }));
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  for (let r = 0; r < rounds; r++) {
    for (const x of servers) {
      x.hit.push(await time(x.p, hit(x.n), iterations));
      x.miss.push(await time(x.p, miss, iterations));
      // the SDK scans every template: fewer iterations keep its large N affordable
      if (r < 2) x.sdk.push(await time(x.s, hit(x.n), x.n >= 1000 ? 200 : 2_000));
    }
  }
  return servers.map((x) => ({
    templates: x.n,
    picomcpHitNs: Math.round(median(x.hit)),
    picomcpMissNs: Math.round(median(x.miss)),
    sdkHitNs: Math.round(median(x.sdk)),
  }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchDispatch());
  console.table(await benchReadScaling());
}
