import { McpServer } from "picomcp";

export const server = new McpServer({
  name: "reports",
  version: "1.0.0",
  tasks: { ttlMs: 86_400_000, pollIntervalMs: 2000 }, // keep finished reports a day; poll every 2 s
});

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => reject(clearTimeout(timer)), { once: true });
  });

server.tool("build_report", {
  description: "Builds the quarterly report (takes a while)",
  input: { type: "object", properties: { quarter: { type: "string" } }, required: ["quarter"] },
  task: "optional", // a client with the tasks extension gets a task; any other waits for the result
  run: async ({ quarter }: { quarter: string }, ctx) => {
    // before ctx.task() the call is an ordinary one: input rounds, validation, quick answers
    if (quarter === "Q0") return "There is no Q0";
    const task = await ctx.task({ statusMessage: "collecting figures" }); // the client has its task now
    await sleep(50, ctx.signal); // tasks/cancel aborts ctx.signal
    await task?.status("asking for approval");
    // inside a task this waits for tasks/update instead of ending the run
    const ok = await ctx.elicit(
      { message: `Publish the ${quarter} report?`, requestedSchema: { type: "object", properties: {} } },
      { key: "approve" },
    );
    return ok.action === "accept" ? `Report ${quarter} published` : `Report ${quarter} kept as a draft`;
  },
});
