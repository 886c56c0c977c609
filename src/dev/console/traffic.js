// The right-hand pane: the raw JSON-RPC both ways, the server's log messages and stderr, and every
// notification, newest first.
import { $, el } from "./dom.js";

/** Entries kept per list; older ones drop off the bottom. */
const MAX = 300;

function push(list, node) {
  $(list).prepend(node);
  while ($(list).children.length > MAX) $(list).lastChild.remove();
}

/** One JSON-RPC message, `→` sent or `←` received. */
export function traffic(direction, message) {
  const cls = direction === "→" ? "out" : message.error ? "err" : "in";
  push("traffic", el("li", { class: cls }, `${direction} ${JSON.stringify(message)}`));
}

/** A notification, or anything else worth a line, with the time it came. */
export function notice(text) {
  push("notifications", el("li", {}, `${new Date().toLocaleTimeString()} ${text}`));
}

/** A log message of the server's (`notifications/message`). */
export function logMessage({ level, logger, data }) {
  push("logs", el("li", {}, `[${level}]${logger ? ` ${logger}:` : ""} ${JSON.stringify(data)}`));
}

/** What the server wrote to stderr in one write (a stack trace stays one entry, its lines in order). */
export function stderr(text) {
  push("logs", el("li", { class: "stderr" }, el("pre", {}, text)));
}

/** A line the server wrote to stdout that is not JSON-RPC (it would break a real client). */
export function stray(text) {
  push("logs", el("li", { class: "stray" }, `stdout (not JSON-RPC): ${text}`));
}

/** Empties the JSON-RPC list. */
export function clearTraffic() {
  $("traffic").replaceChildren();
}
