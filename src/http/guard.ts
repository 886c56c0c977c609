/** Hosts a local server answers by default: loopback names, any port. */
export const LOOPBACK_HOSTS: readonly string[] = Object.freeze(["localhost", "127.0.0.1", "[::1]"]);

/** An RFC 3986 authority without user info: a reg-name or IPv4, or an IPv6 literal, and a port. */
const HOST_SYNTAX = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::\d{1,5})?$/;

/** Whether a `Host` header is well formed (`localhost:3000@evil.com` is not). */
export function validHost(host: string): boolean {
  return HOST_SYNTAX.test(host);
}

/** Splits `host[:port]` (IPv6 in brackets) into a lower-case host name and the port text. */
function splitHost(value: string): { name: string; port: string } {
  const v = value.trim().toLowerCase();
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(v);
  return m ? { name: m[1]!, port: m[2] ?? "" } : { name: v, port: "" };
}

/**
 * Whether `host` (a Host header, `name[:port]`) is allowed: an entry with a port must match
 * exactly; an entry without one matches that name on any port. `"*"` allows everything.
 */
export function hostAllowed(host: string, allowed: readonly string[] | "*"): boolean {
  if (allowed === "*") return true;
  const h = splitHost(host);
  return allowed.some((entry) => {
    const e = splitHost(entry);
    return e.name === h.name && (e.port === "" || e.port === h.port);
  });
}

/**
 * The Host check of one handler: 400 for a malformed Host, 403 for one not allowed, else 0. The last
 * verdict is kept: a client sends the same Host with every request.
 */
export class HostCheck {
  readonly #allowed: readonly string[] | "*";
  #last: string | undefined;
  #refusal = 0;

  constructor(allowed: readonly string[] | "*") {
    this.#allowed = allowed;
  }

  refusal(host: string): number {
    if (host === this.#last) return this.#refusal;
    this.#refusal = !validHost(host) ? 400 : hostAllowed(host, this.#allowed) ? 0 : 403;
    this.#last = host;
    return this.#refusal;
  }

  // each refused Host is told of once (a client repeats it with every request), up to 100 of them
  readonly #told = new Set<string>();

  /** The operator's line for a refused `host`, the first time it is refused; else undefined. */
  toldOnce(host: string): string | undefined {
    if (this.#told.has(host) || this.#told.size >= 100) return undefined;
    this.#told.add(host);
    const allowed = this.#allowed === "*" ? '"*"' : JSON.stringify(this.#allowed);
    return `picomcp/http: refused Host "${host}" (403): it is not in allowedHosts ${allowed}; add it to the allowedHosts option of the HTTP handler (or of serve)`;
  }
}

/**
 * Whether a request's `Origin` may call: absent (not a browser) is fine; a listed origin is fine;
 * without a list, an origin whose host passes the host check is fine. `"null"` never is, unless listed.
 */
export function originAllowed(
  origin: string | null,
  allowedOrigins: readonly string[] | "*" | undefined,
  allowedHosts: readonly string[] | "*",
): boolean {
  if (origin === null) return true;
  if (allowedOrigins === "*") return true;
  const o = origin.trim().toLowerCase();
  if (allowedOrigins) return allowedOrigins.some((a) => a.trim().toLowerCase().replace(/\/$/, "") === o);
  if (allowedHosts === "*") return true;
  let url: URL;
  try {
    url = new URL(o);
  } catch {
    return false;
  }
  return (url.protocol === "http:" || url.protocol === "https:") && hostAllowed(url.host, allowedHosts);
}

/** Whether an `Accept` header admits `type` (wildcards count; `q=0` excludes). A missing header admits nothing. */
export function accepts(header: string | null, type: string): boolean {
  if (!header) return false;
  const main = type.slice(0, type.indexOf("/"));
  for (const part of header.split(",")) {
    const [range = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    if (range === type || range === "*/*" || range === `${main}/*`) return true;
  }
  return false;
}

/** The last Accept header a POST came with, and whether it admits both of a POST's answers: clients send the same one every time. */
let lastAccept: string | null = null;

let lastAcceptsBoth = false;

/** Whether an `Accept` header admits JSON and SSE (what a POST may be answered with), as {@link accepts} says. */
export function acceptsJsonAndSse(header: string | null): boolean {
  if (header === lastAccept) return lastAcceptsBoth;
  const both = accepts(header, "application/json") && accepts(header, "text/event-stream");
  lastAccept = header;
  lastAcceptsBoth = both;
  return both;
}

/** Whether a `Content-Type` header is JSON (`application/json`, any parameters). */
export function isJsonContentType(header: string | null): boolean {
  if (header === "application/json") return true;
  if (!header) return false;
  return header.split(";")[0]!.trim().toLowerCase() === "application/json";
}
