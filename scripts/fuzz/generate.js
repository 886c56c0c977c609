// Seeded messages for the wire fuzzer: well-formed JSON-RPC of both eras, mutated, and raw junk.

/** A seeded PRNG (mulberry32): the same seed gives the same campaign. */
export function random(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (list) => list[int(list.length)], chance: (p) => next() < p };
}

export const MODERN = "2026-07-28";
export const META = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, sampling: {} },
  "io.modelcontextprotocol/clientInfo": { name: "fuzz", version: "1" },
};

// names from Object.prototype reach every lookup of a name that comes from the wire
const PROTO = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "__defineGetter__"];
const TOOLS = ["echo", "whoami", "throws", "refused", "scoped", "big", "progress", "asks", "x", ...PROTO];
const URIS = [
  "files://a/b",
  "files://a/../../etc/passwd",
  "files://%2e%2e/%2e%2e/x",
  "files://a%00b",
  "note://a",
  "nope://x",
  "",
  "note://" + "a".repeat(5000),
  ...PROTO,
];
const JUNK = [
  null,
  0,
  -1,
  1.5,
  1e308,
  true,
  "",
  "x",
  "\u0000",
  "\ud800",
  [],
  [1, [2]],
  {},
  { __proto__: null, constructor: 1 },
  JSON.parse('{"__proto__":{"polluted":1}}'),
];
const LEGACY_METHODS = [
  "ping",
  "tools/list",
  "tools/call",
  "tools/call",
  "tools/call",
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "initialize",
  "nope",
  "",
  ...PROTO,
];
// no initialize: over stdio one that succeeds would turn the rest of the campaign into a 2025 session
const MODERN_METHODS = [
  "server/discover",
  ...LEGACY_METHODS.filter((m) => !m.startsWith("resources/sub") && m !== "initialize"),
];
const NOTIFICATIONS = [
  "notifications/initialized",
  "notifications/progress",
  "notifications/roots/list_changed",
  "notifications/cancelled",
  "notifications/nope",
  "constructor",
];

function params(r, method, modern) {
  const p = {};
  switch (method) {
    case "tools/call":
      p.name = r.pick(TOOLS);
      p.arguments = r.chance(0.8) ? { t: r.pick(["hi", "", "é", "\ud800"]) } : r.pick(JUNK);
      if (r.chance(0.2)) p._meta = { progressToken: r.int(1000) };
      break;
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe":
      p.uri = r.pick(URIS);
      break;
    case "prompts/get":
      p.name = r.pick(["p", "p", ...PROTO]);
      p.arguments = r.pick([{ a: "v" }, {}, { constructor: "v" }, JSON.parse('{"__proto__":"v"}'), { a: 1 }]);
      break;
    case "completion/complete":
      p.ref = r.chance(0.6)
        ? { type: "ref/prompt", name: r.pick(["p", ...PROTO]) }
        : { type: "ref/resource", uri: r.pick(["files://{+path}", "note://a", "toString"]) };
      p.argument = { name: r.pick(["a", "path", ...PROTO]), value: r.pick(["", "v", "\ud800"]) };
      break;
    case "logging/setLevel":
      p.level = r.pick(["debug", "error", "toString", 3]);
      break;
    case "initialize":
      p.protocolVersion = r.pick(["2025-11-25", "2025-03-26", MODERN, "x"]);
      p.capabilities = {};
      p.clientInfo = { name: "f", version: "1" };
      break;
    default:
      if (r.chance(0.5)) p.cursor = r.pick(["", "x", "eyJ9", 5]);
  }
  if (modern) p._meta = { ...META, ...(p._meta ?? {}) };
  return p;
}

/** A request of the era: `{ jsonrpc, id, method, params }` with a fresh id. */
export function request(r, id, modern) {
  const method = r.pick(modern ? MODERN_METHODS : LEGACY_METHODS);
  return { jsonrpc: "2.0", id, method, params: params(r, method, modern) };
}

/** A notification; a `notifications/cancelled` names an id that is never in flight. */
export function notification(r, modern) {
  const method = r.pick(NOTIFICATIONS);
  const p = method === "notifications/cancelled" ? { requestId: `never-${r.int(1e9)}` } : {};
  if (modern) p._meta = META;
  return { jsonrpc: "2.0", method, params: p };
}

/** Changes one thing of a message: a field dropped, a value swapped for junk, the id made invalid. */
export function mutate(r, message) {
  const m = structuredClone(message);
  const target = m.params && typeof m.params === "object" && r.chance(0.6) ? m.params : m;
  const keys = Object.keys(target);
  switch (r.int(6)) {
    case 0:
      if (keys.length) delete target[r.pick(keys)];
      break;
    case 1:
      if (keys.length) {
        const key = r.pick(keys);
        // a junk id that is valid ("x", 0) could repeat another request's: ids only go invalid
        target[key] = target === m && key === "id" ? r.pick([null, true, {}, []]) : r.pick(JUNK);
      }
      break;
    case 2:
      m.id = r.pick([null, true, {}, []]);
      break;
    case 3:
      m.jsonrpc = r.pick(["1.0", 2, null, "2.0 "]);
      break;
    case 4:
      m.method = r.pick([5, null, "", {}, "tools/call ", ...PROTO]);
      break;
    default:
      target[r.pick(["_meta", "params", "name", "extra", "__proto__"])] = r.pick(JUNK);
  }
  return m;
}

const enc = new TextEncoder();
const INVALID_UTF8 = [[0xff], [0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]];

/** Bytes that are not one JSON message: truncated, broken, invalid UTF-8, deeply nested. */
export function junk(r, text) {
  const bytes = enc.encode(text);
  switch (r.int(6)) {
    case 0:
      return bytes.subarray(0, 1 + r.int(Math.max(1, bytes.length - 1)));
    case 1: {
      const bad = r.pick(INVALID_UTF8);
      const at = r.int(bytes.length);
      return new Uint8Array([...bytes.subarray(0, at), ...bad, ...bytes.subarray(at)]);
    }
    case 2: {
      const depth = r.pick([100, 10_000, 100_000]);
      return enc.encode("[".repeat(depth) + "]".repeat(depth));
    }
    case 3: {
      const depth = r.pick([1000, 50_000]);
      return enc.encode('{"a":'.repeat(depth) + "1" + "}".repeat(depth));
    }
    case 4:
      return enc.encode(r.pick(["{", "}", "[,]", "nul", "\ufeff{}", '{"a":1,}', "1e99999", '"\\ud800"']));
    default:
      return enc.encode(text.replace(/"/, "'"));
  }
}

/** Where a message's answers go: ids answered once, answers without an id (certain, or possible). */
export function oracle(value, batches) {
  const out = { ids: [], idless: 0, maybe: 0 };
  if (Array.isArray(value)) {
    if (!batches || value.length === 0) out.idless++;
    else
      for (const v of value) {
        const o = oracle(v, false);
        out.ids.push(...o.ids);
        out.idless += o.idless;
        out.maybe += o.maybe;
      }
    return out;
  }
  if (typeof value !== "object" || value === null) {
    out.idless++;
    return out;
  }
  const valid = (id) => typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
  const hasId = Object.hasOwn(value, "id");
  if (Object.hasOwn(value, "method")) {
    if (hasId) valid(value.id) ? out.ids.push(value.id) : out.idless++;
    else if (value.jsonrpc !== "2.0" || typeof value.method !== "string") out.maybe++;
  } else if (Object.hasOwn(value, "result") || Object.hasOwn(value, "error")) {
    // a response to the server: never answered, however malformed it is
    out.maybe += value.jsonrpc === "2.0" && valid(value.id) ? 0 : 1;
  } else if (hasId && valid(value.id)) out.ids.push(value.id);
  else out.maybe++;
  return out;
}

/** Why an answer is not well-formed JSON-RPC, or undefined. */
export function malformed(a) {
  if (typeof a !== "object" || a === null || Array.isArray(a)) return "not an object";
  if (a.jsonrpc !== "2.0") return "jsonrpc is not 2.0";
  if (Object.hasOwn(a, "method")) return undefined; // a request or notification from the server
  if (Object.hasOwn(a, "result") === Object.hasOwn(a, "error")) return "not exactly one of result, error";
  if (a.error && (!Number.isInteger(a.error.code) || typeof a.error.message !== "string"))
    return "a bad error object";
  if (Object.hasOwn(a, "id") && a.id !== null && typeof a.id !== "string" && typeof a.id !== "number")
    return "a bad id";
  return undefined;
}
