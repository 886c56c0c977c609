// The picomcp dev console: an MCP client in the page. This file starts it and follows the runner: it
// (re)connects when the server (re)starts, shows a crash when it exits, and goes quiet when another tab
// takes the server over. connection.js is the wire and the client, views.js the primitives, forms.js
// the forms made from schemas, dialogs.js what the server asks, traffic.js the right-hand pane.
import { drop, handshake, open, PAGE, restartServer, state, streaming } from "./connection.js";
import { withdraw } from "./dialogs.js";
import { $, el, hint } from "./dom.js";
import { clearTraffic, logMessage, notice, stderr, stray } from "./traffic.js";
import { clearLists, progress, refresh, showScreen } from "./views.js";

/** The generation of the server process this page is connected to (0: none yet). */
let generation = 0;
/** The last exit the runner reported, so a page that asked for a process hears that it died. */
let exited;
/** Set while the page itself restarts the server: it connects once, to the process it asked for. */
let booting = true;
/** The generation whose crash is on screen. */
let crashShown = 0;
/** What the header says of the server, shown again when a broken event stream comes back. */
let label = "";

const header = (text) => {
  label = text;
  $("server").textContent = text;
};

open({
  status(s) {
    if (s.owner !== undefined && s.owner !== PAGE && !booting) return takenOver();
    $("status").textContent =
      s.state === "running"
        ? `running (pid ${s.pid})`
        : s.state === "exited"
          ? `exited (${why(s)})`
          : s.state + (s.reason ? `: ${s.reason}` : "");
    if (s.state === "exited") {
      exited = s;
      if (!booting) crashed(s);
    } else if (s.state === "running" && !booting && s.generation > generation) start(s.generation);
  },
  notification,
  stderr,
  stdout: stray,
  back() {
    $("server").textContent = label;
  },
  lost(closed) {
    if (document.body.dataset.taken) return;
    $("server").textContent = closed ? "disconnected" : "picomcp dev is not answering; retrying…";
    if (!closed) return;
    // a 401: picomcp dev was started again, with a new secret, or this tab never had it
    drop("the console lost its connection to picomcp dev");
    clearLists();
    showScreen(
      [
        el("h1", {}, "This page lost its connection to picomcp dev"),
        hint(
          "picomcp dev stopped, or runs again with a new secret, or this tab never had it. Open the address it printed in its terminal (http://127.0.0.1:…/#…).",
        ),
      ],
      "lost",
    );
  },
});

function notification(message) {
  const p = message.params ?? {};
  switch (message.method) {
    case "notifications/cancelled":
      notice(`cancelled ${p.requestId}${p.reason ? `: ${p.reason}` : ""}`);
      withdraw(p.requestId);
      break;
    case "notifications/message":
      logMessage(p);
      break;
    case "notifications/progress":
      notice(`progress ${p.progress}${p.total === undefined ? "" : `/${p.total}`} ${p.message ?? ""}`);
      progress(p);
      break;
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

const why = (s) => s.signal ?? `code ${s.code}`;

/** The server exited by itself: say so, with its last words on stderr, and what to do about it. */
function crashed(s) {
  if (s.generation < generation || s.generation === crashShown) return;
  generation = s.generation;
  crashShown = s.generation;
  notice(`server exited (${why(s)})`);
  drop(`the server exited (${why(s)})`);
  clearLists();
  header(`exited (${why(s)})`);
  const lines = s.stderr ?? [];
  if (s.served === false) {
    // it ran to its end and exited 0 without answering anything: it never started serving
    showScreen(
      [
        el("h1", {}, "The server exited (code 0) without serving"),
        hint(
          "It never answered a request: it ran to its end and stopped. Does the entry call serveStdio(server) from picomcp/stdio? Add it as the file's last line and save: picomcp dev restarts the server.",
        ),
        lines.length
          ? [
              el("p", {}, "The last lines it wrote to stderr:"),
              el("pre", { class: "stderr" }, lines.join("\n")),
            ]
          : [],
      ],
      "never-served",
    );
    document.body.dataset.ready = "";
    return;
  }
  showScreen(
    [
      el("h1", {}, `The server exited (${why(s)})`),
      lines.length
        ? [
            el("p", {}, "The last lines it wrote to stderr:"),
            el("pre", { class: "stderr" }, lines.join("\n")),
          ]
        : hint("It wrote nothing to stderr."),
      hint(
        "Fix it and save: picomcp dev restarts the server when a file beside it changes. Or press Restart server.",
      ),
    ],
    "crashed",
  );
  document.body.dataset.ready = "";
}

/** Another tab restarted the server and drives it now: this page stops, and says how to take it back. */
function takenOver() {
  if (document.body.dataset.taken) return;
  document.body.dataset.taken = "true";
  document.body.dataset.ready = "";
  drop("another tab took the server over");
  $("status").textContent = "taken over by another tab";
  showScreen(
    [hint("Another tab took this server over. Reload this page to take it back.", "taken")],
    "taken",
  );
  clearLists();
}

function start(next) {
  if (generation) notice(`server restarted (#${next})`);
  generation = next;
  drop("the server restarted");
  // a screen about the last process (a crash, say) says nothing of this one
  if ($("detail").dataset.screen) showScreen([hint("Pick a tool, resource, template or prompt.")]);
  header(`connecting to ${state.era}…`);
  connect(next).catch((err) => {
    // the process may have died under the handshake: its exit says more than the failed request
    if (exited?.generation === next) return crashed(exited);
    if (next !== generation) return;
    notice(`connect failed: ${err.message}`);
    header(`not connected: ${err.message}`);
  });
}

async function connect(next) {
  const label = await handshake();
  if (next !== generation) return;
  header(label);
  await refresh();
  document.body.dataset.ready = String(generation);
}

async function restart() {
  booting = true;
  exited = undefined;
  document.body.dataset.ready = "";
  header("starting the server…");
  try {
    await streaming;
    const next = await restartServer();
    if (exited?.generation === next) crashed(exited);
    else if (next > generation) start(next);
  } catch (err) {
    header(`cannot restart the server: ${err.message}`);
  } finally {
    booting = false;
  }
}

state.era = $("era").value;
$("era").addEventListener("change", () => {
  state.era = $("era").value;
  showScreen([hint(`Switching to ${state.era}…`)]);
  void restart();
});
$("restart").addEventListener("click", () => void restart());
$("clear").addEventListener("click", clearTraffic);
// a fresh server for each page: an initialized session cannot be initialized twice
void restart();
