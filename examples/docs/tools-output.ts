import { link, McpServer } from "picomcp";
import { z } from "zod";

export const server = new McpServer({ name: "reports", version: "1.0.0" });

server.tool("sales_total", {
  description: "Total sales of a quarter",
  input: z.object({ quarter: z.enum(["q1", "q2", "q3", "q4"]) }),
  output: z.object({ quarter: z.string(), total: z.number() }),
  run: ({ quarter }) => ({ quarter, total: quarter === "q3" ? 1204 : 0 }),
});

server.tool("q3_report", {
  description: "The Q3 report, as a link the client can read when it needs it",
  run: () => link("reports://2026-q3", "Q3 report", { mimeType: "application/pdf" }),
});

server.tool("cover", {
  description: "A book cover and its caption",
  run: () => [
    {
      type: "image",
      data: "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7",
      mimeType: "image/gif",
    },
    { type: "text", text: "A 1×1 placeholder cover" },
  ],
});

server.tool("divide", {
  description: "Divides a by b",
  input: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  },
  run: ({ a, b }) => {
    //    ^? { a: number; b: number } — inferred from the JSON Schema literal
    if (b === 0) throw new Error("Cannot divide by zero");
    return String(a / b);
  },
});
