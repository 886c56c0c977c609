// The server's primitives on screen: the lists on the left, and in the middle the form or the buttons
// of the one picked (call a tool, read or subscribe to a resource, fill a template, get a prompt) with
// its answer.
import { listen, MODERN, request, state } from "./connection.js";
import { $, el, hint } from "./dom.js";
import { collect, field, schemaForm, showError } from "./forms.js";
import { notice } from "./traffic.js";
import { expand, variables } from "./uri-template.js";

const LISTS = ["tools", "resources", "templates", "prompts"];

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

/** Lists every primitive of the server again. */
export async function refresh() {
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

/** Empties the lists: the server they came from is gone. */
export function clearLists() {
  for (const list of LISTS) $(list).replaceChildren();
}

/** Puts `nodes` in the middle pane; `screen` names a screen that is not a primitive's (a crash, say). */
export function showScreen(nodes, screen = "") {
  $("detail").dataset.screen = screen;
  $("detail").replaceChildren(...nodes.flat());
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

function detail(title, description, ...body) {
  showScreen([
    el("h1", {}, title),
    description ? el("p", { class: "description" }, description) : "",
    ...body,
  ]);
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
  target.replaceChildren(hint("…"));
  promise.then(
    (r) => target.replaceChildren(result(r, r.isError)),
    (e) =>
      target.replaceChildren(
        result({ content: [{ type: "text", text: `${e.code ?? ""} ${e.message}` }] }, true),
      ),
  );
}

function showTool(tool) {
  const schema = tool.inputSchema ?? {};
  const out = el("div");
  const form = schemaForm(schema, "Call");
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const args = collect(form, schema);
    if (!args) return;
    const token = `p${state.next}`;
    const bar = el("progress", { "data-token": token, max: "1", value: "0" });
    out.replaceChildren(bar);
    const call = request(
      "tools/call",
      { name: tool.name, arguments: args },
      { extraMeta: { progressToken: token } },
    );
    const target = el("div");
    out.append(target);
    answerInto(target, call);
    // the bar says the call is under way; once it has its answer, the answer says the rest
    call.finally(() => bar.remove()).catch(() => {});
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

/** A progress notification, on the bar of the call it belongs to. */
export function progress({ progressToken, progress, total }) {
  const bar = document.querySelector(`progress[data-token="${CSS.escape(String(progressToken))}"]`);
  if (bar) {
    bar.max = total ?? 1;
    bar.value = progress;
  }
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
  const schema = {
    properties: Object.fromEntries(
      args.map((a) => [a.name, { type: "string", ...(a.description ? { description: a.description } : {}) }]),
    ),
    required: args.filter((a) => a.required).map((a) => a.name),
  };
  const completer = state.caps.completions
    ? async (name, value) =>
        (
          await request("completion/complete", {
            ref: { type: "ref/prompt", name: prompt.name },
            argument: { name, value },
          })
        ).completion?.values ?? []
    : undefined;
  const form = schemaForm(schema, "Get", completer);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const chosen = collect(form, schema);
    if (chosen) answerInto(out, request("prompts/get", { name: prompt.name, arguments: chosen }));
  });
  detail(prompt.title ?? prompt.name, prompt.description, form, out);
}
