// What the governor's defaults let callers hold, in bytes: for each resource, P principals each open
// their default share (or a part of the total, when the shares of P principals would pass it) through
// the fetch handler in-process, and the heap grows by so much per unit. The worst case for 10,000
// callers is then each resource's total (10,000 shares pass every total) times its bytes per unit.
// Sockets are not part of it (in-process requests): the Node bridge's connection cap bounds those.
//   node --expose-gc bench/governor-memory.js [principals]
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_SHARES } from "../build/lib/limits/shares.js";
import { createHttpHandler } from "../dist/http/index.js";
import { McpServer } from "../dist/index.js";

if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const P = Number(process.argv[2] ?? 10);
const URL_ = "http://127.0.0.1:3000/mcp";
const BASE = {
  host: "127.0.0.1:3000",
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
};
const TASKS = "io.modelcontextprotocol/tasks";
const META = (caps = {}) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": caps,
});

async function heap() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await sleep(20);
  }
  return process.memoryUsage().heapUsed;
}
const rss = () => process.memoryUsage().rss;

function setup() {
  const server = new McpServer({ name: "memory", version: "1.0.0", onError: () => {} });
  let open;
  const gate = new Promise((r) => (open = r));
  server.tool("quick", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      return "quick";
    },
  });
  server.tool("hold", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      await gate;
      return "held";
    },
  });
  server.tool("wait", { run: () => gate.then(() => "waited") });
  server.tool("ask", {
    run: (_a, ctx) =>
      ctx.elicit({ message: "?", requestedSchema: { type: "object", properties: {} } }).then(() => "ok"),
  });
  server.resource("note://{id}", { read: ({ id }) => id });
  const handler = createHttpHandler(server, {
    authenticate: (r) => {
      const h = r.headers.get("authorization");
      return h ? { token: h.slice(7), subject: h.slice(7) } : undefined;
    },
  });
  return { server, handler, open };
}

const auth = (p) => ({ authorization: `Bearer p${p}` });
const post = (handler, headers, body) =>
  handler(
    new Request(URL_, { method: "POST", headers: { ...BASE, ...headers }, body: JSON.stringify(body) }),
  );
const modern = (handler, p, id, method, params, caps) =>
  post(
    handler,
    {
      ...auth(p),
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(params.name ? { "mcp-name": params.name } : {}),
    },
    { jsonrpc: "2.0", id, method, params: { ...params, _meta: META(caps) } },
  );
async function session(handler, p, caps = {}) {
  const res = await post(handler, auth(p), {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: caps, clientInfo: { name: "m", version: "1" } },
  });
  if (res.status !== 200) throw new Error(`initialize: ${res.status} ${await res.text()}`);
  await res.text();
  return res.headers.get("mcp-session-id");
}
const expectOk = async (res, what) => {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return res;
};

/** Runs `fill` on a fresh server; the heap it added per unit, and the units. */
async function measure(name, fill) {
  const s = setup();
  const base = await heap();
  const rss0 = rss();
  const kept = [];
  const filled = await fill(s, kept);
  // a fill may measure from a later point of its own (after what another row measures)
  const units = typeof filled === "number" ? filled : filled.units;
  const grown = (await heap()) - (typeof filled === "number" ? base : filled.before);
  const rssGrown = rss() - (typeof filled === "number" ? rss0 : filled.rss);
  s.open();
  s.handler.close();
  return { name, units, perUnit: grown / units, rssPerUnit: rssGrown / units, kept: kept.length };
}

const share = (r) => DEFAULT_SHARES[r];
/** Units each of P principals opens: its share, unless P shares pass the total. */
const each = (r) => Math.min(share(r).perPrincipal, Math.floor(share(r).total / P));
const uri = (i, len) => `note://${String(i).padStart(len - 7, "0")}`;

const rows = [];
rows.push(
  await measure("sessions", async ({ handler }) => {
    for (let p = 0; p < P; p++) for (let i = 0; i < each("sessions"); i++) await session(handler, p);
    return P * each("sessions");
  }),
);
rows.push(
  await measure("sseStreams", async ({ handler }, kept) => {
    const sids = [];
    for (let p = 0; p < P; p++)
      for (let i = 0; i < each("sseStreams"); i++) sids.push([p, await session(handler, p)]);
    const before = await heap();
    const rssBefore = rss();
    for (const [p, sid] of sids) {
      const res = await handler(
        new Request(URL_, {
          method: "GET",
          headers: { ...BASE, ...auth(p), accept: "text/event-stream", "mcp-session-id": sid },
        }),
      );
      kept.push(await expectOk(res, "GET"));
    }
    // the sessions themselves are measured above: count only what the streams add
    return { units: sids.length, before, rss: rssBefore };
  }),
);
rows.push(
  await measure("listens", async ({ handler }, kept) => {
    let id = 1;
    for (let p = 0; p < P; p++)
      for (let i = 0; i < each("listens"); i++)
        kept.push(
          await expectOk(
            await modern(handler, p, id++, "subscriptions/listen", {
              notifications: { toolsListChanged: true },
            }),
            "listen",
          ),
        );
    return P * each("listens");
  }),
);
rows.push(
  await measure("subscriptionBytes (listens of 8 KiB URIs)", async ({ handler }, kept) => {
    // each principal: its whole byte share in one listen
    const perUri = 2 * 8192 + 64;
    const n = Math.floor(
      Math.min(share("subscriptionBytes").perPrincipal, share("subscriptionBytes").total / P) / perUri,
    );
    for (let p = 0; p < P; p++) {
      const uris = Array.from({ length: n }, (_, i) => uri(p * 10_000 + i, 8192));
      kept.push(
        await expectOk(
          await modern(handler, p, p + 1, "subscriptions/listen", {
            notifications: { resourceSubscriptions: uris },
          }),
          "big listen",
        ),
      );
    }
    return P * n * perUri;
  }),
);
rows.push(
  await measure("subscriptionBytes (2025 subscriptions of 8 KiB URIs)", async ({ handler }) => {
    const perUri = 2 * 8192 + 64;
    const n = Math.floor(
      Math.min(share("subscriptionBytes").perPrincipal, share("subscriptionBytes").total / P) / perUri,
    );
    for (let p = 0; p < P; p++) {
      const sid = await session(handler, p);
      for (let i = 0; i < n; i++)
        await expectOk(
          await post(
            handler,
            { ...auth(p), "mcp-session-id": sid },
            { jsonrpc: "2.0", id: i + 1, method: "resources/subscribe", params: { uri: uri(i, 8192) } },
          ),
          "subscribe",
        );
    }
    return P * n * perUri;
  }),
);
rows.push(
  await measure("tasks (kept, done)", async ({ handler }) => {
    let id = 1;
    for (let p = 0; p < P; p++)
      for (let i = 0; i < each("tasks"); i++)
        await expectOk(
          await modern(
            handler,
            p,
            id++,
            "tools/call",
            { name: "quick", arguments: {} },
            { extensions: { [TASKS]: {} } },
          ),
          "task",
        );
    return P * each("tasks");
  }),
);
rows.push(
  await measure("runningTasks", async ({ handler }) => {
    let id = 1;
    for (let p = 0; p < P; p++)
      for (let i = 0; i < each("runningTasks"); i++)
        await expectOk(
          await modern(
            handler,
            p,
            id++,
            "tools/call",
            { name: "hold", arguments: {} },
            { extensions: { [TASKS]: {} } },
          ),
          "task",
        );
    return P * each("runningTasks");
  }),
);
rows.push(
  await measure("requests (2026-07-28, in flight, a body just under 1 KiB)", async ({ handler }, kept) => {
    let id = 1;
    // the largest body the handler does not count on its own (requestBytes)
    const text = "x".repeat(850);
    for (let p = 0; p < P; p++)
      for (let i = 0; i < each("requests"); i++)
        kept.push(modern(handler, p, id++, "tools/call", { name: "wait", arguments: { text } }));
    await sleep(200);
    return P * each("requests");
  }),
);
rows.push(
  await measure("requestBytes (a 1 MiB argument in flight)", async ({ handler }, kept) => {
    const n = Math.max(
      1,
      Math.floor(
        Math.min(share("requestBytes").perPrincipal, share("requestBytes").total / P) / (1 << 20) / 4,
      ),
    );
    let id = 1;
    for (let p = 0; p < P; p++)
      for (let i = 0; i < n; i++)
        kept.push(
          modern(handler, p, id++, "tools/call", { name: "wait", arguments: { text: "x".repeat(1 << 20) } }),
        );
    await sleep(500);
    return P * n * ((1 << 20) + 200);
  }),
);
rows.push(
  await measure("inputRounds (2025 elicitations awaiting)", async ({ handler }, kept) => {
    for (let p = 0; p < P; p++) {
      const sid = await session(handler, p, { elicitation: {} });
      for (let i = 0; i < each("inputRounds"); i++)
        kept.push(
          await post(
            handler,
            { ...auth(p), "mcp-session-id": sid },
            { jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "ask", arguments: {} } },
          ),
        );
    }
    return P * each("inputRounds");
  }),
);

const MiB = (n) => (n / 1024 / 1024).toFixed(1);
console.log(`${P} principals, each at its default share (or total / ${P}); heap per unit after gc\n`);
console.log(
  "| resource | units measured | heap bytes per unit | RSS bytes per unit | per principal | total | worst case (total × heap per unit) |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|");
// one total per resource: of the rows that share one (listens and 2025 subscriptions share
// subscriptionBytes), the larger counts
const worst = new Map();
for (const r of rows) {
  const key = r.name.split(" ")[0];
  const s = share(key);
  const byBytes = key.endsWith("Bytes");
  const w = s.total * r.perUnit;
  worst.set(key, Math.max(worst.get(key) ?? 0, w));
  const unit = (n) => (byBytes ? `${n.toFixed(2)} per byte counted` : n.toFixed(0));
  console.log(
    `| ${r.name} | ${r.units} | ${unit(r.perUnit)} | ${unit(r.rssPerUnit)} | ${s.perPrincipal} | ${s.total} | ${MiB(w)} MiB |`,
  );
}
const sum = [...worst.values()].reduce((a, b) => a + b, 0);
const sseBytes = share("sseBytes").total;
const events = 32 * 1024 * 1024 * 2;
console.log(
  `| sseBytes (queued for clients that do not read) | — | 1 per byte (the queued chunks) | — | ${share("sseBytes").perPrincipal} | ${sseBytes} | ${MiB(sseBytes)} MiB |`,
);
console.log(
  `| events kept for resumption (MemoryEventStore, 32 Mi characters) | — | 2 per character at most | — | — | — | ${MiB(events)} MiB |`,
);
console.log(`\nAll together, every total reached at once: ${MiB(sum + sseBytes + events)} MiB`);
process.exit(0);
