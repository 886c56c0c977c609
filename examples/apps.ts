// An MCP App: the `roll_dice` tool and the page a host (Claude, ChatGPT, VS Code, …) renders for its
// results. `npm run build && node build/examples/apps.js` serves it over HTTP on 127.0.0.1.
import { McpServer } from "picomcp";
import { serve } from "picomcp/node";

// The page talks to its host with JSON-RPC over postMessage: ui/initialize, then the host sends
// the tool's result as ui/notifications/tool-result.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Dice</title>
<style>
  body { font: 16px system-ui, sans-serif; margin: 1rem; }
  .dice { display: flex; gap: .5rem; }
  .die { width: 3rem; height: 3rem; border: 2px solid currentColor; border-radius: .5rem;
         display: grid; place-items: center; font-size: 1.5rem; }
</style>
</head>
<body>
<p id="status">Waiting for a roll…</p>
<div class="dice" id="dice"></div>
<script>
  let next = 1;
  const post = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  function show(result) {
    const rolls = result.structuredContent?.rolls ?? [];
    document.getElementById("status").textContent = "Total: " + rolls.reduce((a, b) => a + b, 0);
    document.getElementById("dice").replaceChildren(...rolls.map((n) => {
      const die = document.createElement("div");
      die.className = "die";
      die.textContent = n;
      return die;
    }));
  }
  window.addEventListener("message", ({ data }) => {
    if (data?.jsonrpc !== "2.0") return;
    if (data.id === 1 && data.result) post({ method: "ui/notifications/initialized", params: {} });
    if (data.method === "ui/notifications/tool-result") show(data.params);
  });
  post({
    id: next++,
    method: "ui/initialize",
    params: { protocolVersion: "2026-01-26", appInfo: { name: "dice", version: "1.0.0" }, appCapabilities: {} },
  });
</script>
</body>
</html>
`;

export const server = new McpServer({ name: "dice", version: "1.0.0" });

server.app("roll_dice", {
  description: "Rolls dice and shows them",
  input: {
    type: "object",
    properties: { count: { type: "integer", minimum: 1, maximum: 10 } },
    required: ["count"],
  },
  output: { type: "object", properties: { rolls: { type: "array", items: { type: "integer" } } } },
  ui: { uri: "ui://dice/roll.html", html: PAGE, prefersBorder: true },
  run: ({ count }: { count: number }) => ({
    rolls: Array.from({ length: count }, () => 1 + Math.floor(Math.random() * 6)),
  }),
});

if (process.argv[1]?.endsWith("apps.js")) {
  const http = await serve(server, { port: Number(process.env.PORT ?? 3000) });
  console.log(`dice app listening on ${http.url}`);
}
