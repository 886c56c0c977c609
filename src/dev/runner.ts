/**
 * `picomcp dev`: runs the user's server as a stdio child, restarts it when its files change, and serves
 * the console page on 127.0.0.1. The page speaks JSON-RPC to the child through two endpoints: `POST
 * /send` writes one message to its stdin, `GET /events` streams its stdout (and stderr, and restarts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, type FSWatcher, readFileSync, watch } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { dirname, resolve } from "node:path";

/** Options of {@link runDev}. */
export interface DevOptions {
  /** The server's entry file: a built `.js`, or a `.ts` where Node strips types (22.18+). */
  entry: string;
  /** Arguments passed to the entry. Default: none. */
  args?: readonly string[];
  /** The console's port; a taken one falls back to a free one. Default: 6280. */
  port?: number;
  /** Receives what the runner has to say (the URL, restarts, exits). Default: `console.error`. */
  log?: (line: string) => void;
  /** Milliseconds of quiet after a file change before the restart. Default: 150. */
  debounceMs?: number;
}

/** A running `picomcp dev`. */
export interface DevRunner {
  /** The console's address, `http://127.0.0.1:<port>/`. */
  readonly url: string;
  /** Stops the watcher, the child and the console. */
  close(): Promise<void>;
}

const STATIC: { readonly [path: string]: readonly [file: string, type: string] } = {
  "/": ["console.html", "text/html; charset=utf-8"],
  "/console.js": ["console.js", "text/javascript; charset=utf-8"],
  "/console.css": ["console.css", "text/css; charset=utf-8"],
};
// dist/dev/runner.js and src/dev/runner.ts both find the page in the package's src/dev/console/
const PAGE_DIR = new URL("../../src/dev/console/", import.meta.url);
const MAX_BODY = 4 * 1024 * 1024;
const IGNORED = /(^|[\\/])(node_modules|\.git)([\\/]|$)/;

/** How to run `entry` with this Node, or an error that says what to do instead. */
export function nodeArgs(entry: string, version = process.versions.node): string[] {
  if (!/\.[cm]?ts$/.test(entry)) return [entry];
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 18)) return [entry];
  if (major === 22 && minor >= 6) return ["--experimental-strip-types", entry];
  throw new Error(
    `Node ${version} cannot run ${entry} as it is: build it first (npx tsc) and pass the .js file, or use Node 22.18+, which strips types`,
  );
}

/** Starts the child, the watcher and the console; resolves once the console listens. */
export async function runDev(options: DevOptions): Promise<DevRunner> {
  const entry = resolve(options.entry);
  if (!existsSync(entry)) throw new Error(`${options.entry} does not exist`);
  const argv = [...nodeArgs(entry), ...(options.args ?? [])];
  const log = options.log ?? ((line: string) => console.error(line));
  // each page's event stream, with the page's id; the page that last restarted the server drives it
  const clients = new Map<ServerResponse, string | undefined>();
  let owner: string | undefined;
  let child: ChildProcess | undefined;
  let generation = 0;
  let status: object = { state: "starting" };
  let closing = false;

  /** Status goes to every page; what the server says only to the page that drives it. */
  const broadcast = (event: string, data: string) => {
    const frame = `event: ${event}\ndata: ${data.split("\n").join("\ndata: ")}\n\n`;
    for (const [res, page] of clients) {
      if (event === "status" || owner === undefined || page === owner) res.write(frame);
    }
  };
  const setStatus = (next: object) => {
    status = { ...next, ...(owner === undefined ? {} : { owner }) };
    broadcast("status", JSON.stringify(status));
  };

  const lines = (stream: NodeJS.ReadableStream, each: (line: string) => void) => {
    let buffer = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      buffer += chunk;
      let nl = buffer.indexOf("\n");
      while (nl >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, "");
        buffer = buffer.slice(nl + 1);
        if (line.trim()) each(line);
        nl = buffer.indexOf("\n");
      }
    });
  };

  const start = () => {
    const gen = ++generation;
    // MCP_TRANSPORT tells a server that serves HTTP by default (like the bookshop) to speak stdio
    const proc = spawn(process.execPath, argv, {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, MCP_TRANSPORT: "stdio" },
    });
    child = proc;
    lines(proc.stdout!, (line) => broadcast(isJson(line) ? "rpc" : "stdout", line));
    lines(proc.stderr!, (line) => broadcast("stderr", line));
    proc.stdin!.on("error", () => {}); // a child that died mid-write: its exit is reported below
    proc.on("error", (error) => log(`picomcp dev: cannot start ${entry}: ${error.message}`));
    proc.on("exit", (code, signal) => {
      // stop() lets go of the child before it ends it: only an exit of its own is news
      if (child !== proc || closing) return;
      child = undefined;
      log(`picomcp dev: the server exited (${signal ?? `code ${code}`}); waiting for a change to restart`);
      setStatus({ state: "exited", generation: gen, code, signal });
    });
    setStatus({ state: "running", generation: gen, pid: proc.pid });
  };

  const stop = () =>
    new Promise<void>((done) => {
      const proc = child;
      child = undefined;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return done();
      const kill = setTimeout(() => proc.kill("SIGKILL"), 2000);
      proc.once("exit", () => {
        clearTimeout(kill);
        done();
      });
      proc.kill("SIGTERM");
    });

  let restarting: Promise<void> = Promise.resolve();
  const restart = (reason: string) => {
    restarting = restarting.then(async () => {
      if (closing) return;
      setStatus({ state: "restarting", reason });
      await stop();
      if (!closing) start();
    });
    return restarting;
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(entry), { recursive: true }, (_event, name) => {
      const file = name ? name.toString() : "";
      if (IGNORED.test(file)) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        log(`picomcp dev: ${file || "a file"} changed, restarting`);
        void restart(`${file || "a file"} changed`);
      }, options.debounceMs ?? 150);
    });
  } catch (error) {
    log(`picomcp dev: cannot watch ${dirname(entry)} (${(error as Error).message}); no restarts on change`);
  }

  const server = createServer((req, res) => {
    void route(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  let origin = "";

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    // DNS rebinding: only the addresses this console listens on
    const host = req.headers.host ?? "";
    const port = origin.slice(origin.lastIndexOf(":") + 1);
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return text(res, 403, "Forbidden host");
    const [path = "/", query = ""] = (req.url ?? "/").split("?");
    if (req.method === "GET" && path === "/events")
      return events(res, pageId(new URLSearchParams(query).get("page")));
    if (req.method === "GET" && STATIC[path]) {
      const [file, type] = STATIC[path]!;
      const body = readFileSync(new URL(file, PAGE_DIR));
      res.writeHead(200, { "content-type": type, "cache-control": "no-store" }).end(body);
      return;
    }
    if (req.method !== "POST") return text(res, 404, "Not found");
    // a page of another origin may not drive the child
    if (req.headers.origin !== undefined && req.headers.origin !== `http://${host}`)
      return text(res, 403, "Forbidden origin");
    const page = pageId(req.headers["x-picomcp-page"]);
    if (path === "/restart") {
      // a second tab takes the server over; the first is told, and hears nothing more of it
      if (page !== undefined) owner = page;
      await restart("restarted from the console");
      return text(res, 202, JSON.stringify({ generation }), "application/json");
    }
    if (path !== "/send") return text(res, 404, "Not found");
    if (owner !== undefined && page !== owner)
      return text(res, 409, "Another page drives the server now: reload this one to take it back");
    if (!String(req.headers["content-type"]).startsWith("application/json"))
      return text(res, 415, "Content-Type must be application/json");
    const body = await read(req);
    if (body === undefined) return text(res, 413, `A message is at most ${MAX_BODY} bytes`);
    let message: unknown;
    try {
      message = JSON.parse(body);
    } catch {
      return text(res, 400, "The body is not JSON");
    }
    const proc = child;
    if (!proc?.stdin?.writable) return text(res, 503, "The server is not running");
    // re-serialized: one message is one line, whatever whitespace the page sent
    proc.stdin.write(`${JSON.stringify(message)}\n`);
    return text(res, 202, "sent");
  };

  const events = (res: ServerResponse, page: string | undefined) => {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      connection: "keep-alive",
    });
    res.write(`event: status\ndata: ${JSON.stringify(status)}\n\n`);
    clients.set(res, page);
    res.on("close", () => clients.delete(res));
  };

  const listen = (port: number) =>
    new Promise<number>((ok, fail) => {
      server.once("error", fail);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", fail);
        ok((server.address() as { port: number }).port);
      });
    });
  let port: number;
  try {
    port = await listen(options.port ?? 6280);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    port = await listen(0);
  }
  origin = `http://127.0.0.1:${port}`;
  start();
  log(`picomcp dev: ${options.entry} over stdio; console at ${origin}/`);

  return {
    url: `${origin}/`,
    close: async () => {
      closing = true;
      clearTimeout(timer);
      watcher?.close();
      for (const res of clients.keys()) res.end();
      await stop();
      const closed = new Promise<void>((done) => (server as Server).close(() => done()));
      server.closeAllConnections(); // idle keep-alive sockets would hold close() for seconds
      await closed;
    },
  };
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

function text(res: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8"): void {
  res.writeHead(status, { "content-type": type }).end(body);
}

function read(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        done(undefined);
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => done(Buffer.concat(chunks).toString("utf8")));
    req.on("error", fail);
  });
}

/** A page's id as the console makes it (a UUID); anything else is no id. */
function pageId(value: string | string[] | null | undefined): string | undefined {
  return typeof value === "string" && /^[\w-]{1,64}$/.test(value) ? value : undefined;
}
