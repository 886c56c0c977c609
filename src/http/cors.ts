import { type Answer, Reply, withHeaders } from "./reply.js";
import { header } from "./request.js";

/** What a browser may send when the preflight does not list its headers (both eras). */
const CORS_ALLOW_HEADERS =
  "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name";

/** What a browser may read: the session id, the revision, the challenge of a 401, when to retry a 429 or 503. */
const CORS_EXPOSE_HEADERS = "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after";

export function preflight(request: Request, methods: string): Reply {
  const headers: { [name: string]: string } = { allow: `${methods}, OPTIONS` };
  if (header(request, "origin") !== null) {
    headers["access-control-allow-methods"] = methods;
    headers["access-control-allow-headers"] =
      header(request, "access-control-request-headers") ?? CORS_ALLOW_HEADERS;
    headers["access-control-max-age"] = "86400";
  }
  return new Reply(204, headers, null);
}

const CORS_VARY = Object.freeze({ vary: "origin" });

/** Adds CORS headers for an allowed browser origin (copying a response whose headers are immutable). */
export function withCors(answer: Answer, origin: string): Answer {
  return withHeaders(
    answer,
    { "access-control-allow-origin": origin, "access-control-expose-headers": CORS_EXPOSE_HEADERS },
    CORS_VARY,
  );
}
