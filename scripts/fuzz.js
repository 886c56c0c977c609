// Long fuzz campaigns over real transports: node scripts/fuzz.js --messages N --seed S
//   [--transport stdio|http] [--era 2025|2026]; every combination by default. Exits 1 on a problem.
//   --campaign transports|patterns (comma-separated; all by default) picks which campaigns run.
import { httpCampaign } from "./fuzz/http.js";
import { patternsCampaign } from "./fuzz/patterns.js";
import { stdioCampaign } from "./fuzz/stdio.js";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : fallback;
};
const messages = Number(option("messages", "10000"));
const seed = Number(option("seed", String(Date.now() % 1e6)));
const transports = option("transport", "stdio,http").split(",");
const eras = option("era", "2025,2026").split(",");
const campaigns = option("campaign", "transports,patterns").split(",");

let failed = false;
for (const transport of campaigns.includes("transports") ? transports : []) {
  for (const era of eras) {
    const run = transport === "http" ? httpCampaign : stdioCampaign;
    const result = await run({ messages, seed, era });
    console.log(JSON.stringify(result));
    if (result.problems.length) failed = true;
  }
}
// schema patterns on the linear-time matcher, against RegExp: in this process, no transport
if (campaigns.includes("patterns")) {
  const result = await patternsCampaign({ messages, seed });
  console.log(JSON.stringify(result));
  if (result.problems.length) failed = true;
}
process.exit(failed ? 1 : 0);
