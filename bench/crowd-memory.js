// What a crowd of anonymous callers costs: N callers, each an address of its own (told to the fetch handler
// with `withPeer`, as picomcp/node does by itself), each holding what a client holds: a 2025 session with
// its GET stream open, a 2026-07-28 listen, and a tools/call in flight. With N = 10000 that fills the
// default totals of sessions, GET streams and listens, and of requests in flight (a listen counts as one),
// exactly. Prints the heap after a full GC per caller and for all of them, then checks that the next
// address is refused by a total (503) and that one address is held to its share (429).
//   node --expose-gc bench/crowd-memory.js [callers]   (after `npm run build:dist`)
import { setTimeout as sleep } from "node:timers/promises";
import { createHttpHandler, withPeer } from "../dist/http/index.js";
import { McpServer } from "../dist/index.js";

if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const N = Number(process.argv[2] ?? 10_000);
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

async function heap() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await sleep(20);
  }
  return process.memoryUsage().heapUsed;
}

const server = new McpServer({ name: "crowd", version: "1.0.0", onError: () => {} });
let open;
const gate = new Promise((r) => (open = r));
server.tool("wait", { run: () => gate.then(() => "waited") });
// the crowd arrives at once: the rate of new anonymous sessions is not what is measured here
const handler = createHttpHandler(server, { anonymousSessionsPerMinute: { perCaller: 60, total: 1e9 } });

/** The i-th address: 10.x.y.z, one per caller. */
const address = (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const from = (i, init) => withPeer(new Request(URL_, init), address(i));
const post = (i, headers, body) =>
  handler(from(i, { method: "POST", headers: { ...BASE, ...headers }, body: JSON.stringify(body) }));
const modern = (i, id, method, params) =>
  post(
    i,
    {
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(params.name ? { "mcp-name": params.name } : {}),
    },
    { jsonrpc: "2.0", id, method, params: { ...params, _meta: META } },
  );
const expectStatus = async (res, status, what) => {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return res;
};

const kept = [];
const base = await heap();
const rss0 = process.memoryUsage().rss;
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const init = await expectStatus(
    await post(
      i,
      {},
      {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } },
      },
    ),
    200,
    "initialize",
  );
  const sid = init.headers.get("mcp-session-id");
  await init.text();
  const headers = { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
  await (await post(i, headers, { jsonrpc: "2.0", method: "notifications/initialized" })).text();
  kept.push(
    await expectStatus(
      await handler(
        from(i, { method: "GET", headers: { ...BASE, ...headers, accept: "text/event-stream" } }),
      ),
      200,
      "GET",
    ),
  );
  kept.push(
    await expectStatus(
      await modern(i, 1, "subscriptions/listen", { notifications: { toolsListChanged: true } }),
      200,
      "listen",
    ),
  );
  kept.push(modern(i, 2, "tools/call", { name: "wait", arguments: {} }));
}
await sleep(200);
const grown = (await heap()) - base;
const rss = process.memoryUsage().rss - rss0;
const seconds = (performance.now() - t0) / 1000;

// the next address finds the totals reached; one address in the crowd is at its share of nothing yet but
// cannot take more than its share
const next = await modern(N, 1, "subscriptions/listen", { notifications: { toolsListChanged: true } });
const MiB = (n) => (n / 1024 / 1024).toFixed(1);
console.log(
  `${N} anonymous callers, each an address of its own holding a session with its GET stream, a listen,`,
);
console.log(`and a tools/call in flight (${seconds.toFixed(1)} s to open):\n`);
console.log(`| callers | heap after gc | heap per caller | RSS grown | sessions | next address's listen |`);
console.log(`|---:|---:|---:|---:|---:|---|`);
console.log(
  `| ${N} | ${MiB(grown)} MiB | ${(grown / N / 1024).toFixed(1)} KiB | ${MiB(rss)} MiB | ${handler.sessionCount} | ${next.status} |`,
);
open();
handler.close();
process.exit(0);
