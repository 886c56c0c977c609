// The connection to the server, through picomcp dev: POST /send writes one message to its stdin, GET
// /events streams what it writes back and the runner's status, POST /restart starts it afresh. On it,
// the MCP client: requests and their answers, the handshake of either era, the 2026-07-28 listen.
import { answerRounds, ask, WITHDRAWN, waiting, withdrawAll } from "./dialogs.js";
import { traffic } from "./traffic.js";

export const MODERN = "2026-07-28";
const CLIENT = { name: "picomcp-dev", version: "1.0.0" };
/** This page's id: the runner sends what the server says only to the page that last restarted it. */
export const PAGE = crypto.randomUUID();
/**
 * This run's secret: the address picomcp dev prints carries it in its fragment, which no request sends.
 * It moves to sessionStorage (this origin's alone, port included, and this tab's: a reload keeps it) and
 * out of the address bar at once; every request to the runner carries it in a header, never a cookie.
 */
export const SECRET = (() => {
  const KEY = "picomcp-dev-secret";
  const given = location.hash.slice(1);
  if (given) {
    sessionStorage.setItem(KEY, given);
    history.replaceState(null, "", location.pathname);
  }
  // the address pasted again into this tab (a new run's, say) changes only the fragment: start afresh
  addEventListener("hashchange", () => location.hash.length > 1 && location.reload());
  return sessionStorage.getItem(KEY) ?? "";
})();
const SECRET_HEADER = "x-picomcp-secret";
/** The console answers elicitations (form mode) and sampling itself: a person fills the form, or writes the model's reply. */
const CAPABILITIES = { elicitation: { form: {} }, sampling: {} };

/** The session with the server now: its era, its capabilities, the requests awaiting an answer. */
export const state = {
  era: "2025-11-25", // the era menu's choice
  caps: {},
  pending: new Map(),
  next: 1,
  subscribed: new Set(),
  listenId: undefined,
};

async function post(path, body) {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-picomcp-page": PAGE, [SECRET_HEADER]: SECRET },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return res;
}

/** Sends one message to the server. */
export async function send(message) {
  traffic("→", message);
  await post("/send", message);
}

/** Restarts the server; resolves with the new process's generation. */
export async function restartServer() {
  return (await (await post("/restart")).json()).generation;
}

function meta(extra = {}) {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": CAPABILITIES,
    "io.modelcontextprotocol/clientInfo": CLIENT,
    "io.modelcontextprotocol/logLevel": "debug",
    ...extra,
  };
}

/** One request; 2026-07-28 requests carry their revision in `_meta`. */
export function request(method, params = {}, { id = `c${state.next++}`, extraMeta } = {}) {
  if (state.era === MODERN) params = { ...params, _meta: meta({ ...params._meta, ...extraMeta }) };
  else if (extraMeta) params = { ...params, _meta: { ...params._meta, ...extraMeta } };
  return new Promise((resolve, reject) => {
    // a listen stays open by design; anything else unanswered for a minute is reported, not left spinning
    // (while the server waits on the person at the page, nothing times out)
    const expire = () => {
      if (waiting()) timer = setTimeout(expire, 60_000);
      else if (state.pending.delete(id)) reject(new Error(`${method}: no answer after 60 s`));
    };
    let timer = method === "subscriptions/listen" ? undefined : setTimeout(expire, 60_000);
    const done = (fn) => (value) => {
      clearTimeout(timer);
      fn(value);
    };
    // 2026-07-28: a result that needs input is asked of the person, then the request is sent again
    const settle = (value) =>
      value?.resultType === "input_required"
        ? answerRounds(value).then((more) =>
            request(method, { ...params, ...more, _meta: params._meta }, { extraMeta }),
          )
        : value;
    state.pending.set(id, {
      resolve: done((value) => Promise.resolve(settle(value)).then(resolve, reject)),
      reject: done(reject),
    });
    send({ jsonrpc: "2.0", id, method, params }).catch((e) => {
      state.pending.delete(id);
      done(reject)(e);
    });
  });
}

/** The server is gone (restarted, exited, taken over): what was asked of it fails with `why`. */
export function drop(why) {
  withdrawAll();
  for (const [, w] of state.pending) w.reject(new Error(why));
  state.pending.clear();
  state.subscribed.clear();
  state.listenId = undefined;
}

/** Set once the event stream was first answered (or refused). */
let answered;
/**
 * Settles once the event stream was first answered, or refused: the runner registers the page before it
 * answers, so what the server says from then on reaches it. The page restarts the server only after it
 * (else the answer to its first request could be sent before the page listens).
 */
export const streaming = new Promise((resolve) => {
  answered = resolve;
});

/**
 * Opens the event stream. `on.status(s)` hears the runner (running, restarting, exited),
 * `on.notification(m)` every notification of the server's, `on.stderr` and `on.stdout` its other output,
 * `on.lost(closed)` a stream that broke (closed: refused, it will not come back), `on.back()` one that
 * came back. A fetch, not an EventSource, which cannot send the secret's header; it reconnects as one.
 */
export function open(on) {
  const handlers = {
    rpc: (data) => receive(JSON.parse(data), on.notification),
    stderr: (data) => on.stderr(data),
    stdout: (data) => on.stdout(data),
    status: (data) => on.status(JSON.parse(data)),
  };
  const connect = async () => {
    let res;
    try {
      res = await fetch(`/events?page=${PAGE}`, { headers: { [SECRET_HEADER]: SECRET }, cache: "no-store" });
    } catch {
      on.lost(false);
      return setTimeout(connect, 1000);
    }
    answered();
    // a refusal (401: picomcp dev runs again, with a new secret, or this tab never had it) is final
    if (!res.ok) return on.lost(true);
    on.back();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = "message";
          const data = [];
          for (const line of frame.split("\n")) {
            if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          try {
            handlers[event]?.(data.join("\n"));
          } catch (error) {
            console.error(error); // one bad frame is not a broken stream
          }
        }
      }
    } catch {
      // the connection broke: picomcp dev stopped, or the network did
    }
    on.lost(false);
    setTimeout(connect, 1000);
  };
  void connect();
}

function receive(message, notification) {
  traffic("←", message);
  if (message.id !== undefined && !message.method) {
    const waiting = state.pending.get(message.id);
    if (!waiting) return;
    state.pending.delete(message.id);
    if (message.error) waiting.reject(Object.assign(new Error(message.error.message), message.error));
    else waiting.resolve(message.result);
    return;
  }
  if (message.id !== undefined) {
    // the server asks: ping is answered at once; elicitation and sampling go to the person at the page
    const id = message.id;
    const reply =
      message.method === "ping" ? Promise.resolve({}) : ask(message.method, message.params ?? {}, id);
    reply.then(
      (result) => send({ jsonrpc: "2.0", id, result }),
      // a question the server withdrew gets no answer
      (e) =>
        e !== WITHDRAWN && send({ jsonrpc: "2.0", id, error: { code: e.code ?? -1, message: e.message } }),
    );
    return;
  }
  notification(message);
}

/**
 * Opens a session in the chosen era: `initialize` on 2025-11-25, `server/discover` on 2026-07-28;
 * resolves with the server's name, version and revision, as the header shows them.
 */
export async function handshake() {
  if (state.era === MODERN) {
    const d = await request("server/discover");
    state.caps = d.capabilities ?? {};
    const info = d._meta?.["io.modelcontextprotocol/serverInfo"] ?? {};
    listen();
    return `${[info.name ?? "server", info.version].filter(Boolean).join(" ")} · ${MODERN}`;
  }
  const init = await request("initialize", {
    protocolVersion: state.era,
    capabilities: CAPABILITIES,
    clientInfo: CLIENT,
  });
  state.caps = init.capabilities ?? {};
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  if (state.caps.logging) await request("logging/setLevel", { level: "debug" });
  return `${init.serverInfo.name} ${init.serverInfo.version} · ${init.protocolVersion}`;
}

/** 2026-07-28: one listen carries list changes and the subscribed URIs; a new set replaces it. */
export function listen() {
  if (state.listenId)
    void send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: state.listenId } });
  state.listenId = `listen-${state.next++}`;
  const notifications = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };
  if (state.subscribed.size) notifications.resourceSubscriptions = [...state.subscribed];
  request("subscriptions/listen", { notifications }, { id: state.listenId }).catch(() => {});
}
