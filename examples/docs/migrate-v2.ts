import { McpServer } from "picomcp";
import { z } from "zod";

export const server = new McpServer({ name: "deployer", version: "1.0.0" });

// SDK v2: server.registerTool("deploy", { inputSchema: z.object({ env: z.string() }) }, async ({ env }, ctx) => …)
server.tool("deploy", {
  description: "Deploys to an environment, once the user confirms",
  input: z.object({ env: z.enum(["staging", "production"]) }),
  run: async ({ env }, ctx) => {
    // SDK v2: ctx.mcpReq.log("info", …)
    ctx.log("info", `deploy to ${env} asked by ${ctx.auth?.subject ?? "someone"}`); // SDK v2: ctx.http?.authInfo
    // SDK v2: ctx.mcpReq.elicitInput({ message, requestedSchema }); on 2026-07-28 an input round, in either SDK
    const answer = await ctx.elicit({
      message: `Deploy to ${env}?`,
      requestedSchema: {
        type: "object",
        properties: { confirm: { type: "boolean" } },
        required: ["confirm"],
      },
    });
    if (answer.action !== "accept" || answer.content?.confirm !== true) return "Not deployed";
    // SDK v2: ctx.mcpReq.signal
    if (ctx.signal.aborted) return "Cancelled";
    return `Deployed to ${env}`;
  },
});
