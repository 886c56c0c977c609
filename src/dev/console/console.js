// The picomcp dev console: an MCP client in the page. POST /send writes a message to the server's stdin;
// GET /events streams what it writes back. Nothing else is known about the server.

const $ = (id) => document.getElementById(id);
const MODERN = "2026-07-28";
const CLIENT = { name: "picomcp-dev", version: "1.0.0" };
/** This page's id: the runner sends what the server says only to the page that last restarted it. */
const PAGE = crypto.randomUUID();
/** The console answers elicitations (form mode) and sampling itself: a person fills the form, or writes the model's reply. */
const CAPABILITIES = { elicitation: { form: {} }, sampling: {} };
const state = {
  era: $("era").value,
  generation: 0,
  caps: {},
  pending: new Map(),
  next: 1,
  subscribed: new Set(),
};
let listenId;

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== undefined && c !== null) node.append(c);
  return node;
}

function push(list, node, max = 300) {
  $(list).prepend(node);
  while ($(list).children.length > max) $(list).lastChild.remove();
}

function traffic(direction, message) {
  const cls = direction === "→" ? "out" : message.error ? "err" : "in";
  push("traffic", el("li", { class: cls }, `${direction} ${JSON.stringify(message)}`));
}

function notice(text) {
  push("notifications", el("li", {}, `${new Date().toLocaleTimeString()} ${text}`));
}

// ---- the wire ----

async function send(message) {
  traffic("→", message);
  const res = await fetch("/send", {
    method: "POST",
    headers: { "content-type": "application/json", "x-picomcp-page": PAGE },
    body: JSON.stringify(message),
  });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
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
function request(method, params = {}, { id = `c${state.next++}`, extraMeta } = {}) {
  if (state.era === MODERN) params = { ...params, _meta: meta({ ...params._meta, ...extraMeta }) };
  else if (extraMeta) params = { ...params, _meta: { ...params._meta, ...extraMeta } };
  return new Promise((resolve, reject) => {
    // a listen stays open by design; anything else unanswered for a minute is reported, not left spinning
    // (while the server waits on the person at the page, nothing times out)
    const expire = () => {
      if (questions > 0) timer = setTimeout(expire, 60_000);
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

function onMessage(message) {
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
  const p = message.params ?? {};
  switch (message.method) {
    case "notifications/cancelled":
      notice(`cancelled ${p.requestId}${p.reason ? `: ${p.reason}` : ""}`);
      withdraw(p.requestId);
      break;
    case "notifications/message":
      push("logs", el("li", {}, `[${p.level}]${p.logger ? ` ${p.logger}:` : ""} ${JSON.stringify(p.data)}`));
      break;
    case "notifications/progress": {
      notice(`progress ${p.progress}${p.total === undefined ? "" : `/${p.total}`} ${p.message ?? ""}`);
      const bar = document.querySelector(`progress[data-token="${p.progressToken}"]`);
      if (bar) {
        bar.max = p.total ?? 1;
        bar.value = p.progress;
      }
      break;
    }
    case "notifications/tools/list_changed":
    case "notifications/prompts/list_changed":
    case "notifications/resources/list_changed":
      notice(message.method);
      void refresh();
      break;
    case "notifications/resources/updated":
      notice(`resources/updated ${p.uri}`);
      break;
    default:
      notice(message.method);
  }
}

const events = new EventSource(`/events?page=${PAGE}`);
events.addEventListener("rpc", (e) => onMessage(JSON.parse(e.data)));
events.addEventListener("stderr", (e) => push("logs", el("li", { class: "stderr" }, `stderr: ${e.data}`)));
events.addEventListener("stdout", (e) => push("logs", el("li", {}, `stdout (not JSON-RPC): ${e.data}`)));
events.addEventListener("status", (e) => {
  const s = JSON.parse(e.data);
  if (s.owner !== undefined && s.owner !== PAGE && !booting) return takenOver();
  $("status").textContent =
    s.state === "running" ? `running (pid ${s.pid})` : s.state + (s.reason ? `: ${s.reason}` : "");
  if (s.state === "running" && !booting && s.generation > state.generation) start(s.generation);
  if (s.state === "exited") notice(`server exited (${s.signal ?? `code ${s.code}`})`);
});

// ---- what the server asks of the person at the page ----

/** Questions wait their turn: one dialog at a time. */
let asking = Promise.resolve();
/** Questions asked and not yet answered. */
let questions = 0;
/** The question on screen: the server's request id (legacy) and how to take it down. */
let current;
/** Ids of questions the server withdrew before their turn came. */
const withdrawn = new Set();
const WITHDRAWN = new Error("withdrawn by the server");

/**
 * Shows one question of the server and resolves with the result to give back, or rejects with the
 * error to answer (a refused sampling, an unknown method).
 */
function ask(method, params, id) {
  if (method !== "elicitation/create" && method !== "sampling/createMessage") {
    return Promise.reject(
      Object.assign(new Error(`The console does not support ${method}`), { code: -32601 }),
    );
  }
  questions++;
  const turn = asking.then(() => {
    if (id !== undefined && withdrawn.delete(id)) throw WITHDRAWN;
    return method === "elicitation/create" ? elicitation(params, id) : sampling(params, id);
  });
  asking = turn.catch(() => {});
  return turn.finally(() => questions--);
}

/** A question in the dialog; `build(finish)` makes its body, and `finish(ok, value)` ends it. */
function question(id, title, build) {
  return new Promise((resolve, reject) => {
    const dialog = $("ask");
    const finish = (ok, value) => {
      current = undefined;
      dialog.close();
      dialog.replaceChildren();
      if (ok) resolve(value);
      else reject(value);
    };
    current = { id, withdraw: () => finish(false, WITHDRAWN) };
    dialog.replaceChildren(el("h1", {}, title), ...build(finish));
    dialog.showModal();
    // Escape closes a modal dialog: for the server, the question was cancelled
    dialog.oncancel = (e) => {
      e.preventDefault();
      dialog.querySelector("[data-cancel]")?.click();
    };
  });
}

/** The server gave up on the question it asked (notifications/cancelled). */
function withdraw(requestId) {
  if (current && current.id === requestId) current.withdraw();
  else withdrawn.add(requestId);
}

function elicitation(params, id) {
  notice(`elicitation: ${params.message ?? ""}`);
  const schema = params.requestedSchema ?? {};
  const required = new Set(schema.required ?? []);
  return question(id, "The server asks", (finish) => {
    const form = el(
      "form",
      { method: "dialog" },
      el("p", { class: "message" }, params.message ?? ""),
      ...Object.entries(schema.properties ?? {}).map(([n, s]) =>
        field(n, { ...s, description: s.title ?? s.description }, required.has(n), undefined, "ask"),
      ),
      el(
        "div",
        { class: "actions" },
        el("button", { type: "submit" }, "Accept"),
        el("button", { type: "button", onclick: () => finish(true, { action: "decline" }) }, "Decline"),
        el(
          "button",
          { type: "button", "data-cancel": true, onclick: () => finish(true, { action: "cancel" }) },
          "Cancel",
        ),
      ),
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const content = collect(form, schema);
      if (content) finish(true, { action: "accept", content });
    });
    return [form];
  });
}

function sampling(params, id) {
  notice("sampling: the server asks for a model's reply");
  return question(id, "The server asks the model", (finish) => {
    const said = (m) => {
      const parts = Array.isArray(m.content) ? m.content : [m.content];
      return parts.map((c) => (c?.type === "text" ? c.text : JSON.stringify(c))).join("\n");
    };
    const reply = el("textarea", { id: "ask-reply", name: "reply", rows: "4" });
    const form = el(
      "form",
      { method: "dialog" },
      params.systemPrompt ? el("p", { class: "about" }, `system: ${params.systemPrompt}`) : "",
      el(
        "ol",
        { class: "messages" },
        ...(params.messages ?? []).map((m) => el("li", { "data-role": m.role }, `${m.role}: ${said(m)}`)),
      ),
      el("label", { for: "ask-reply" }, `Reply as the model (at most ${params.maxTokens ?? "?"} tokens)`),
      reply,
      el(
        "div",
        { class: "actions" },
        el("button", { type: "submit" }, "Send"),
        el(
          "button",
          {
            type: "button",
            "data-cancel": true,
            onclick: () =>
              finish(false, Object.assign(new Error("The user rejected the sampling request"), { code: -1 })),
          },
          "Reject",
        ),
      ),
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      finish(true, {
        role: "assistant",
        content: { type: "text", text: reply.value },
        model: "a person at the picomcp dev console",
        stopReason: "endTurn",
      });
    });
    return [form];
  });
}

/** 2026-07-28: asks each input request of an input_required result; the retry's `inputResponses` and `requestState`. */
async function answerRounds(result) {
  const inputResponses = {};
  for (const [key, input] of Object.entries(result.inputRequests ?? {})) {
    inputResponses[key] = await ask(input.method, input.params ?? {}, undefined);
  }
  return result.requestState === undefined
    ? { inputResponses }
    : { inputResponses, requestState: result.requestState };
}

/** Another tab restarted the server and drives it now: this page stops, and says how to take it back. */
function takenOver() {
  if (document.body.dataset.taken) return;
  document.body.dataset.taken = "true";
  document.body.dataset.ready = "";
  current?.withdraw();
  for (const [, w] of state.pending) w.reject(new Error("another tab took the server over"));
  state.pending.clear();
  $("status").textContent = "taken over by another tab";
  $("detail").replaceChildren(
    el("p", { class: "hint taken" }, "Another tab took this server over. Reload this page to take it back."),
  );
  for (const list of ["tools", "resources", "templates", "prompts"]) $(list).replaceChildren();
}

// ---- session ----

// set while the page itself restarts the server: it connects once, to the process it asked for
let booting = true;

function start(generation) {
  if (state.generation) notice(`server restarted (#${generation})`);
  state.generation = generation;
  connect().catch((err) => notice(`connect failed: ${err.message}`));
}

async function connect() {
  current?.withdraw();
  withdrawn.clear();
  for (const [, w] of state.pending) w.reject(new Error("the server restarted"));
  state.pending.clear();
  state.subscribed.clear();
  listenId = undefined;
  if (state.era === MODERN) {
    const d = await request("server/discover");
    state.caps = d.capabilities ?? {};
    $("server").textContent =
      `${d._meta?.["io.modelcontextprotocol/serverInfo"]?.name ?? "server"} · ${MODERN}`;
    listen();
  } else {
    const init = await request("initialize", {
      protocolVersion: state.era,
      capabilities: CAPABILITIES,
      clientInfo: CLIENT,
    });
    state.caps = init.capabilities ?? {};
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    $("server").textContent = `${init.serverInfo.name} ${init.serverInfo.version} · ${init.protocolVersion}`;
    if (state.caps.logging) await request("logging/setLevel", { level: "debug" });
  }
  await refresh();
  document.body.dataset.ready = String(state.generation);
}

/** 2026-07-28: one listen carries list changes and the subscribed URIs; a new set replaces it. */
function listen() {
  if (listenId)
    void send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: listenId } });
  listenId = `listen-${state.next++}`;
  const notifications = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };
  if (state.subscribed.size) notifications.resourceSubscriptions = [...state.subscribed];
  request("subscriptions/listen", { notifications }, { id: listenId }).catch(() => {});
}

async function all(method, key) {
  const items = [];
  let cursor;
  do {
    const page = await request(method, cursor ? { cursor } : {});
    items.push(...(page[key] ?? []));
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

async function refresh() {
  const c = state.caps;
  const [tools, resources, templates, prompts] = await Promise.all([
    c.tools ? all("tools/list", "tools") : [],
    c.resources ? all("resources/list", "resources") : [],
    c.resources ? all("resources/templates/list", "resourceTemplates") : [],
    c.prompts ? all("prompts/list", "prompts") : [],
  ]);
  fill("tools", tools, (t) => t.name, showTool);
  fill("resources", resources, (r) => r.uri, showResource);
  fill("templates", templates, (t) => t.uriTemplate, showTemplate);
  fill("prompts", prompts, (p) => p.name, showPrompt);
}

function fill(list, items, label, show) {
  $(list).replaceChildren(
    ...items.map((item) =>
      el(
        "li",
        {
          title: label(item),
          onclick: (e) => {
            for (const li of document.querySelectorAll("nav li.selected")) li.classList.remove("selected");
            e.currentTarget.classList.add("selected");
            show(item);
          },
        },
        label(item),
        item.name && item.name !== label(item) ? el("small", {}, item.name) : undefined,
      ),
    ),
  );
  if (!items.length) $(list).append(el("li", { class: "hint" }, "none"));
}

// ---- forms ----

function field(name, schema, required, completer, prefix = "f") {
  const about = schema.description ?? "";
  const id = `${prefix}-${name}`;
  let input;
  if (Array.isArray(schema.enum)) {
    input = el(
      "select",
      { id, name },
      el("option", { value: "" }, ""),
      ...schema.enum.map((v) => el("option", { value: JSON.stringify(v) }, String(v))),
    );
  } else if (schema.type === "boolean") input = el("input", { id, name, type: "checkbox" });
  else if (schema.type === "number" || schema.type === "integer")
    input = el("input", { id, name, type: "text", inputmode: "decimal" });
  else if (schema.type === "string" || schema.type === undefined)
    input = el("input", { id, name, type: "text", autocomplete: "off" });
  else input = el("textarea", { id, name, placeholder: JSON.stringify(schema.type === "array" ? [] : {}) });
  const box = el(
    "div",
    { class: "field", "data-field": name },
    el(
      "label",
      { for: id },
      name,
      required ? " *" : "",
      about ? el("span", { class: "about" }, ` — ${about}`) : undefined,
    ),
    input,
    el("div", { class: "error" }),
  );
  if (completer) {
    const list = el("datalist", { id: `${id}-options` });
    input.setAttribute("list", list.id);
    let timer;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const values = await completer(name, input.value).catch(() => []);
        list.replaceChildren(...values.map((v) => el("option", { value: v })));
        box.dataset.completions = values.join("\n");
      }, 120);
    });
    box.append(list);
  }
  return box;
}

function showError(form, name, text) {
  const box = form.querySelector(`[data-field="${CSS.escape(name)}"]`);
  if (!box) return false;
  box.classList.add("invalid");
  box.querySelector(".error").textContent = text;
  return true;
}

/** The arguments of a form, checked against the schema; errors are shown next to their fields. */
function collect(form, schema) {
  const args = {};
  let ok = true;
  for (const box of form.querySelectorAll(".field")) {
    box.classList.remove("invalid");
    box.querySelector(".error").textContent = "";
  }
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  for (const [name, s] of Object.entries(props)) {
    const input = form.elements.namedItem(name);
    const fail = (text) => {
      ok = false;
      showError(form, name, text);
    };
    if (s.type === "boolean") {
      if (input.checked || required.has(name)) args[name] = input.checked;
      continue;
    }
    const raw = input.value;
    if (raw === "") {
      if (required.has(name)) fail("required");
      continue;
    }
    let value = raw;
    if (Array.isArray(s.enum)) value = JSON.parse(raw);
    else if (s.type === "number" || s.type === "integer") {
      value = Number(raw);
      if (!Number.isFinite(value)) fail("must be a number");
      else if (s.type === "integer" && !Number.isInteger(value)) fail("must be an integer");
      else if (s.minimum !== undefined && value < s.minimum) fail(`must be at least ${s.minimum}`);
      else if (s.maximum !== undefined && value > s.maximum) fail(`must be at most ${s.maximum}`);
    } else if (s.type === "string" || s.type === undefined) {
      if (s.minLength !== undefined && raw.length < s.minLength) fail(`at least ${s.minLength} characters`);
      else if (s.maxLength !== undefined && raw.length > s.maxLength)
        fail(`at most ${s.maxLength} characters`);
      else if (s.pattern !== undefined && !new RegExp(s.pattern, "u").test(raw))
        fail(`must match ${s.pattern}`);
    } else {
      try {
        value = JSON.parse(raw);
      } catch (e) {
        fail(`not JSON: ${e.message}`);
      }
    }
    args[name] = value;
  }
  return ok ? args : undefined;
}

function detail(title, description, ...body) {
  $("detail").replaceChildren(
    el("h1", {}, title),
    description ? el("p", { class: "description" }, description) : "",
    ...body,
  );
}

function result(value, isError = false) {
  const out = el("div", { class: `result${isError ? " error" : ""}` });
  const blocks = value.content ?? value.contents ?? value.messages;
  for (const b of blocks ?? [value]) {
    const c = b.content ?? b;
    if (c.type === "text" || typeof c.text === "string") out.append(el("pre", {}, c.text));
    else if (c.type === "resource")
      out.append(el("pre", {}, c.resource.uri, "\n", c.resource.text ?? `[blob ${c.resource.mimeType}]`));
    else out.append(el("pre", {}, JSON.stringify(c, null, 2)));
  }
  if (value.structuredContent) out.append(el("pre", {}, JSON.stringify(value.structuredContent, null, 2)));
  return out;
}

function answerInto(target, promise) {
  target.replaceChildren(el("p", { class: "hint" }, "…"));
  promise.then(
    (r) => target.replaceChildren(result(r, r.isError)),
    (e) =>
      target.replaceChildren(
        result({ content: [{ type: "text", text: `${e.code ?? ""} ${e.message}` }] }, true),
      ),
  );
}

// ---- the primitives ----

function showTool(tool) {
  const schema = tool.inputSchema ?? {};
  const required = new Set(schema.required ?? []);
  const out = el("div");
  const form = el(
    "form",
    {},
    ...Object.entries(schema.properties ?? {}).map(([n, s]) => field(n, s, required.has(n))),
    el("div", {}, el("button", { type: "submit" }, "Call")),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const args = collect(form, schema);
    if (!args) return;
    const token = `p${state.next}`;
    out.replaceChildren(el("progress", { "data-token": token, max: "1", value: "0" }));
    const call = request(
      "tools/call",
      { name: tool.name, arguments: args },
      { extraMeta: { progressToken: token } },
    );
    const target = el("div");
    out.append(target);
    answerInto(target, call);
    call.then(
      (r) => {
        // the server's own validation message names the fields: show it next to them too
        const m = r.isError && /^Invalid arguments for tool [^:]+: (.*)$/s.exec(r.content?.[0]?.text ?? "");
        if (m)
          for (const part of m[1].split("; "))
            showError(form, part.split(": ")[0], part.split(": ").slice(1).join(": "));
      },
      () => {},
    );
  });
  detail(tool.title ?? tool.name, tool.description, form, out);
}

function showResource(resource) {
  const out = el("div");
  const read = el(
    "button",
    { type: "button", onclick: () => answerInto(out, request("resources/read", { uri: resource.uri })) },
    "Read",
  );
  const subscribe = el(
    "button",
    { type: "button", onclick: () => subscribeTo(resource.uri, subscribe) },
    state.subscribed.has(resource.uri) ? "Unsubscribe" : "Subscribe",
  );
  detail(
    resource.title ?? resource.name,
    resource.description,
    el("p", { class: "uri" }, resource.uri, resource.mimeType ? ` · ${resource.mimeType}` : ""),
    el("div", {}, read, " ", subscribe),
    out,
  );
  if (!state.caps.resources?.subscribe) subscribe.disabled = true;
}

async function subscribeTo(uri, button) {
  const on = !state.subscribed.has(uri);
  if (on) state.subscribed.add(uri);
  else state.subscribed.delete(uri);
  if (state.era === MODERN) listen();
  else await request(on ? "resources/subscribe" : "resources/unsubscribe", { uri });
  button.textContent = on ? "Unsubscribe" : "Subscribe";
  notice(`${on ? "subscribed to" : "unsubscribed from"} ${uri}`);
}

const EXPRESSION = /\{([+#./;?&]?)([^}]+)\}/g;

/** RFC 6570 expansion of what the form holds; an empty field is undefined. */
function expand(template, values) {
  return template.replace(EXPRESSION, (_, op, list) => {
    const names = list.split(",").map((v) => v.replace(/[*]$|:\d+$/, ""));
    const reserved = op === "+" || op === "#";
    const enc = (v) =>
      reserved
        ? encodeURI(v)
        : encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    const defined = names.filter((n) => values[n] !== undefined && values[n] !== "");
    if (!defined.length) return "";
    const named = op === ";" || op === "?" || op === "&";
    const parts = defined.map((n) =>
      named ? `${n}${values[n] === "" && op === ";" ? "" : `=${enc(values[n])}`}` : enc(values[n]),
    );
    const first = op === "+" || op === "" ? "" : op;
    const sep = { "": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&" }[op];
    return first + parts.join(sep);
  });
}

function variables(template) {
  return [...template.matchAll(EXPRESSION)].flatMap((m) =>
    m[2].split(",").map((v) => v.replace(/[*]$|:\d+$/, "")),
  );
}

function values(form, names) {
  return Object.fromEntries(names.map((n) => [n, form.elements.namedItem(n).value]));
}

function showTemplate(template) {
  const names = variables(template.uriTemplate);
  const out = el("div");
  const preview = el("p", { class: "uri" }, template.uriTemplate);
  let form;
  const completer = state.caps.completions
    ? async (name, value) => {
        const others = Object.fromEntries(
          Object.entries(values(form, names)).filter(([n, v]) => n !== name && v !== ""),
        );
        const r = await request("completion/complete", {
          ref: { type: "ref/resource", uri: template.uriTemplate },
          argument: { name, value },
          context: { arguments: others },
        });
        return r.completion?.values ?? [];
      }
    : undefined;
  form = el(
    "form",
    {},
    ...names.map((n) => field(n, { type: "string" }, false, completer)),
    el("div", {}, el("button", { type: "submit" }, "Read")),
  );
  form.addEventListener("input", () => {
    preview.textContent = expand(template.uriTemplate, values(form, names));
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    answerInto(out, request("resources/read", { uri: expand(template.uriTemplate, values(form, names)) }));
  });
  detail(template.title ?? template.name, template.description, preview, form, out);
}

function showPrompt(prompt) {
  const args = prompt.arguments ?? [];
  const out = el("div");
  let form;
  const completer = state.caps.completions
    ? async (name, value) =>
        (
          await request("completion/complete", {
            ref: { type: "ref/prompt", name: prompt.name },
            argument: { name, value },
          })
        ).completion?.values ?? []
    : undefined;
  form = el(
    "form",
    {},
    ...args.map((a) => field(a.name, { type: "string", description: a.description }, a.required, completer)),
    el("div", {}, el("button", { type: "submit" }, "Get")),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const schema = {
      properties: Object.fromEntries(args.map((a) => [a.name, { type: "string" }])),
      required: args.filter((a) => a.required).map((a) => a.name),
    };
    const chosen = collect(form, schema);
    if (chosen) answerInto(out, request("prompts/get", { name: prompt.name, arguments: chosen }));
  });
  detail(prompt.title ?? prompt.name, prompt.description, form, out);
}

// ---- controls ----

async function restart() {
  booting = true;
  document.body.dataset.ready = "";
  try {
    const { generation } = await (
      await fetch("/restart", { method: "POST", headers: { "x-picomcp-page": PAGE } })
    ).json();
    if (generation > state.generation) start(generation);
  } finally {
    booting = false;
  }
}

$("era").addEventListener("change", () => {
  state.era = $("era").value;
  $("detail").replaceChildren(el("p", { class: "hint" }, `Switching to ${state.era}…`));
  void restart();
});
$("restart").addEventListener("click", () => void restart());
$("clear").addEventListener("click", () => $("traffic").replaceChildren());
// a fresh server for each page: an initialized session cannot be initialized twice
void restart();
