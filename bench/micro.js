// `npm run bench:micro`: the in-process micro-benchmarks, picomcp side by side with the official SDK where both can run.
// Numbers are ns per operation unless said otherwise; ratios > 1 mean picomcp is faster (or, for
// scaling, how much slower N templates are than 10).
import { benchColdStart } from "./cold-start.js";
import { benchDispatch, benchReadScaling } from "./dispatch.js";
import { benchHttp } from "./http.js";
import { benchJsonSchema } from "./json-schema.js";
import { benchEverydayPatterns, benchWorstPattern } from "./patterns.js";
import { benchTemplates } from "./template-match.js";
import { benchTypecheck } from "./typecheck.js";
import { benchTypecheckTools } from "./typecheck-tools.js";

console.log("\n## Dispatch, server side (JSON text in, JSON text out): picomcp vs the official SDK");
console.table(await benchDispatch());

console.log(
  "\n## The HTTP handler in-process: a 2025-11-25 session and 2026-07-28 requests side by side (µs)",
);
console.table([await benchHttp()]);

console.log("\n## resources/read of a template URI, N templates registered");
const scaling = await benchReadScaling();
const base = scaling[0];
console.table(
  scaling.map((r) => ({
    ...r,
    picomcpHitVsN10: +(r.picomcpHitNs / base.picomcpHitNs).toFixed(2),
    picomcpMissVsN10: +(r.picomcpMissNs / base.picomcpMissNs).toFixed(2),
    sdkHitVsN10: +(r.sdkHitNs / base.sdkHitNs).toFixed(2),
  })),
);

console.log("\n## Template router alone (TemplateRouter.match)");
console.table(
  (await benchTemplates()).map((r) => ({
    ...r,
    hitNs: Math.round(r.hitNs),
    missNs: Math.round(r.missNs),
    hitRatio: +r.hitRatio.toFixed(2),
    missRatio: +r.missRatio.toFixed(2),
  })),
);

console.log(
  "\n## JSON Schema validation of a tool's arguments: picomcp vs ajv (ns per call; ratio > 1: picomcp faster)",
);
console.table(benchJsonSchema());

console.log(
  "\n## Schema patterns in linear time: the worst case, ^(\\w+\\s?)*$ on n-1 word characters and a '!' (µs)",
);
console.table(benchWorstPattern());
console.log(
  "\n## Everyday schema patterns: the linear-time matcher vs RegExp (ns per test; ratio > 1: it is faster)",
);
console.table(benchEverydayPatterns());

console.log("\n## Cold start of the bench's fixture (spawn → initialize answer, ms), beside the floor");
console.table(await benchColdStart());

console.log("\n## Type-check time of 200 resources (ms)");
console.table([benchTypecheck()]);

console.log("\n## Type-check time of 200 tools: plain JSON Schema inferred, zod (ms)");
console.table([benchTypecheckTools()]);
console.table(await (await import("./fanout.js")).benchFanout());
