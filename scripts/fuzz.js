// Long fuzz campaigns over real transports: node scripts/fuzz.js --messages N --seed S
//   [--transport stdio|http] [--era 2025|2026]; every combination by default, then the campaigns on
//   what comes beside a message (trace context, Mcp-Param-* headers) and on schema patterns.
//   --campaign transports,trace,params,patterns (comma-separated; all by default) picks which run.
//   Exits 1 on a problem.

import { httpCampaign } from "./fuzz/http.js";
import { paramsCampaign } from "./fuzz/params.js";
import { patternsCampaign } from "./fuzz/patterns.js";
import { stdioCampaign } from "./fuzz/stdio.js";
import { traceCampaign } from "./fuzz/trace.js";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : fallback;
};
const messages = Number(option("messages", "10000"));
const seed = Number(option("seed", String(Date.now() % 1e6)));
const transports = option("transport", "stdio,http").split(",");
const eras = option("era", "2025,2026").split(",");

let failed = false;
// trace context in _meta, Mcp-Param-* headers over real sockets; schema patterns on the linear-time
// matcher against RegExp, in this process
const besides = { trace: traceCampaign, params: paramsCampaign, patterns: patternsCampaign };
const chosen = option("campaign", ["transports", ...Object.keys(besides)].join(",")).split(",");
for (const name of chosen) {
  if (name !== "transports" && !besides[name]) {
    console.error(`no campaign "${name}": transports, ${Object.keys(besides).join(", ")}`);
    process.exit(1);
  }
}
for (const transport of chosen.includes("transports") ? transports : []) {
  for (const era of eras) {
    const run = transport === "http" ? httpCampaign : stdioCampaign;
    const result = await run({ messages, seed, era });
    console.log(JSON.stringify(result));
    if (result.problems.length) failed = true;
  }
}
for (const name of chosen) {
  if (name === "transports") continue;
  const result = await besides[name]({ messages, seed });
  console.log(JSON.stringify(result));
  if (result.problems.length) failed = true;
}
process.exit(failed ? 1 : 0);
