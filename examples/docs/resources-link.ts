import { link, McpServer } from "picomcp";

export const server = new McpServer({ name: "reports", version: "1.0.0" });

server.tool("q3_report", {
  description: "Points at the Q3 report instead of embedding it",
  run: async () => link("reports://2026-q3", "Q3 report", { mimeType: "application/pdf" }),
});
