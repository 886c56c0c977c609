// Long fuzz campaigns over real transports: node scripts/fuzz.js --messages N --seed S
//   [--transport stdio|http] [--era 2025|2026]; every combination by default, then the campaigns on
//   what comes beside a message (--campaign trace,params runs only those). Exits 1 on a problem.

import { httpCampaign } from "./fuzz/http.js";
import { paramsCampaign } from "./fuzz/params.js";
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
// trace context in _meta and Mcp-Param-* headers: alone with --campaign, else after the transports
const besides = { trace: traceCampaign, params: paramsCampaign };
const chosen = option("campaign", undefined)?.split(",");
for (const transport of chosen ? [] : transports) {
  for (const era of eras) {
    const run = transport === "http" ? httpCampaign : stdioCampaign;
    const result = await run({ messages, seed, era });
    console.log(JSON.stringify(result));
    if (result.problems.length) failed = true;
  }
}
for (const name of chosen ?? Object.keys(besides)) {
  const run = besides[name];
  if (!run) {
    console.error(`no campaign "${name}": ${Object.keys(besides).join(", ")}`);
    failed = true;
    continue;
  }
  const result = await run({ messages, seed });
  console.log(JSON.stringify(result));
  if (result.problems.length) failed = true;
}
process.exit(failed ? 1 : 0);
