// TemplateRouter lookup cost as the number of registered templates grows.
// Run after `npm run build`: `node bench/template-match.js`, or call `benchTemplates()` from bench/run.js.
import { pathToFileURL } from "node:url";
import { TemplateRouter } from "../build/lib/resources/router.js";
import { parseUriTemplate } from "../build/lib/resources/template.js";

const SIZES = [10, 100, 1000, 5000];
const SHAPES = [
  (i) => `api://v1/resource${i}/{id}`,
  (i) => `api://v2/resource${i}/{id}/items{?page,limit}`,
  (i) => `files://project${i}/{+path}`,
  (i) => `db://tables/t${i}/{row}{?fields*}`,
  (i) => `github://org${i}/{repo}/blob/{ref}/{+path}`,
  (i) => `search${i}://{?q,lang}`,
  (i) => `mail://box${i}{/folders*}/{id}.eml`,
];

/** `count` varied templates; the hit and the miss are built from the middle one. */
function templates(count) {
  return Array.from({ length: count }, (_, i) => SHAPES[i % SHAPES.length](i));
}

/** Best of `rounds` timings of `iterations` calls, in ns per call. */
function time(fn, uri, iterations) {
  const start = performance.now();
  for (let i = 0; i < iterations; i++) fn(uri);
  return ((performance.now() - start) * 1e6) / iterations;
}

/**
 * Rows of `{ templates, hitNs, missNs, hitRatio, missRatio }`; ratios are to the 10-template row.
 * Every router is built before any is timed, and the sizes are timed in turn, round after round, so that
 * they all run on the same heap: the ratios then show the index's cost, not the garbage collector's.
 */
export async function benchTemplates({ iterations = 100_000, rounds = 7 } = {}) {
  const hit = "api://v2/resource8/42/items?limit=10&page=2";
  const miss = "api://v2/resource8/42/things?page=2";
  const rows = SIZES.map((n) => {
    const router = new TemplateRouter();
    for (const t of templates(n)) router.add(parseUriTemplate(t), t);
    if (router.match(hit)?.value !== "api://v2/resource8/{id}/items{?page,limit}")
      throw new Error("bench: no hit");
    if (router.match(miss) !== null) throw new Error("bench: unexpected match");
    return {
      templates: n,
      match: (uri) => router.match(uri),
      hitNs: Number.POSITIVE_INFINITY,
      missNs: Number.POSITIVE_INFINITY,
    };
  });
  for (let round = -1; round < rounds; round++) {
    for (const row of rows) {
      const h = time(row.match, hit, iterations);
      const m = time(row.match, miss, iterations);
      if (round < 0) continue; // warm-up
      row.hitNs = Math.min(row.hitNs, h);
      row.missNs = Math.min(row.missNs, m);
    }
  }
  const [base] = rows;
  return rows.map(({ templates, hitNs, missNs }) => ({
    templates,
    hitNs,
    missNs,
    hitRatio: hitNs / base.hitNs,
    missRatio: missNs / base.missNs,
  }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchTemplates();
  console.log("templates   hit ns/op  (x N=10)   miss ns/op  (x N=10)");
  for (const r of rows) {
    console.log(
      `${String(r.templates).padStart(9)}  ${r.hitNs.toFixed(0).padStart(9)}  ${r.hitRatio.toFixed(2).padStart(9)}  ${r.missNs.toFixed(0).padStart(11)}  ${r.missRatio.toFixed(2).padStart(9)}`,
    );
  }
}
