/** Skills: what a registration handle removes. */
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { modernPeer } from "../modern-helpers.js";

describe("server.skill(...).remove()", () => {
  it("a stale handle does not remove the skill registered again under the same name", async () => {
    const s = new McpServer({ name: "t", version: "1.0.0" });
    const first = s.skill("notes", { description: "First", instructions: "one" });
    first.remove();
    s.skill("notes", { description: "Second", instructions: "two" });
    first.remove();
    const p = modernPeer(s);
    const list = (await p.request("skills/list")).answer.result;
    expect(
      list.skills.map((e: { frontmatter: { description: string } }) => e.frontmatter.description),
    ).toEqual(["Second"]);
  });
});
