// The HTTP campaign: real sockets to a child process, both eras, header abuse, session and principal swaps.
import { Agent, request as httpRequest } from "node:http";
import { finish, Ledger, startServer } from "./campaign.js";
import { junk, META, MODERN, mutate, notification, oracle, random, request } from "./generate.js";

const TOKENS = [
  { token: "Bearer t-alice", subject: "alice" },
  { token: "Bearer t-bob", subject: "bob" },
  { token: undefined, subject: "-" },
];
const HOSTS = ["evil.com", "localhost:3000@evil.com", "a b", "", "127.0.0.1:1", "[::1]", "localhost"];
const ABUSE = [
  ["host", HOSTS],
  ["origin", ["http://evil.com", "null", "http://127.0.0.1", "http://localhost:1"]],
  [
    "content-type",
    ["text/plain", "application/json; charset=latin1", "application/jsonx", "", "multipart/form-data"],
  ],
  ["accept", ["text/html", "application/json", "text/event-stream", "*/*", ""]],
  ["mcp-protocol-version", ["2099-01-01", "junk", "2025-03-26", MODERN, "2024-11-05", ""]],
  ["mcp-session-id", ["x", "0".repeat(32), "\u00e9".repeat(10), "a".repeat(4000)]],
  ["mcp-method", ["tools/list", "constructor", "=?base64?dG9vbHMvbGlzdA==?=", ""]],
  ["mcp-name", ["=?base64?!!?=", "toString", "=?base64?ZWNobw==?="]],
  ["authorization", ["Bearer", "Basic YTpi", "Bearer t-x", "Bearer t-alice t-bob"]],
  ["last-event-id", ["x.1", "..", "-1"]],
];
const OK = new Set([200, 202, 204, 400, 401, 403, 404, 405, 406, 409, 413, 415, 429, 503]);

function isRequestLike(body) {
  return typeof body === "object" && body !== null && !Array.isArray(body);
}

/** Runs `messages` fuzzed POSTs (and some GETs and DELETEs); `era` is "2025" (sessions) or "2026" (stateless). */
export async function httpCampaign({ messages, seed, era, window = 16 }) {
  const r = random(seed);
  const timing = random(seed + 1);
  const modern = era === "2026";
  const started = Date.now();
  const server = await startServer("http");
  const url = new URL(server.hello.url);
  // fifo: every kept-alive socket stays busy, none idles into the server's keep-alive timeout
  const agent = new Agent({ keepAlive: true, maxSockets: window, scheduling: "fifo" });
  const ledger = new Ledger();
  const statuses = {};
  let next = 1;
  let swaps = 0;
  let cut = 0;
  const churned = new Set();
  let rounds = 0;
  const followUps = [];

  /** One HTTP exchange; SSE events are handed to `onEvent` as they come. */
  const exchange = (method, headers, body, onEvent, tries = 0) =>
    new Promise((resolve) => {
      const clean = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined));
      let req;
      try {
        req = httpRequest({
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method,
          headers: clean,
        });
      } catch (error) {
        // the client refused the header itself: nothing reached the server
        resolve({ status: 0, headers: {}, text: "", skipped: String(error) });
        return;
      }
      const timer = setTimeout(() => {
        ledger.problem(`no HTTP response in 30 s: ${method} ${String(body).slice(0, 200)}`);
        req.destroy();
      }, 30_000);
      req.on("response", (res) => {
        const type = res.headers["content-type"] ?? "";
        let text = "";
        let pending = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
          if (!type.startsWith("text/event-stream") || !onEvent) return;
          pending += chunk;
          let end = pending.indexOf("\n\n");
          while (end >= 0) {
            const event = pending.slice(0, end);
            pending = pending.slice(end + 2);
            end = pending.indexOf("\n\n");
            const data = event
              .split("\n")
              .filter((l) => l.startsWith("data:"))
              .map((l) => l.slice(5).trimStart())
              .join("\n");
            if (data) onEvent(data);
          }
        });
        res.on("end", () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode, headers: res.headers, text });
        });
        res.on("error", () => {});
      });
      req.on("error", (error) => {
        clearTimeout(timer);
        // a kept-alive socket the server closed meanwhile (after a 413, say): every client retries that once
        if (req.reusedSocket && error.code === "ECONNRESET" && tries < 3) {
          resolve(exchange(method, headers, body, onEvent, tries + 1));
          return;
        }
        resolve({ status: -1, headers: {}, text: "", error: String(error) });
      });
      req.end(body);
    });

  const base = (who, extra = {}) => ({
    host: `${url.hostname}:${url.port}`,
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    ...(who.token ? { authorization: who.token } : {}),
    ...extra,
  });

  const sessions = [];
  const openSession = async () => {
    const who = r.pick(TOKENS);
    const version = r.pick(["2025-11-25", "2025-03-26"]);
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: `init-${next++}`,
      method: "initialize",
      params: {
        protocolVersion: version,
        capabilities: { elicitation: {} },
        clientInfo: { name: "f", version: "1" },
      },
    });
    const res = await exchange("POST", base(who), body);
    const id = res.headers["mcp-session-id"];
    if (res.status !== 200 || !id) {
      ledger.problem(`initialize failed: ${res.status} ${res.text.slice(0, 200)}`);
      return;
    }
    const session = { id, who, version };
    await exchange(
      "POST",
      base(who, { "mcp-session-id": id, "mcp-protocol-version": version }),
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    );
    sessions.push(session);
  };

  /** A request from the server on a POST's stream: answered on its session, after a try by someone else. */
  const answerServer = async (session, message) => {
    const reply = JSON.stringify({
      jsonrpc: "2.0",
      id: message.id,
      result: { action: "accept", content: { n: "v" } },
    });
    const headers = (who) =>
      base(who, { "mcp-session-id": session.id, "mcp-protocol-version": session.version });
    if (timing.chance(0.3)) {
      const other = TOKENS.find((t) => t.subject !== session.who.subject);
      const res = await exchange("POST", headers(other), reply);
      swaps++;
      if (res.status < 400) ledger.problem(`another principal answered a server request: ${res.status}`);
    }
    const res = await exchange("POST", headers(session.who), reply);
    // the session may have ended meanwhile (a DELETE of the churn)
    if (res.status !== 202 && !([404, -1].includes(res.status) && !sessions.includes(session)))
      ledger.problem(`the session's own answer got ${res.status}`);
  };

  /** Checks one response against what its message was owed. */
  const check = (res, { owed, abused, swapped, who, text, headers, session }) => {
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status === 0) return;
    if (res.status === -1) {
      // a client that sends more than the body limit may find the socket closed after the 413
      // a session the churn ended meanwhile cuts the streams of its requests in flight
      const ended = session !== undefined && !sessions.includes(session);
      if (ended) cut++;
      // over 1 MiB the bridge may close the connection after a refusal, while the body is still going out
      else if (Buffer.byteLength(text) <= 1024 * 1024)
        ledger.problem(
          `connection error: ${res.error} for ${JSON.stringify(headers)} ${String(text).slice(0, 200)}`,
        );
      for (const id of owed.ids) ledger.owed.delete(id);
      return;
    }
    if (!OK.has(res.status))
      ledger.problem(`status ${res.status} for ${JSON.stringify(headers)} ${String(text).slice(0, 300)}`);
    const type = res.headers["content-type"] ?? "";
    const answers = [];
    if (res.status === 202 || res.status === 204) {
      if (res.text !== "") ledger.problem(`a ${res.status} with a body`);
    } else if (type.startsWith("text/event-stream")) {
      // the events were read as they came
    } else if (type.startsWith("application/json")) {
      try {
        const value = JSON.parse(res.text);
        answers.push(...(Array.isArray(value) ? value : [value]));
      } catch {
        ledger.problem(`a JSON body that does not parse: ${res.text.slice(0, 200)}`);
      }
    } else ledger.problem(`status ${res.status} with content-type ${type}`);
    if (swapped && res.status < 300)
      ledger.problem(`a request on another principal's session got ${res.status}`);
    const served = res.status === 200;
    if (served && !abused) {
      ledger.idlessCertain += owed.idless;
      ledger.idlessMaybe += owed.maybe;
    }
    for (const a of answers) {
      const context = served && !abused ? ledger.take(a) : undefined;
      if (!served || abused) {
        const why =
          a.error && Number.isInteger(a.error.code) ? undefined : "an error status without an error";
        if (why && res.status >= 400) ledger.problem(`${why}: ${JSON.stringify(a).slice(0, 200)}`);
      }
      inspect(a, who, context);
    }
    // answered without running (refused, abused): nothing is owed any more
    if (!served || abused) for (const id of owed.ids) ledger.owed.delete(id);
    if (served && !abused && !type.startsWith("text/event-stream") && answers.length === 0 && owed.ids.length)
      ledger.problem("a 200 without answers");
  };

  /** The invariants of the principal: a caller only ever runs as itself, and gets its own request state. */
  const inspect = (a, who, context) => {
    const text = a?.result?.content?.[0]?.text;
    if (typeof text === "string" && text.startsWith("caller=") && text !== `caller=${who.subject}`)
      ledger.problem(`${who.subject} ran as ${text}`);
    if (typeof text === "string" && text.startsWith("owner=")) {
      rounds++;
      const [owner, caller] = text.split(" ");
      if (owner.slice(6) !== caller.slice(7) || caller.slice(7) !== who.subject)
        ledger.problem(`a request state crossed callers: ${text} for ${who.subject}`);
    }
    const result = a?.result;
    if (context?.asks && result?.resultType === "input_required" && typeof result.requestState === "string")
      if (timing.chance(0.7)) followUps.push({ params: context.params, state: result.requestState, who });
  };

  const headersFor = (message) => {
    if (!modern) return {};
    const h = { "mcp-protocol-version": MODERN };
    if (
      isRequestLike(message) &&
      typeof message.method === "string" &&
      /^[\x21-\x7e]*$/.test(message.method)
    ) {
      h["mcp-method"] = message.method;
      const p = message.params;
      const name = p && typeof p === "object" ? (p.name ?? p.uri) : undefined;
      if (typeof name === "string" && /^[\x20-\x7e]*$/.test(name) && name.length < 1000) h["mcp-name"] = name;
    }
    // a legacy session's id on a 2026-07-28 request must not reach that session
    if (sessions.length && r.chance(0.1)) h["mcp-session-id"] = r.pick(sessions).id;
    return h;
  };

  const one = async (i) => {
    const kind = r.next();
    const id = r.chance(0.5) ? next++ : `s${next++}`;
    const planned = request(r, id, modern);
    const session = modern ? undefined : r.pick(sessions);
    let who = session ? session.who : r.pick(TOKENS);
    let message;
    let bytes;
    if (kind < 0.1 && followUps.length) {
      const f = followUps.shift();
      message = {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: {
          ...f.params,
          inputResponses: { n: { action: "accept", content: { n: "v" } } },
          requestState: f.state,
        },
      };
      // the state was sealed for f.who: someone else gets it refused
      who = timing.chance(0.3) ? timing.pick(TOKENS) : f.who;
      if (who !== f.who) swaps++;
    } else if (kind < 0.7) message = planned;
    else if (kind < 0.8) message = notification(r, modern);
    else if (kind < 0.88) message = mutate(r, r.chance(0.8) ? planned : notification(r, modern));
    else if (kind < 0.95) bytes = junk(r, JSON.stringify(planned));
    else if (kind < 0.998)
      message = [planned, notification(r, modern), request(r, next++, modern)].slice(0, 1 + r.int(3));
    else {
      const big = "é".repeat(512 * 1024 * (1 + r.int(5)));
      message = {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "echo", arguments: { t: big }, ...(modern ? { _meta: META } : {}) },
      };
    }
    const body = bytes ? Buffer.from(bytes) : JSON.stringify(message);
    let headers = base(who, headersFor(message));
    if (session)
      headers = { ...headers, "mcp-session-id": session.id, "mcp-protocol-version": session.version };
    let swapped = false;
    if (session && r.chance(0.05)) {
      const other = r.pick(TOKENS.filter((t) => t.subject !== session.who.subject));
      who = other;
      headers = base(other, { "mcp-session-id": session.id, "mcp-protocol-version": session.version });
      swapped = true;
      swaps++;
    }
    let abused = false;
    if (r.chance(0.08)) {
      const [name, values] = r.pick(ABUSE);
      headers[name] = r.pick(values);
      if (name === "authorization") who = { token: headers[name], subject: "?" };
      abused = true;
    }
    let owed = { ids: [], idless: 0, maybe: 0 };
    if (bytes) {
      try {
        owed = oracle(
          JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)),
          !modern && session?.version === "2025-03-26",
        );
      } catch {
        // no JSON: one parse error, with an error status
      }
    } else if (message !== undefined) {
      const batches = !modern && session?.version === "2025-03-26";
      owed = oracle(message, batches);
      // the answers of a batch that is too long, or of a refused request, are one error: only ids are tracked
      ledger.expect(
        { ids: owed.ids, idless: 0, maybe: 0 },
        {
          asks: isRequestLike(message) && message.params?.name === "asks",
          params: message.params,
          text: body.slice(0, 300),
          session,
        },
      );
    }
    const sse = [];
    const res = await exchange("POST", headers, body, (data) => {
      let m;
      try {
        m = JSON.parse(data);
      } catch {
        ledger.problem(`an SSE event that is not JSON: ${data.slice(0, 200)}`);
        return;
      }
      if (Object.hasOwn(m, "method") && Object.hasOwn(m, "id") && session) void answerServer(session, m);
      else sse.push(m);
    });
    check(res, { owed, abused, swapped, who, text: body, headers, session });
    for (const m of sse) inspect(m, who, abused ? undefined : ledger.take(m));
    if (!modern && !abused && timing.chance(0.01) && i > 0) await churn();
  };

  /** Sessions come and go: a GET stream opened and dropped, a DELETE by another principal, a real DELETE. */
  const churn = async () => {
    const session = r.pick(sessions);
    if (!session) return;
    const headers = (who) =>
      base(who, {
        "mcp-session-id": session.id,
        "mcp-protocol-version": session.version,
        accept: "text/event-stream",
      });
    const other = TOKENS.find((t) => t.subject !== session.who.subject);
    const theirs = await exchange("DELETE", headers(other));
    if (theirs.status < 400) ledger.problem(`another principal ended a session: ${theirs.status}`);
    const res = await exchange("DELETE", headers(session.who));
    if (res.status !== 204 && res.status !== 404)
      ledger.problem(`DELETE of one's own session: ${res.status}`);
    sessions.splice(sessions.indexOf(session), 1);
    churned.add(session);
    await openSession();
  };

  if (!modern) for (let k = 0; k < 6; k++) await openSession();
  else await openSession();

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
  for (const s of sessions.splice(0)) await exchange("DELETE", base(s.who, { "mcp-session-id": s.id }));
  await new Promise((resolve) => setTimeout(resolve, 100));
  // a request waiting on its client when the churn ended its session never gets an answer: that is the point
  for (const [id, context] of ledger.owed)
    if (context.session && churned.has(context.session) && context.asks) {
      ledger.owed.delete(id);
      cut++;
    }
  agent.destroy();
  return finish(`http ${modern ? MODERN : "2025 sessions"}`, server, {
    messages,
    seed,
    started,
    ledger,
    baseline,
    extra: { statuses, swaps, cutByDelete: cut, inputRounds: rounds },
  });
}
