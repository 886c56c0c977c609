import { McpServer } from "picomcp";

export const server = new McpServer({ name: "team-skills", version: "1.0.0" });

server.skill("code-review", {
  description: "Reviews a change for correctness, tests and style. Use it on every pull request.",
  frontmatter: { license: "MIT" },
  instructions: `# Code review

1. Read the whole diff before commenting.
2. Walk through [the checklist](references/checklist.md).
3. Say what to change, and why, in one list.
`,
  files: {
    "references/checklist.md": "# Checklist\n\n- A test fails without the change\n- No dead code\n",
  },
});
