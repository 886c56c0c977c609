// The campaigns on what a client sends beside its message: trace context in `_meta` (traceparent,
// tracestate, baggage) and the Mcp-Param-* headers of a tool's arguments, over real sockets to an
// instrumented server in a child process, both eras. Each message has one right answer, known here.
import { fork } from "node:child_process";
import { Agent, request as httpRequest } from "node:http";
import { fileURLToPath } from "node:url";
import { finish, Ledger } from "./campaign.js";
import { META, MODERN, random } from "./generate.js";

const FIXTURE = fileURLToPath(new URL("../../test/fixtures/fuzz-headers-server.js", import.meta.url));
const HEX = "0123456789abcdef";

/** The instrumented server: its URL, memory, CPU time, and how to stop it (the shape `finish` reads). */
async function startHeadersServer() {
  const child = fork(FIXTURE, [], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    execArgv: ["--expose-gc", "--max-old-space-size=512"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const hello = await new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.once("exit", () => reject(new Error("the fuzz server exited before it was ready")));
  });
  let alive = true;
  exited.then(() => {
    alive = false;
  });
  const ask = (what) =>
    new Promise((resolve) => {
      child.once("message", resolve);
      child.send(what);
    });
  return {
    hello,
    memory: () => ask("memory"),
    cpu: async () => (await ask("cpu")).cpu,
    stop: async () => {
      if (alive) child.disconnect();
      await exited;
    },
    isAlive: () => alive,
  };
}

/** Sends POSTs over one kept-alive agent; each resolves with status, headers and text (status -1: a socket error). */
function poster(url, window) {
  const agent = new Agent({ keepAlive: true, maxSockets: window, scheduling: "fifo" });
  const post = (headers, body) =>
    new Promise((resolve) => {
      let req;
      try {
        req = httpRequest({
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers,
        });
      } catch (error) {
        resolve({ status: 0, text: String(error) });
        return;
      }
      req.on("response", (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }));
      });
      req.on("error", (error) => resolve({ status: -1, text: String(error) }));
      req.end(body);
    });
  return { post, close: () => agent.destroy() };
}

/** Runs `messages` requests through `one(i)` (at most `window` at once), reading the heap after a warm-up. */
async function drive(server, messages, window, one, ledger) {
  let baseline;
  const warmup = Math.min(1000, Math.floor(messages / 5));
  const inflight = new Set();
  for (let i = 0; i < messages; i++) {
    if (i === warmup) {
      await Promise.all(inflight);
      baseline = await server.memory();
    }
    const p = one(i).catch((error) => ledger.problem(`the fuzzer failed: ${error?.stack ?? error}`));
    inflight.add(p);
    p.finally(() => inflight.delete(p));
    if (inflight.size >= window) await Promise.race(inflight);
    if (!server.isAlive()) break;
  }
  await Promise.all(inflight);
  return baseline;
}

/** The headers and `_meta` of a tools/call of `tool` in `era` ("2025": no session; "2026": the revision's own). */
function envelope(url, era, tool, extraHeaders = {}) {
  const headers = {
    host: `${url.hostname}:${url.port}`,
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    ...extraHeaders,
  };
  if (era === "2026") {
    headers["mcp-protocol-version"] = MODERN;
    headers["mcp-method"] = "tools/call";
    headers["mcp-name"] = tool;
  } else headers["mcp-protocol-version"] = "2025-11-25";
  return { headers, meta: era === "2026" ? { ...META } : {} };
}

/** Checks a tools/call's answer: `status`, and then its text (200) or its error code (otherwise). */
function expectAnswer(ledger, res, id, want, context) {
  if (res.status !== want.status) {
    ledger.problem(
      `status ${res.status}, wanted ${want.status}: ${context} -> ${String(res.text).slice(0, 200)}`,
    );
    return;
  }
  let a;
  try {
    a = JSON.parse(res.text);
  } catch {
    ledger.problem(`a body that is not JSON: ${String(res.text).slice(0, 200)}`);
    return;
  }
  ledger.answers++;
  if (a.id !== id) ledger.problem(`the answer's id ${JSON.stringify(a.id)} is not ${JSON.stringify(id)}`);
  if (want.code !== undefined) {
    if (a.error?.code !== want.code)
      ledger.problem(`error ${JSON.stringify(a.error)}, wanted ${want.code}: ${context}`);
    return;
  }
  const text = a.result?.content?.[0]?.text;
  if (text !== want.text)
    ledger.problem(`answered ${JSON.stringify(text)}, wanted ${JSON.stringify(want.text)}: ${context}`);
}

// ---- trace context -------------------------------------------------------------------------------

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

// ---- Mcp-Param-* ----------------------------------------------------------------------------------

const b64 = (text) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`;

/** One of `forms` (each gives a header and whether it stands for the argument): one that does when `agree`. */
function pickForm(r, forms, agree) {
  const made = forms.map((f) => f());
  const fit = agree ? made.filter(([, same]) => same) : made;
  return r.pick(fit);
}

/** An integer argument and a header for it: `same` when the header stands for exactly that integer. */
function integerParam(r, agree) {
  const n = r.pick([0, 1, 42, -7, 2 ** 53 - 1, -(2 ** 31), 1e21, r.int(1e9)]);
  // the integer in plain decimal digits (String(1e21) is "1e+21")
  const t = BigInt(n).toString();
  const long = 15_000;
  const forms = [
    () => [String(n), true],
    () => [`${t}.0`, true],
    () => [`${t}e0`, true],
    () => [n === 0 ? "0e-3" : `${t}000e-3`, true],
    () => [`${t}.${"0".repeat(long - 40)}`, true],
    () => [b64(t), true],
    () => [(BigInt(n) + 1n).toString(), false],
    () => [`0x${n.toString(16)}`, false],
    () => [`+${t}`, false],
    () => [`0${t.replace("-", "")}${n === 0 ? "1" : ""}`, false],
    () => [`${t}.5`, false],
    // the slow case that was: a long run of zeros that does not end the text
    () => [`1${"0".repeat(long)}1`, false],
    () => [`1${"0".repeat(long)}`, false],
    () => ["9".repeat(long), false],
    () => [`${t}e${"9".repeat(400)}`, n === 0],
    () => [`${t}e-${"9".repeat(400)}`, n === 0],
    () => ["x".repeat(r.pick([1, long])), false],
    () => [b64("é"), false],
  ];
  const [header, same] = pickForm(r, forms, agree);
  return { value: n, header, same };
}

function stringParam(r, agree) {
  const value = r.pick([
    "",
    "a",
    "hello world",
    "é",
    "日本",
    "\u0000",
    " lead",
    "x".repeat(8000),
    "=?base64?Zm9v?=",
  ]);
  // a header carries visible ASCII only: anything else goes in Base64 (the client would refuse it)
  const plain = /^[\x20-\x7e]*$/.test(value);
  const forms = [
    () => [b64(value), true],
    () => (plain ? [value, value.trim() === value && !value.startsWith("=?base64?")] : [b64(value), true]),
    () => [plain ? `${value}x` : b64(`${value}x`), false],
    () => ["=?base64?!!!?=", false],
    () => ["=?base64?wyg=?=", false],
  ];
  const [header, same] = pickForm(r, forms, agree);
  return { value, header, same };
}

function booleanParam(r, agree) {
  const value = r.chance(0.5);
  const forms = [
    () => [String(value), true],
    () => [String(!value), false],
    () => [value ? "TRUE" : "False", false],
    () => [value ? "1" : "0", false],
    () => [b64(String(value)), true],
  ];
  const [header, same] = pickForm(r, forms, agree);
  return { value, header, same };
}

/** `messages` tools/calls whose arguments are mirrored in Mcp-Param-* headers; each agrees or is refused -32020. */
export async function paramsCampaign({ messages, seed, window = 16, cpu: measure = true }) {
  const r = random(seed);
  const started = Date.now();
  const server = await startHeadersServer();
  const url = new URL(server.hello.url);
  const { post, close } = poster(url, window);
  const ledger = new Ledger();
  const outcomes = { agreed: 0, refused: 0 };
  const one = async (i) => {
    const era = i % 2 ? "2026" : "2025";
    // half the messages mirror every argument faithfully, the rest at random
    const agreeing = r.chance(0.5);
    const n = integerParam(r, agreeing);
    const s = stringParam(r, agreeing);
    const b = booleanParam(r, agreeing);
    // one long header at most: Node's headers fit in 16 KiB
    const params = [
      ["n", n],
      ["s", s],
      ["b", b],
    ].filter(([, p], k) => k === 0 || p.header.length < 1000 || n.header.length < 1000);
    const headerMap = {};
    for (const [name, p] of params) headerMap[`mcp-param-${name}`] = p.header;
    const { headers, meta } = envelope(url, era, "route", headerMap);
    const args = Object.fromEntries(params.map(([name, p]) => [name, p.value]));
    const agree = params.every(([, p]) => p.same);
    outcomes[agree ? "agreed" : "refused"]++;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: { name: "route", arguments: args, ...(era === "2026" ? { _meta: meta } : {}) },
    });
    const text = `routed ${args.n} ${typeof args.s === "string" ? args.s.length : "-"} ${args.b}`;
    const want = agree ? { status: 200, text } : { status: 400, code: -32020 };
    const res = await post(headers, body);
    expectAnswer(
      ledger,
      res,
      i,
      want,
      `${era} ${params.map(([k, p]) => `${k}=${p.header.slice(0, 40)}`).join(" ")}`,
    );
  };
  const baseline = await drive(server, messages, window, one, ledger);
  close();
  // (the short seed set inside the tests leaves the clock out: `cpu: false`)
  const cpu = measure ? await headerCpu(server, url) : undefined;
  // linear: about the same as an integer without the run of zeros (quadratic, it was hundreds of times that)
  if (cpu && cpu.ratio > 3) ledger.problem(`a 15 KB run of zeros costs ${cpu.ratio}x a same-length integer`);
  return finish("Mcp-Param-*", server, {
    messages,
    seed,
    started,
    ledger,
    baseline,
    extra: { ...outcomes, cpu },
  });
}

/**
 * The server's CPU time for 15 KB integer headers made to be slow (a run of zeros that does not end
 * the text) against controls of the same length: an integer without the run, and a value that is no
 * number at all. A ratio near 1 to the first says the parse is linear.
 */
async function headerCpu(server, url, rounds = 300) {
  const { post, close } = poster(url, 1);
  const run = async (header) => {
    const before = await server.cpu();
    for (let i = 0; i < rounds; i++) {
      const { headers, meta } = envelope(url, "2026", "route", { "mcp-param-n": header });
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: { name: "route", arguments: { n: 42 }, _meta: meta },
      });
      await post(headers, body);
    }
    return (await server.cpu()) - before;
  };
  const zeros = `1${"0".repeat(15_000)}1`;
  const integer = `1${"2".repeat(15_000)}1`;
  const text = "x".repeat(zeros.length);
  // one of each first, so that none pays for the warm-up
  for (const h of [text, integer, zeros]) await run(h);
  const slow = await run(zeros);
  const same = await run(integer);
  const none = await run(text);
  close();
  const ms = (us) => Math.round(us / rounds / 10) / 100;
  const ratio = (a, b) => Math.round((a / b) * 100) / 100;
  return {
    msPerRequest: { zeros: ms(slow), integer: ms(same), text: ms(none) },
    ratio: ratio(slow, same),
    ratioToText: ratio(slow, none),
  };
}
