/**
 * What the authorization server's endpoints answer with: OAuth error JSON (never cached), redirects
 * to a client, hardened HTML pages, CORS for the endpoints a browser client calls, and bounded
 * reading of form and JSON bodies.
 */
import { readBody } from "../http/request.js";

/** The headers of every answer that carries a token, a code or an error: never stored by anyone. */
export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const;

/** The endpoints a browser-based client calls (token, registration, revocation, metadata, keys) allow any origin: they take no cookies. */
export const CORS = { "access-control-allow-origin": "*" } as const;

/** The hardening of every HTML page: no script at all, no framing, no caching, no referrer. */
export function pageHeaders(styleNonce: string): { [name: string]: string } {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": `default-src 'none'; style-src 'nonce-${styleNonce}'; frame-ancestors 'none'; base-uri 'none'`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    ...NO_STORE,
  };
}

/** An OAuth error answer (RFC 6749 §5.2): `{ error, error_description }`, never cached. */
export function oauthError(
  status: number,
  error: string,
  description: string,
  headers: { [name: string]: string } = {},
): Response {
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { "content-type": "application/json", ...NO_STORE, ...CORS, ...headers },
  });
}

/** A JSON answer; `cache` false (default) marks it no-store. */
export function json(body: unknown, status = 200, cache: string | false = false): Response {
  const headers: { [name: string]: string } = { "content-type": "application/json", ...CORS };
  if (cache === false) Object.assign(headers, NO_STORE);
  else headers["cache-control"] = cache;
  return new Response(JSON.stringify(body), { status, headers });
}

/** The answer to a CORS preflight on an endpoint a browser client calls. */
export function preflight(methods: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CORS,
      "access-control-allow-methods": methods,
      "access-control-allow-headers": "authorization, content-type, mcp-protocol-version",
      "access-control-max-age": "86400",
    },
  });
}

/** 405 with `Allow`. */
export function notAllowed(allow: string): Response {
  return oauthError(405, "invalid_request", `Method not allowed: use ${allow}`, { allow });
}

/** `redirectUri` with `params` added to its query (what it already has is kept). */
export function redirectTo(
  redirectUri: string,
  params: { [name: string]: string | undefined },
  status = 302,
): Response {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return new Response(null, {
    status,
    headers: { location: url.href, ...NO_STORE, "referrer-policy": "no-referrer" },
  });
}

/** Text made safe for HTML, in an element or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A nonce for the page's one style element. */
export function nonce(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#222}" +
  "h1{font-size:1.4rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{color:#666}" +
  "dd{margin:0;word-break:break-all}button{font:inherit;padding:.5rem 1.2rem;margin-right:.5rem}" +
  ".warn{background:#fff4e5;padding:.5rem .8rem;border-radius:4px}";

/** A whole HTML page: `body` is HTML already escaped. */
export function page(
  status: number,
  title: string,
  body: string,
  headers: { [name: string]: string } = {},
): Response {
  const n = nonce();
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style nonce="${n}">${STYLE}</style></head><body>${body}</body></html>`;
  return new Response(html, { status, headers: { ...pageHeaders(n), ...headers } });
}

/** An error that cannot be sent back to the client (unknown client, a redirect URI not its own): shown to the person, never redirected. */
export function errorPage(status: number, error: string, description: string): Response {
  return page(
    status,
    "Sign-in error",
    `<h1>This sign-in cannot go on</h1><p>${escapeHtml(description)}</p><p><small>${escapeHtml(error)}</small></p>`,
  );
}

/** Bytes of a form or JSON body the endpoints read at most. */
export const MAX_BODY = 64 * 1024;

/** A form body's parameters (each name once), or the error answer when it is not one. */
export async function readForm(request: Request): Promise<URLSearchParams | Response> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type))
    return oauthError(400, "invalid_request", "The body must be application/x-www-form-urlencoded");
  const body = await readBody(request, MAX_BODY);
  if (!body.ok) return oauthError(400, "invalid_request", "The body is too large or could not be read");
  const params = new URLSearchParams(body.text);
  const dup = repeated(params);
  if (dup) return oauthError(400, "invalid_request", `The parameter ${dup} is given more than once`);
  return params;
}

/** A JSON object body, or the error answer when it is not one. */
export async function readJson(
  request: Request,
  error: string,
): Promise<{ [key: string]: unknown } | Response> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type))
    return oauthError(400, error, "The body must be application/json");
  const body = await readBody(request, MAX_BODY);
  if (!body.ok) return oauthError(400, error, "The body is too large or could not be read");
  try {
    const value: unknown = JSON.parse(body.text);
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as { [key: string]: unknown };
  } catch {
    // answered below
  }
  return oauthError(400, error, "The body is not a JSON object");
}

/** The first parameter given more than once (RFC 6749 §3.1: none may be), if any. */
export function repeated(params: URLSearchParams): string | undefined {
  const seen = new Set<string>();
  for (const k of params.keys()) {
    if (seen.has(k)) return k;
    seen.add(k);
  }
  return undefined;
}

/** A parameter: undefined when absent or empty (RFC 6749 §3.1: an empty one is as if absent). */
export function param(params: URLSearchParams, name: string): string | undefined {
  const v = params.get(name);
  return v === null || v === "" ? undefined : v;
}
