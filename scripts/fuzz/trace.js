// The campaign on trace context in `_meta` (traceparent, tracestate, baggage): valid, malformed, oversized
// and of other types, over real sockets to an instrumented server, both eras; the tool says whether it
// ran in the trace it had to.

import { drive, envelope, expectAnswer, poster, startHeadersServer } from "./beside.js";
import { finish, Ledger } from "./campaign.js";
import { random } from "./generate.js";

const HEX = "0123456789abcdef";

function hex(r, n, upper = false) {
  let s = "";
  for (let i = 0; i < n; i++) s += HEX[r.int(16)];
  return upper ? s.toUpperCase() : s;
}

/** A nonzero lower-case id of `n` hex digits. */
function id(r, n) {
  const s = hex(r, n);
  return /^0+$/.test(s) ? `1${s.slice(1)}` : s;
}

/**
 * A `traceparent` and what it makes of the request's trace: `parent` (a valid one: the server's span
 * continues it) or `not` (a malformed one, or none: a trace of the server's own, never this id).
 */
function traceparent(r) {
  const trace = id(r, 32);
  const span = id(r, 16);
  const flags = r.pick(["00", "01"]);
  const kind = r.int(16);
  switch (kind) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
      return { value: `00-${trace}-${span}-${flags}`, parent: trace };
    case 5:
      return { value: `00-${trace.toUpperCase()}-${span}-${flags}`, not: trace };
    case 6:
      return { value: `00-${"0".repeat(32)}-${span}-${flags}`, not: "0".repeat(32) };
    case 7:
      return { value: `00-${trace}-${"0".repeat(16)}-${flags}`, not: trace };
    case 8:
      return { value: `ff-${trace}-${span}-${flags}`, not: trace };
    case 9:
      return { value: `00-${trace.slice(1)}-${span}-${flags}`, not: trace.slice(1) };
    case 10:
      return { value: `00-${trace}-${span}-${flags}-extra`, not: trace };
    case 11:
      return { value: `00-${trace.slice(0, 31)}g-${span}-${flags}`, not: trace };
    case 12:
      // a valid one past the length a value may have: ignored, as if absent
      return { value: `00-${trace}-${span}-${flags}${" ".repeat(9000)}`, not: trace };
    case 13:
      return {
        value: r.pick([42, null, true, [`00-${trace}-${span}-01`], { traceparent: trace }]),
        not: trace,
      };
    case 14:
      return { value: `00-${trace}-${span}`, not: trace };
    default:
      return { value: undefined, not: "" };
  }
}

/** A `tracestate` or `baggage` of any shape: valid lists, long ones, junk, other types. */
function listValue(r, sep) {
  const k = r.int(8);
  if (k === 0) return undefined;
  if (k === 1) return r.pick([7, null, {}, ["a=b"], false]);
  if (k === 2) return "x".repeat(r.pick([100, 8192, 8193, 60_000]));
  const n = r.pick([1, 2, 32, 33, 200]);
  const parts = [];
  for (let i = 0; i < n; i++) {
    const key = r.chance(0.9) ? `k${i}${r.chance(0.2) ? "@vendor" : ""}` : r.pick(["", "K", "=", "é", "a b"]);
    const value = r.chance(0.9) ? hex(r, 1 + r.int(20)) : r.pick(["", ",", "=", "\u0000", "é"]);
    parts.push(`${key}=${value}`);
  }
  return parts.join(sep);
}

/** `messages` tools/calls with trace context in `_meta`, half in each era; each must run in the right trace. */
export async function traceCampaign({ messages, seed, window = 16 }) {
  const r = random(seed);
  const started = Date.now();
  const server = await startHeadersServer();
  const url = new URL(server.hello.url);
  const { post, close } = poster(url, window);
  const ledger = new Ledger();
  const kinds = { parent: 0, malformed: 0 };
  const one = async (i) => {
    const era = i % 2 ? "2026" : "2025";
    const tp = traceparent(r);
    const { headers, meta } = envelope(url, era, "trace");
    if (tp.value !== undefined) meta.traceparent = tp.value;
    const state = listValue(r, ",");
    if (state !== undefined) meta.tracestate = state;
    const baggage = listValue(r, ",");
    if (baggage !== undefined) meta.baggage = baggage;
    const args = tp.parent ? { parent: tp.parent } : { not: tp.not };
    kinds[tp.parent ? "parent" : "malformed"]++;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: { name: "trace", arguments: args, _meta: meta },
    });
    const res = await post(headers, body);
    expectAnswer(
      ledger,
      res,
      i,
      { status: 200, text: "ok" },
      `${era} traceparent ${JSON.stringify(tp.value)?.slice(0, 80)}`,
    );
  };
  const baseline = await drive(server, messages, window, one, ledger);
  close();
  const { spans } = await server.memory();
  return finish("trace context", server, {
    messages,
    seed,
    started,
    ledger,
    baseline,
    extra: { ...kinds, spans },
  });
}
