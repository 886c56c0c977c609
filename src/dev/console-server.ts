/**
 * The console's side of `picomcp dev`: an HTTP server on 127.0.0.1 that serves the page and gives it
 * two endpoints to the user's server: `POST /send` (one JSON-RPC message to its stdin) and `GET /events`
 * (what it writes back, and the runner's status). Each of them needs this run's secret in a header (the
 * page's static files need none), every response forbids framing, and only the page itself may send or
 * restart.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

/** What the console drives: the runner's child process. */
export interface ConsoleBackend {
  /** The runner's status now, the first event of every stream. */
  status(): object;
  /** Writes one line to the server's stdin; false when no server is running. */
  send(line: string): boolean;
  /** Restarts the server; resolves with the new process's generation. */
  restart(reason: string): Promise<number>;
}

/** The running console. */
export interface ConsoleServer {
  /** The address to open, carrying this run's secret in its fragment: `http://127.0.0.1:<port>/#<secret>`. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Sends an event to the pages: status to all, what the server says to the page that drives it. */
  broadcast(event: "status" | "rpc" | "stdout" | "stderr", data: string): void;
  /** Ends every stream and stops listening. */
  close(): Promise<void>;
}

// dist/dev/ and src/dev/ both find the page in the package's src/dev/console/
const PAGE_DIR = new URL("../../src/dev/console/", import.meta.url);
const TYPES: { readonly [ext: string]: string } = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};
const MAX_BODY = 4 * 1024 * 1024;
/**
 * The header that carries the secret, on the page's every request but for its files. No cookie: a
 * browser sends a cookie of 127.0.0.1 to every port of it, so any local server the person visits would
 * get it. The page keeps the secret in sessionStorage, which is its origin's alone (the port included),
 * and a header of its own forces another origin's fetch into a preflight, which the console refuses.
 */
export const SECRET_HEADER = "x-picomcp-secret";

/**
 * Sent on every response, errors included. The page has no inline script or style, so `'self'` is all
 * it needs; `frame-ancestors 'none'` and `X-Frame-Options` keep it out of any other page's frame, where
 * its on-load restart and its buttons could be driven by that page.
 */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; base-uri 'none'; form-action 'none'; object-src 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
} as const;

/** The page's files by path: `/` is console.html, every other file of the folder is served by its name. */
function pageFiles(): Map<string, readonly [file: string, type: string]> {
  const files = new Map<string, readonly [string, string]>();
  for (const file of readdirSync(PAGE_DIR)) {
    const type = TYPES[file.slice(file.lastIndexOf(".") + 1)];
    if (type && /^[\w-]+\.\w+$/.test(file))
      files.set(file === "console.html" ? "/" : `/${file}`, [file, type]);
  }
  return files;
}

/** Listens on 127.0.0.1 at `port` (a taken one falls back to a free one) with a fresh secret. */
export async function serveConsole(backend: ConsoleBackend, port: number): Promise<ConsoleServer> {
  // 256 bits from the CSPRNG, new each run: any local process can reach the port, none can guess this
  const secret = randomBytes(32).toString("base64url");
  const files = pageFiles();
  // each page's event stream, with the page's id; the page that last restarted the server drives it
  const clients = new Map<ServerResponse, string | undefined>();
  let owner: string | undefined;
  let origin = "";

  const frame = (event: string, data: string) =>
    `event: ${event}\ndata: ${data.split("\n").join("\ndata: ")}\n\n`;
  const status = () => JSON.stringify({ ...backend.status(), ...(owner === undefined ? {} : { owner }) });
  const broadcast = (event: string, data: string) => {
    const text = frame(event, event === "status" ? status() : data);
    for (const [res, page] of clients) {
      if (event === "status" || owner === undefined || page === owner) res.write(text);
    }
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    // DNS rebinding: only the addresses this console listens on
    const host = req.headers.host ?? "";
    const port = origin.slice(origin.lastIndexOf(":") + 1);
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return text(res, 403, "Forbidden host");
    const target = req.url ?? "/";
    const cut = target.indexOf("?");
    const path = cut < 0 ? target : target.slice(0, cut);
    const query = new URLSearchParams(cut < 0 ? "" : target.slice(cut + 1));
    // the page's files are the package's, the same for everyone: they carry no secret and need none (a
    // navigation cannot carry a header); the page finds the secret in the address's fragment
    const file = files.get(path);
    if (req.method === "GET" && file) {
      res.writeHead(200, { "content-type": file[1] }).end(readFileSync(new URL(file[0], PAGE_DIR)));
      return;
    }
    // a preflight: another origin's fetch that sets the secret's header asks first, and hears no
    if (req.method === "OPTIONS") return text(res, 403, "Forbidden: the console answers its own page only");
    const given = req.headers[SECRET_HEADER];
    if (typeof given !== "string" || given === "") return unauthorized(res, "This request has no secret");
    if (!same(given, secret)) return unauthorized(res, "This request's secret is not this run's");
    if (req.method === "GET" && path === "/events") return events(res, pageId(query.get("page")));
    if (req.method !== "POST") return text(res, 404, "Not found");
    // only the console's own page may change anything: not another origin, not another site's frame or form
    if (req.headers.origin !== undefined && req.headers.origin !== `http://${host}`)
      return text(res, 403, "Forbidden origin");
    if (req.headers["sec-fetch-site"] !== "same-origin")
      return text(res, 403, "Forbidden: only the console's own page may send (Sec-Fetch-Site: same-origin)");
    const page = pageId(req.headers["x-picomcp-page"]);
    if (path === "/restart") {
      // a second tab takes the server over; the first is told, and hears nothing more of it
      if (page !== undefined) owner = page;
      const generation = await backend.restart("restarted from the console");
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
    // re-serialized: one message is one line, whatever whitespace the page sent
    if (!backend.send(`${JSON.stringify(message)}\n`)) return text(res, 503, "The server is not running");
    return text(res, 202, "sent");
  };

  const unauthorized = (res: ServerResponse, why: string) =>
    text(
      res,
      401,
      `${why}. Open the address that picomcp dev printed in its terminal (${origin}/#…): it carries a secret made for each run.`,
    );

  const events = (res: ServerResponse, page: string | undefined) => {
    res.writeHead(200, { "content-type": "text/event-stream", connection: "keep-alive" });
    res.write(frame("status", status()));
    clients.set(res, page);
    res.on("close", () => clients.delete(res));
  };

  const server = createServer((req, res) => {
    void route(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const listen = (at: number) =>
    new Promise<number>((ok, fail) => {
      server.once("error", fail);
      server.listen(at, "127.0.0.1", () => {
        server.off("error", fail);
        ok((server.address() as { port: number }).port);
      });
    });
  let bound: number;
  try {
    bound = await listen(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    bound = await listen(0);
  }
  origin = `http://127.0.0.1:${bound}`;

  return {
    url: `${origin}/#${secret}`,
    origin,
    broadcast,
    close: async () => {
      for (const res of clients.keys()) res.end();
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections(); // idle keep-alive sockets would hold close() for seconds
      await closed;
    },
  };
}

/** Compares secrets in constant time (both hashed first, so their lengths never differ). */
function same(given: string, secret: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(secret));
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
