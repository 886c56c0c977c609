// Runs the checks in-process, on whatever runtime runs this file (Node, Deno, Bun). Prints "portable: ok".
import { createHttpHandler } from "../../dist/http/index.js";
import { runChecks } from "./checks.js";
import { server } from "./server.js";

// 2026-07-28 through the core: an input round whose state is sealed with this runtime's Web Crypto
const connection = server.connect({ send: () => {} });
const _meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
};
const call = (id, extra) =>
  server.handle(
    { jsonrpc: "2.0", id, method: "tools/call", params: { _meta, name: "greet", ...extra } },
    connection,
  );
const round = await call(1, {});
if (round.result?.resultType !== "input_required") throw new Error(`round 1: ${JSON.stringify(round)}`);
const done = await call(2, {
  inputResponses: { n: { action: "accept", content: { name: "Ann" } } },
  requestState: round.result.requestState,
});
if (done.result?.content?.[0]?.text !== "Hello, Ann!") throw new Error(`round 2: ${JSON.stringify(done)}`);
connection.close();

const handle = createHttpHandler(server);
await runChecks(handle);
handle.close();
console.log("portable: ok");
