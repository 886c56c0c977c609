// Building the page: the two helpers every other module uses.

/** The element with this id. */
export const $ = (id) => document.getElementById(id);

/**
 * An element: `props` are attributes (`class`, and `on<event>` for a listener; true is an empty
 * attribute, false and undefined none), `children` nodes or strings, nested arrays flattened.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== undefined && c !== null) node.append(c);
  return node;
}

/** A line of grey text, as the panes show when there is nothing else to show. */
export const hint = (text, cls = "") => el("p", { class: `hint ${cls}`.trim() }, text);
