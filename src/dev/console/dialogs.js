// What the server asks of the person at the page: an elicitation is a form in a dialog, a sampling
// request a reply written as the model. One question is on screen at a time; a question the server
// withdraws leaves it unanswered.
import { $, el } from "./dom.js";
import { collect, field } from "./forms.js";
import { notice } from "./traffic.js";

/** Questions wait their turn: one dialog at a time. */
let asking = Promise.resolve();
/** Questions asked and not yet answered. */
let questions = 0;
/** The question on screen: the server's request id (legacy) and how to take it down. */
let current;
/** Ids of questions the server withdrew before their turn came. */
const withdrawn = new Set();

/** The rejection of a question the server withdrew: nothing is sent back for it. */
export const WITHDRAWN = new Error("withdrawn by the server");

/** Whether a question is waiting for the person (while one is, no request times out). */
export const waiting = () => questions > 0;

/**
 * Shows one question of the server and resolves with the result to give back, or rejects with the
 * error to answer (a refused sampling, an unknown method).
 */
export function ask(method, params, id) {
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

/** The server gave up on the question it asked (notifications/cancelled). */
export function withdraw(requestId) {
  if (current && current.id === requestId) current.withdraw();
  else withdrawn.add(requestId);
}

/** The server is gone (restarted, exited, taken over): every question goes with it. */
export function withdrawAll() {
  current?.withdraw();
  withdrawn.clear();
}

/** 2026-07-28: asks each input request of an input_required result; the retry's `inputResponses` and `requestState`. */
export async function answerRounds(result) {
  const inputResponses = {};
  for (const [key, input] of Object.entries(result.inputRequests ?? {})) {
    inputResponses[key] = await ask(input.method, input.params ?? {}, undefined);
  }
  return result.requestState === undefined
    ? { inputResponses }
    : { inputResponses, requestState: result.requestState };
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
