import { ErrorCode, McpError, McpServer } from "picomcp";

export const server = new McpServer({ name: "glossary", version: "1.0.0" });

const terms = new Map([
  ["mcp", "Model Context Protocol"],
  ["sse", "Server-Sent Events"],
]);
const internal = new Map([["blue-team", "This week's on-call rotation"]]);

server.use({
  id: "com.example/glossary",
  // advertised under capabilities.extensions["com.example/glossary"], in every revision
  settings: () => ({ terms: terms.size }),
  methods: {
    "glossary/define": {
      run: (params, ctx) => {
        if (typeof params.term !== "string")
          throw new McpError(ErrorCode.InvalidParams, "glossary/define needs a term string");
        const term = params.term.toLowerCase();
        ctx.cache({ ttlMs: 3_600_000, scope: "public" });
        let definition = terms.get(term);
        if (definition === undefined && ctx.auth?.scopes?.includes("glossary:internal")) {
          definition = internal.get(term);
          ctx.personal(); // this answer depends on who asks: never cached as public
        }
        if (definition === undefined)
          throw new McpError(ErrorCode.InvalidParams, `Unknown term: ${term}`, { term });
        return { term, definition };
      },
    },
    // any client may ask this one, whether it declared the extension or not
    "glossary/size": { clientMustDeclare: false, run: () => ({ terms: terms.size }) },
  },
});
