import { createProxy } from "picomcp/proxy";
import { serveStdio } from "picomcp/stdio";

// a remote server the team does not own, with a narrower tool list and its own names
const proxy = await createProxy(
  {
    url: "https://mcp.example.com/mcp",
    headers: { authorization: `Bearer ${process.env.SERVICE_TOKEN}` }, // the proxy's own credentials
  },
  {
    tools: {
      hide: (tool) => tool.annotations?.readOnlyHint !== true, // only the tools that change nothing
      rename: { search: "tickets_search" },
    },
    resources: { hide: ["secret://admin"] },
  },
);

await serveStdio(proxy);
