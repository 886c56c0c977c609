import { McpServer } from "picomcp";
import { serve } from "picomcp/node";

const server = new McpServer({
  name: "search",
  version: "1.0.0",
  limits: {
    // what one caller may hold, and all callers together (every other resource keeps its default)
    listens: { perPrincipal: 4, total: 2000 },
    tasks: { perPrincipal: 50 },
    // token buckets per caller: 600 calls a minute, and `search` 30 a minute in bursts of 5
    rates: {
      methods: { "tools/call": { perMinute: 600 } },
      tools: { search: { perMinute: 30, burst: 5 } },
    },
  },
});

server.tool("search", {
  description: "Searches the catalogue",
  input: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  run: ({ q }) => `results for ${q}`,
});

await serve(server, {
  port: 3000,
  // without credentials, each client address is a caller of its own (an IPv6 one by its /48 here)
  limits: { sessions: { perPrincipal: 20 }, ipv6Prefix: 48 },
  anonymousSessionsPerMinute: { perCaller: 30, total: 3000 },
});
