import { McpServer } from "picomcp";

export const server = new McpServer({ name: "worker", version: "1.0.0" });

server.tool("import_catalog", {
  description: "Imports the catalog in batches, reporting progress",
  run: async (_args, ctx) => {
    const batches = 4;
    for (let i = 1; i <= batches; i++) {
      if (ctx.signal.aborted) return "Cancelled";
      ctx.log("info", { batch: i }, "importer");
      ctx.progress(i, batches, `batch ${i} of ${batches}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    return `Imported ${batches} batches`;
  },
});

server.tool("confirm_delete", {
  description: "Deletes a book after asking the user",
  run: async (_args, ctx) => {
    const answer = await ctx.elicit({
      message: "Delete the book for good?",
      requestedSchema: {
        type: "object",
        properties: { confirm: { type: "boolean", title: "Yes, delete it", default: false } },
        required: ["confirm"],
      },
    });
    return answer.action === "accept" && answer.content?.confirm === true ? "Deleted" : "Kept";
  },
});

server.tool("summarize", {
  description: "Summarizes a text with the client's model",
  run: async (_args, ctx) => {
    const reply = await ctx.sample({
      messages: [{ role: "user", content: { type: "text", text: "Summarize: picomcp is small." } }],
      maxTokens: 50,
    });
    const content = reply.content as { type: string; text?: string };
    return content.type === "text" ? `Summary: ${content.text}` : "The model answered without text";
  },
});

server.tool("workspace", {
  description: "Lists the client's roots",
  run: async (_args, ctx) => (await ctx.roots()).map((r) => r.uri).join("\n"),
});
