import { McpServer } from "picomcp";
import { z } from "zod";

export const server = new McpServer({ name: "reviews", version: "1.0.0" });

server.prompt("review", {
  description: "Review a diff",
  args: z.object({ diff: z.string().describe("The unified diff"), tone: z.string().optional() }),
  complete: { tone: (value) => ["kind", "strict"].filter((t) => t.startsWith(value)) },
  get: ({ diff, tone }) => `Review this diff${tone ? ` in a ${tone} tone` : ""}:\n${diff}`,
});

server.prompt("translate", {
  description: "Translate a text",
  args: [
    { name: "text", description: "What to translate", required: true },
    { name: "to", description: "Target language", required: true },
  ],
  complete: {
    to: (value, ctx) =>
      (ctx.arguments.text?.startsWith("Bonjour") ? ["English"] : ["French", "German", "Spanish"]).filter(
        (l) => l.startsWith(value),
      ),
  },
  get: ({ text, to }) => [
    { role: "assistant", content: { type: "text", text: `I translate into ${to}, keeping the tone.` } },
    { role: "user", content: { type: "text", text } },
  ],
});
