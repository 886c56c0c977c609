// What the campaigns on what comes beside a message share (trace.js, params.js): the instrumented server
// in a child process, POSTs over one kept-alive agent, the driving loop, a tools/call's headers in each
// era, and the check of its one right answer.
import { fork } from "node:child_process";
import { Agent, request as httpRequest } from "node:http";
import { fileURLToPath } from "node:url";
import { META, MODERN } from "./generate.js";

const FIXTURE = fileURLToPath(new URL("../../test/fixtures/fuzz-headers-server.js", import.meta.url));

/** The instrumented server: its URL, memory, CPU time, and how to stop it (the shape `finish` reads). */
export async function startHeadersServer() {
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
export function poster(url, window) {
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
export async function drive(server, messages, window, one, ledger) {
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
export function envelope(url, era, tool, extraHeaders = {}) {
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
export function expectAnswer(ledger, res, id, want, context) {
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
