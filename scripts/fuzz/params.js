// The campaign on Mcp-Param-* headers: a tool's integer, string and boolean arguments mirrored in
// headers, faithfully or not, over real sockets, both eras; and the CPU time of a 15 KB integer header.

import { drive, envelope, expectAnswer, poster, startHeadersServer } from "./beside.js";
import { finish, Ledger } from "./campaign.js";
import { random } from "./generate.js";

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
