// Forms from JSON Schemas: one field per property (text, number, checkbox, menu, or JSON for the rest),
// and the values read back and checked against the schema, each error shown beside its field.
import { el } from "./dom.js";

/**
 * One field of a form. `completer(name, value)` resolves with suggestions as the person types
 * (completion/complete); `prefix` keeps the ids of a dialog's fields apart from the page's.
 */
export function field(name, schema, required, completer, prefix = "f") {
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

/** Shows `text` beside the field `name`; false when the form has no such field. */
export function showError(form, name, text) {
  const box = form.querySelector(`[data-field="${CSS.escape(name)}"]`);
  if (!box) return false;
  box.classList.add("invalid");
  box.querySelector(".error").textContent = text;
  return true;
}

/** The values of a form, checked against the schema; undefined, with errors beside their fields, if any fails. */
export function collect(form, schema) {
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

/** A form of one field per property of `schema`, and a submit button labelled `action`. */
export function schemaForm(schema, action, completer) {
  const required = new Set(schema.required ?? []);
  return el(
    "form",
    {},
    ...Object.entries(schema.properties ?? {}).map(([n, s]) => field(n, s, required.has(n), completer)),
    el("div", {}, el("button", { type: "submit" }, action)),
  );
}
