// The bench's report: one markdown table of medians (each row's ratios from the same run), the targets
// with met / not met, and an SVG chart of picomcp's ratios, drawn by hand (no plotting dependency).

/** The median of `xs`; undefined when there are none. */
export const median = (xs) => {
  if (!xs?.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const fmt = (v, unit) => {
  if (v === undefined || Number.isNaN(v)) return "–";
  if (unit === "req/s")
    return v >= 10_000 ? `${(v / 1000).toFixed(1)}k` : v >= 1000 ? `${(v / 1000).toFixed(2)}k` : v.toFixed(0);
  if (unit === "×") return `${v.toFixed(2)}×`;
  if (unit === "KB") return `${Math.round(v / 1000)} KB`;
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
};

function rows(scaling) {
  const last = scaling[scaling.length - 1];
  const r = [
    ["cold", "cold start, spawn → initialize answer", "ms", "low"],
    ["coldPlain", "… with the tool's input as plain JSON Schema (no zod loaded)", "ms", "low"],
    ["coldZod", "… with zod, beside a floor that imports zod too", "ms", "low"],
    ["echoRps", "stdio `tools/call` echo, 64 in flight", "req/s", "high"],
    ["echoCpu", "… server CPU per request", "µs", "low"],
    ["readRps", "stdio templated `resources/read`, 64 in flight", "req/s", "high"],
    ["readCpu", "… server CPU per request", "µs", "low"],
    ["latP50", "stdio round trip, one in flight, p50", "µs", "low"],
    ["latP99", "… p99", "µs", "low"],
  ];
  for (const n of scaling) r.push([`hit${n}`, `read hit among ${n} templates`, "req/s", "high"]);
  for (const n of scaling) r.push([`miss${n}`, `read miss among ${n} templates`, "req/s", "high"]);
  r.push([`scale`, `hit among ${last} ÷ among ${scaling[0]} (slowdown)`, "×", "low"]);
  r.push(
    ["list", "`resources/list` of 10,000 statics, every page", "ms", "low"],
    ["httpStatelessRps", "Streamable HTTP stateless echo, 50 connections", "req/s", "high"],
    ["httpStatelessP50", "… p50", "µs", "low"],
    ["httpStatelessP99", "… p99", "µs", "low"],
    ["httpStatelessCpu", "… server CPU per request", "µs", "low"],
    ["httpSessionsRps", "Streamable HTTP with sessions echo, 50 connections", "req/s", "high"],
    ["httpSessionsP50", "… p50", "µs", "low"],
    ["httpSessionsP99", "… p99", "µs", "low"],
    ["httpSessionsCpu", "… server CPU per request", "µs", "low"],
    ["httpModernRps", "Streamable HTTP 2026-07-28 echo (no session), 50 connections", "req/s", "high"],
    ["httpModernP50", "… p50", "µs", "low"],
    ["httpModernP99", "… p99", "µs", "low"],
    ["httpModernCpu", "… server CPU per request", "µs", "low"],
    ["rssStart", "RSS after start", "MiB", "low"],
    ["rssLoad", "RSS after the stdio load", "MiB", "low"],
    ["rssLoadPlain", "… with the tool's input as plain JSON Schema (no zod loaded)", "MiB", "low"],
    ["rssLoadZod", "… with zod, beside a floor that imports zod too", "MiB", "low"],
    ["rssHttp", "RSS after the HTTP load (sessions)", "MiB", "low"],
    ["heapEcho", "JS heap allocated per request, stdio echo", "bytes", "low"],
    ["heapRead", "… stdio templated read", "bytes", "low"],
    ["heapHttp", "… HTTP stateless echo", "bytes", "low"],
    ["installed", "installed size (picomcp: unpacked; peers: with dependencies, zod aside)", "KB", "low"],
    ["packed", "picomcp packed (`npm pack`)", "KB", "low"],
    ["deps", "runtime dependencies", "", "low"],
  );
  return r;
}

/** The chart's labels, shorter than the table's. */
const SHORT = {
  cold: "cold start",
  coldPlain: "cold start, no zod",
  coldZod: "cold start, floor+zod",
  echoRps: "stdio echo req/s",
  echoCpu: "stdio echo CPU/req",
  readRps: "stdio read req/s",
  readCpu: "stdio read CPU/req",
  latP50: "stdio 1 in flight p50",
  latP99: "stdio 1 in flight p99",
  scale: "5,000 templates ÷ 10",
  list: "resources/list 10,000",
  httpStatelessRps: "HTTP stateless req/s",
  httpStatelessP50: "HTTP stateless p50",
  httpStatelessP99: "HTTP stateless p99",
  httpStatelessCpu: "HTTP stateless CPU/req",
  httpSessionsRps: "HTTP sessions req/s",
  httpSessionsP50: "HTTP sessions p50",
  httpSessionsP99: "HTTP sessions p99",
  httpSessionsCpu: "HTTP sessions CPU/req",
  httpModernRps: "HTTP 2026-07-28 req/s",
  httpModernP50: "HTTP 2026-07-28 p50",
  httpModernP99: "HTTP 2026-07-28 p99",
  httpModernCpu: "HTTP 2026-07-28 CPU/req",
  rssStart: "RSS after start",
  rssLoad: "RSS after stdio load",
  rssLoadPlain: "RSS after stdio load, no zod",
  rssLoadZod: "RSS stdio, floor+zod",
  rssHttp: "RSS after HTTP load",
  heapEcho: "heap/req stdio echo",
  heapRead: "heap/req stdio read",
  heapHttp: "heap/req HTTP stateless",
  installed: "installed size",
};

/** `{ markdown, svg }` of one run. */
export function report({ samples, sizes, names, labels, machine, rounds, quick, scaling }) {
  const value = {};
  for (const [metric, by] of Object.entries(samples)) {
    value[metric] = {};
    for (const [name, xs] of Object.entries(by)) value[metric][name] = median(xs);
  }
  const first = scaling[0];
  const last = scaling[scaling.length - 1];
  value.scale = {};
  for (const n of names) {
    const a = value[`hit${first}`]?.[n];
    const b = value[`hit${last}`]?.[n];
    if (a && b) value.scale[n] = a / b;
  }
  value.installed = {};
  value.packed = {};
  value.deps = {};
  for (const n of names) {
    if (!sizes[n]) continue;
    value.installed[n] = sizes[n].bytes;
    if (sizes[n].packed) value.packed[n] = sizes[n].packed;
    value.deps[n] = sizes[n].dependencies;
  }
  const libs = names.filter((n) => n !== "floor" && n !== "picomcp" && n !== "baseline");
  const before = names.includes("baseline");
  const lines = [];
  lines.push(
    `Machine: ${machine}; shared with other workloads, so absolute numbers move between runs, ratios less.`,
    `${rounds} round(s), contenders interleaved (the order rotates each round); each cell is the median.`,
    "",
    `| | ${names.map((n) => labels[n]).join(" | ")} | picomcp ÷ floor | picomcp ÷ best library |${before ? " picomcp ÷ before |" : ""}`,
    `|---|${names.map(() => "---:").join("|")}|---:|---:|${before ? "---:|" : ""}`,
  );
  const ratios = {};
  for (const [key, label, unit, better] of rows(scaling)) {
    const v = value[key];
    if (!v || Object.keys(v).length === 0) continue;
    const cells = names.map((n) => (v[n] === undefined ? "–" : fmt(v[n], unit)));
    // a ratio > 1 is always "picomcp better": throughput over throughput, cost under cost
    const ratio = (other) =>
      v.picomcp === undefined || other === undefined || other === 0 || v.picomcp === 0
        ? undefined
        : better === "high"
          ? v.picomcp / other
          : other / v.picomcp;
    const libValues = libs.map((n) => v[n]).filter((x) => x !== undefined);
    const best = libValues.length
      ? better === "high"
        ? Math.max(...libValues)
        : Math.min(...libValues)
      : undefined;
    const rf = key === "installed" || key === "packed" || key === "deps" ? undefined : ratio(v.floor);
    const rl = key === "deps" ? undefined : ratio(best);
    ratios[key] = { label, short: SHORT[key] ?? label, floor: rf, lib: rl, raw: v, better };
    lines.push(
      `| ${label}${unit && unit !== "×" ? ` (${unit})` : ""} | ${cells.join(" | ")} | ${rf === undefined ? "–" : fmt(rf, "×")} | ${rl === undefined ? "–" : fmt(rl, "×")} |${before ? ` ${key === "deps" || ratio(v.baseline) === undefined ? "–" : fmt(ratio(v.baseline), "×")} |` : ""}`,
    );
  }
  lines.push("", "Ratios: above 1× means picomcp is better (more requests, less time, CPU or memory).", "");
  lines.push(...targets(ratios, value, scaling), "");
  const markdown = `${lines.join("\n")}\n`;
  return { markdown, svg: quick ? "" : chart(ratios) };
}

function targets(r, value, scaling) {
  const t = [];
  const line = (ok, text) =>
    t.push(
      `- ${ok === "reported" ? "reported" : ok === undefined ? "?" : ok ? "met" : "**not met**"}: ${text}`,
    );
  const x = (v) => (v === undefined ? "–" : `${v.toFixed(2)}×`);
  for (const k of ["echoRps", "readRps"]) {
    const q = r[k];
    if (!q) continue;
    line(
      q.floor >= 0.85 && q.lib >= 1.2,
      `${q.label}: ${x(q.floor)} the floor (target ≥ 0.85×), ${x(q.lib)} the fastest library (target ≥ 1.2×)`,
    );
  }
  for (const k of ["httpStatelessRps", "httpSessionsRps", "httpModernRps"]) {
    const q = r[k];
    if (!q) continue;
    line(
      q.floor >= 0.85 && q.lib >= 2,
      `${q.label}: ${x(q.floor)} the floor (target ≥ 0.85×), ${x(q.lib)} the fastest library (target ≥ 2×)`,
    );
  }
  // round 3's: server CPU per request, the steadier figure on a shared machine, against the floor's
  const cpu = (k, max, what) => {
    const q = r[k];
    if (q?.floor === undefined) return;
    const times = 1 / q.floor;
    line(
      max === undefined ? "reported" : times <= max,
      `${what}: server CPU per request ${x(times)} the floor's${max === undefined ? " (reported beside)" : ` (target ≤ ${max}×)`}`,
    );
  };
  cpu("echoCpu", 1.15, "stdio echo");
  cpu("httpStatelessCpu", 1.25, "HTTP stateless echo");
  cpu("httpSessionsCpu", undefined, "HTTP sessions echo");
  cpu("httpModernCpu", undefined, "HTTP 2026-07-28 echo");
  if (r.latP99)
    line(
      1 / r.latP99.floor <= 1.5,
      `stdio one in flight p99: ${x(1 / r.latP99.floor)} the floor's (target ≤ 1.5×)`,
    );
  if (r.list?.lib)
    line(
      r.list.lib >= 1.5,
      `resources/list of 10,000, every page: ${x(r.list.lib)} the fastest library (target ≥ 1.5×)`,
    );
  // the start without zod against the floor (round 2's), and with zod against the floor that imports
  // zod (zod's own import is no library's doing; round 3's ≤ 1.15×)
  const plain = r.coldPlain;
  if (plain)
    line(
      1 / plain.floor <= 1.15,
      `cold start without zod: ${x(1 / plain.floor)} the floor's time (target ≤ 1.15×)`,
    );
  const coldZod = r.coldZod;
  if (coldZod)
    line(
      1 / coldZod.floor <= 1.15,
      `cold start with zod beside a floor that imports zod: ${x(1 / coldZod.floor)} its time (target ≤ 1.15×)`,
    );
  const scale = value.scale?.picomcp;
  if (scale)
    line(
      scale <= 1.5,
      `a read among ${scaling[scaling.length - 1]} templates: ${x(scale)} the time of one among ${scaling[0]} (target ≤ 1.5×)`,
    );
  const rssPlain = r.rssLoadPlain;
  if (rssPlain)
    line(
      1 / rssPlain.floor <= 1.1,
      `RSS after load without zod: ${x(1 / rssPlain.floor)} the floor's (target ≤ 1.1×)`,
    );
  const rssZod = r.rssLoadZod;
  if (rssZod)
    line(
      1 / rssZod.floor <= 1.05,
      `RSS after load with zod beside a floor that imports zod: ${x(1 / rssZod.floor)} its RSS (target ≤ 1.05×)`,
    );
  // round 3's heap targets: ≤ 1.5× the floor's bytes per request on stdio and stateless HTTP
  const heapEcho = value.heapEcho;
  if (heapEcho?.picomcp && heapEcho.floor)
    line(
      heapEcho.picomcp <= 1.5 * heapEcho.floor,
      `heap per stdio echo: ${Math.round(heapEcho.picomcp)} bytes, ${x(heapEcho.picomcp / heapEcho.floor)} the floor's (target ≤ 1.5×)`,
    );
  const heapHttp = value.heapHttp;
  if (heapHttp?.picomcp && heapHttp.floor)
    line(
      heapHttp.picomcp <= 1.5 * heapHttp.floor,
      `heap per HTTP stateless echo: ${Math.round(heapHttp.picomcp)} bytes, ${x(heapHttp.picomcp / heapHttp.floor)} the floor's (target ≤ 1.5×)`,
    );
  const packed = value.packed?.picomcp;
  if (packed)
    line(
      packed < 300_000 && value.deps.picomcp === 0,
      `one package, ${value.deps.picomcp} dependencies, ${Math.round(packed / 1000)} KB packed (target < 300 KB)`,
    );
  return t;
}

/** A horizontal bar chart of picomcp ÷ floor and picomcp ÷ best library, on a log scale around 1×. */
function chart(ratios) {
  const keys = Object.keys(ratios).filter(
    (k) => (ratios[k].floor !== undefined || ratios[k].lib !== undefined) && !/^(hit|miss)\d/.test(k),
  );
  const rowH = 34;
  const left = 190;
  const width = 900;
  const top = 50;
  const height = top + keys.length * rowH + 40;
  const plot = width - left - 30;
  const lo = Math.log(1 / 32);
  const hi = Math.log(512);
  const xOf = (v) => left + ((Math.log(Math.min(512, Math.max(1 / 32, v))) - lo) / (hi - lo)) * plot;
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/`/g, "");
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12" role="img">`,
    "<title>picomcp's ratios to the hand-written floor and to the best other library, from one run of npm run bench</title>",
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">picomcp's ratios (log scale; right of 1× is better)</text>`,
    `<rect x="${left}" y="28" width="12" height="10" fill="#2b6cb0"/><text x="${left + 16}" y="37">÷ hand-written floor</text>`,
    `<rect x="${left + 160}" y="28" width="12" height="10" fill="#dd6b20"/><text x="${left + 176}" y="37">÷ best other library</text>`,
  ];
  for (const tick of [1 / 32, 1 / 8, 1 / 2, 1, 2, 8, 32, 128, 512]) {
    const x = xOf(tick).toFixed(1);
    out.push(
      `<line x1="${x}" y1="${top - 6}" x2="${x}" y2="${height - 34}" stroke="${tick === 1 ? "#000" : "#ddd"}"/>`,
      `<text x="${x}" y="${height - 20}" text-anchor="middle">${tick < 1 ? `1/${1 / tick}` : tick}×</text>`,
    );
  }
  keys.forEach((k, i) => {
    const y = top + i * rowH;
    const { short, floor, lib } = ratios[k];
    out.push(`<text x="${left - 8}" y="${y + 18}" text-anchor="end">${esc(short)}</text>`);
    const bar = (v, dy, color) => {
      if (v === undefined) return;
      const x0 = xOf(1);
      const x1 = xOf(v);
      out.push(
        `<rect x="${Math.min(x0, x1).toFixed(1)}" y="${y + dy}" width="${Math.abs(x1 - x0).toFixed(1)}" height="11" fill="${color}"/>`,
        `<text x="${(x1 + (v >= 1 ? 4 : -4)).toFixed(1)}" y="${y + dy + 10}" text-anchor="${v >= 1 ? "start" : "end"}" font-size="10">${v.toFixed(2)}×</text>`,
      );
    };
    bar(floor, 4, "#2b6cb0");
    bar(lib, 17, "#dd6b20");
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
