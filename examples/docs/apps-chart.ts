import { McpServer } from "picomcp";

export const server = new McpServer({ name: "sales", version: "1.0.0" });

const page = `<!doctype html>
<meta charset="utf-8">
<div id="bars"></div>
<script>
  const post = (m) => window.parent.postMessage({ jsonrpc: "2.0", ...m }, "*");
  window.addEventListener("message", ({ data }) => {
    if (data?.id === 1) post({ method: "ui/notifications/initialized", params: {} });
    if (data?.method !== "ui/notifications/tool-result") return;
    const { months } = data.params.structuredContent;
    document.getElementById("bars").textContent = months.map((m) => m.name + " " + "█".repeat(m.units)).join("\\n");
  });
  post({ id: 1, method: "ui/initialize",
         params: { protocolVersion: "2026-01-26", appInfo: { name: "sales", version: "1.0.0" }, appCapabilities: {} } });
</script>`;

server.app("sales_chart", {
  description: "Shows monthly sales as a chart",
  output: { type: "object", properties: { months: { type: "array" } } },
  ui: { uri: "ui://sales/chart.html", html: page, prefersBorder: false },
  // a host without Apps shows the result alone (its JSON as text): keep it readable on its own
  run: () => ({
    months: [
      { name: "Jan", units: 3 },
      { name: "Feb", units: 5 },
    ],
  }),
});
