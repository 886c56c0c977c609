import { connect } from "picomcp/testing";
import { describe, expect, it } from "vitest";
import { server as chart } from "../../examples/docs/apps-chart.js";
import { server as skills } from "../../examples/docs/skills-review.js";
import { server as reports } from "../../examples/docs/tasks-report.js";
import { tick } from "../helpers.js";
import { modernPeer } from "../modern-helpers.js";

type Peer = Parameters<typeof modernPeer>[0];
const WITH = { extensions: { "io.modelcontextprotocol/tasks": {} }, elicitation: {} };

describe("docs/tasks.md example", () => {
  it("answers a client with tasks with a task that asks, then publishes; others wait for the result", async () => {
    const p = modernPeer(reports as unknown as Peer);
    const created = (
      await p.request("tools/call", { name: "build_report", arguments: { quarter: "Q3" } }, WITH)
    ).answer.result;
    expect(created).toMatchObject({
      resultType: "task",
      status: "working",
      statusMessage: "collecting figures",
      ttlMs: 86_400_000,
      pollIntervalMs: 2000,
    });
    const { taskId } = created;
    let r: any;
    for (let i = 0; i < 200 && r?.status !== "input_required"; i++) {
      if (i) await new Promise((res) => setTimeout(res, 5));
      r = (await p.request("tasks/get", { taskId }, WITH)).answer.result;
    }
    expect(r.statusMessage).toBe("asking for approval");
    expect(Object.keys(r.inputRequests)).toEqual(["approve"]);
    await p.request("tasks/update", { taskId, inputResponses: { approve: { action: "accept" } } }, WITH);
    for (let i = 0; i < 50 && r.status !== "completed"; i++) {
      await tick();
      r = (await p.request("tasks/get", { taskId }, WITH)).answer.result;
    }
    expect(r.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "Report Q3 published" }],
    });
    // a quick answer needs no task
    const q0 = await p.request("tools/call", { name: "build_report", arguments: { quarter: "Q0" } }, WITH);
    expect(q0.answer.result.content).toEqual([{ type: "text", text: "There is no Q0" }]);
    // the initialize era: ctx.task() is undefined, and the elicitation is a request to the client
    const client = await connect(reports, { onElicit: () => ({ action: "decline" }) });
    expect(await client.callTool("build_report", { quarter: "Q4" })).toEqual({
      content: [{ type: "text", text: "Report Q4 kept as a draft" }],
    });
  });
});

describe("docs/skills.md example", () => {
  it("lists the skill and serves its files", async () => {
    const p = modernPeer(skills as unknown as Peer);
    const [entry] = (await p.request("skills/list")).answer.result.skills;
    expect(entry.uri).toBe("skill://code-review/SKILL.md");
    expect(entry.frontmatter.name).toBe("code-review");
    expect(entry.resources.map((r: { uri: string }) => r.uri)).toEqual([
      "skill://code-review/SKILL.md",
      "skill://code-review/references/checklist.md",
    ]);
    const md = (await p.request("resources/read", { uri: entry.uri })).answer.result.contents[0];
    expect(md.text.startsWith('---\nlicense: "MIT"\nname: "code-review"\n')).toBe(true);
    expect(md.text).toContain("2. Walk through [the checklist](references/checklist.md).");
  });
});

describe("docs/apps.md example", () => {
  it("links the tool to its page in both eras", async () => {
    const client = await connect(chart);
    const [tool] = (await client.listTools()).tools;
    expect(tool?._meta).toEqual({
      ui: { resourceUri: "ui://sales/chart.html" },
      "ui/resourceUri": "ui://sales/chart.html",
    });
    const p = modernPeer(chart as unknown as Peer);
    expect((await p.request("tools/list")).answer.result.tools[0]._meta).toEqual(tool?._meta);
    const page = (await p.request("resources/read", { uri: "ui://sales/chart.html" })).answer.result
      .contents[0];
    expect([page.mimeType, page._meta]).toEqual([
      "text/html;profile=mcp-app",
      { ui: { prefersBorder: false } },
    ]);
    expect((await client.callTool("sales_chart")).structuredContent).toEqual({
      months: [
        { name: "Jan", units: 3 },
        { name: "Feb", units: 5 },
      ],
    });
  });
});
