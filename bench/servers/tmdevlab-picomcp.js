// picomcp serving the TM Dev Lab v1 tools (tmdevlab-tools.js) over stateless Streamable HTTP on
// 127.0.0.1, the way a user would: `serve` from picomcp/node, zod inputs. Prints `PORT <n>`. Without
// sessions (`sessions: false`), as their Node server (a stateless transport per request): the workload
// opens a session per call and never ends it, which a session table would keep (and rate-limit).
import { z } from "zod";
import { TOOLS } from "./tmdevlab-tools.js";

const dist = new URL("../../dist/", import.meta.url).href;
const { McpServer } = await import(`${dist}index.js`);
const { serve } = await import(`${dist}http/node.js`);

const server = new McpServer({ name: "BenchmarkNodejsServer", version: "1.0.0" });
for (const t of TOOLS)
  server.tool(t.name, { description: t.description, input: z.object(t.shape), run: t.run });
const { url } = await serve(server, { port: 0, sessions: false });
process.stdout.write(`PORT ${new URL(url).port}\n`);
