/**
 * What a Client ID Metadata Document must be: its URL (the `client_id`), the document itself (turned
 * into a `ClientRecord`), and how long it may be kept (its `Cache-Control`). Pure: no fetching here.
 */
import type { ClientRecord } from "./store.js";

/** Why a client's metadata document was refused; its message is written for the client (`invalid_client`). */
export class ClientMetadataError extends Error {
  /** More for the operator's logs (a resolved address, a platform error); never sent to the client. */
  readonly detail: string | undefined;
  constructor(message: string, detail?: string) {
    super(message);
    this.name = "ClientMetadataError";
    this.detail = detail;
  }
}

const fail = (message: string, detail?: string): never => {
  throw new ClientMetadataError(message, detail);
};

/** The hosts that name the machine itself, whatever the resolver says (RFC 6761 §6.3). */
export function isLoopbackName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

/**
 * The client_id as a URL to fetch, once it is one the draft allows: https (http only when `http` is
 * allowed: a loopback host in development), a path, no fragment, no user or password, no `.` or `..`
 * segments, and written exactly as the URL parser writes it (so that one document has one client_id).
 */
export function clientIdUrl(clientId: string, http: (url: URL) => boolean): URL {
  if (clientId.length > 2048) fail("client_id is longer than 2048 characters");
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return fail("client_id is not a URL");
  }
  if (url.protocol === "http:") {
    if (!http(url)) fail("client_id must be an https URL");
  } else if (url.protocol !== "https:") fail("client_id must be an https URL");
  if (clientId.includes("#")) fail("client_id must not have a fragment");
  if (url.username || url.password) fail("client_id must not hold a user name or password");
  const rawPath = clientId.replace(/^[a-z]+:\/\/[^/?#]*/i, "").replace(/[?#].*$/s, "");
  const dots = (segment: string) => segment.replace(/%2e/gi, ".");
  if (rawPath.split("/").some((s) => dots(s) === "." || dots(s) === ".."))
    fail("client_id must not have . or .. path segments");
  if (url.pathname === "/" || url.pathname === "") fail("client_id must have a path");
  if (url.href !== clientId) fail(`client_id must be written as ${url.href}`);
  return url;
}

/** The limits a document's strings are held to. */
const MAX_NAME = 200;
const MAX_URI = 2048;
const MAX_SCOPE = 1024;
const MAX_REDIRECT_URIS = 20;

const GRANT_TYPES = new Set(["authorization_code", "refresh_token"]);

/** Control characters and bidirectional overrides (a name that reads otherwise on the consent page), which no name shown to a person should hold. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/;

/** Whether `s` holds a control or text-direction character (refused in anything shown to a person). */
export function hasControl(s: string): boolean {
  return CONTROL.test(s);
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function isLoopbackHost(url: URL): boolean {
  const host = url.hostname;
  return isLoopbackName(host) || /^127\.\d+\.\d+\.\d+$/.test(host) || host === "[::1]";
}

function text(doc: Record<string, unknown>, field: string, max: number): string | undefined {
  const value = doc[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") fail(`${field} must be a non-empty string`);
  const s = value as string;
  if (s.length > max) fail(`${field} is longer than ${max} characters`);
  if (CONTROL.test(s)) fail(`${field} must not hold control or text-direction characters`);
  return s;
}

function webUri(doc: Record<string, unknown>, field: string): string | undefined {
  const value = text(doc, field, MAX_URI);
  if (value === undefined) return undefined;
  const url = parseUrl(value);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:"))
    fail(`${field} must be an http(s) URL`);
  return value;
}

function redirectUris(doc: Record<string, unknown>): string[] {
  const value = doc.redirect_uris;
  if (!Array.isArray(value) || value.length === 0) fail("redirect_uris must be a non-empty array");
  const list = value as unknown[];
  if (list.length > MAX_REDIRECT_URIS) fail(`redirect_uris holds more than ${MAX_REDIRECT_URIS} URIs`);
  return list.map((uri, i) => {
    const at = `redirect_uris[${i}]`;
    if (typeof uri !== "string" || uri.length > MAX_URI)
      fail(`${at} must be a string of at most ${MAX_URI} characters`);
    const s = uri as string;
    const url = parseUrl(s);
    if (!url) return fail(`${at} must be an absolute URI`);
    if (s.includes("#")) fail(`${at} must not have a fragment`);
    if (CONTROL.test(s) || /\s/.test(s)) fail(`${at} must not hold spaces or control characters`);
    const scheme = url.protocol;
    if (scheme === "javascript:" || scheme === "data:" || scheme === "file:" || scheme === "blob:")
      fail(`${at} must not use ${scheme}`);
    // OAuth 2.1: plain http only back to the person's own machine (a native app's loopback listener)
    if (scheme === "http:" && !isLoopbackHost(url)) fail(`${at} must be https, or http on a loopback host`);
    return s;
  });
}

function list(doc: Record<string, unknown>, field: string, fallback: string[]): string[] {
  const value = doc[field];
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
    fail(`${field} must be an array of strings`);
  return value as string[];
}

/**
 * The client a fetched document describes, once it is one the authorization server can serve: its
 * `client_id` is the URL it came from, its redirect URIs are absolute, and it is a public client (no
 * secret; `token_endpoint_auth_method` `none`) using the authorization code flow.
 */
export function clientFromDocument(doc: unknown, clientId: string, now: number): ClientRecord {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    fail("the client metadata document is not a JSON object");
  const d = doc as Record<string, unknown>;
  if (d.client_id !== clientId) fail("the document's client_id is not the URL it was fetched from");
  for (const secret of ["client_secret", "client_secret_expires_at"])
    if (secret in d) fail(`a client metadata document must not hold ${secret}`);
  const method = d.token_endpoint_auth_method;
  if (method !== undefined && method !== "none")
    fail("token_endpoint_auth_method must be none: a metadata document client has no secret");
  const redirect_uris = redirectUris(d);
  const grant_types = list(d, "grant_types", ["authorization_code"]);
  const response_types = list(d, "response_types", ["code"]);
  for (const grant of grant_types)
    if (!GRANT_TYPES.has(grant)) fail("grant_types may hold only authorization_code and refresh_token");
  if (!grant_types.includes("authorization_code")) fail("grant_types must include authorization_code");
  if (response_types.length !== 1 || response_types[0] !== "code") fail('response_types must be ["code"]');
  const client: ClientRecord = {
    client_id: clientId,
    kind: "metadata-document",
    redirect_uris,
    token_endpoint_auth_method: "none",
    grant_types,
    client_id_issued_at: Math.floor(now / 1000),
  };
  const name = text(d, "client_name", MAX_NAME);
  if (name !== undefined) client.client_name = name;
  const uri = webUri(d, "client_uri");
  if (uri !== undefined) client.client_uri = uri;
  const logo = webUri(d, "logo_uri");
  if (logo !== undefined) client.logo_uri = logo;
  const scope = text(d, "scope", MAX_SCOPE);
  if (scope !== undefined) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(scope))
      fail("scope must be scope tokens separated by single spaces");
    client.scope = scope;
  }
  return client;
}

/**
 * How long the document may be kept (RFC 9111 §4.2): its `Cache-Control` `max-age`, else `Expires`
 * less `Date` (or less now without a `Date`; an `Expires` that is no date: stale), less its `Age`,
 * within [min, max]; `no-store`/`no-cache` 0; the default when it says nothing.
 */
export function ttlOf(
  cacheControl: string | null | undefined,
  limits: { defaultMs: number; minMs: number; maxMs: number },
  more: {
    expires?: string | null | undefined;
    date?: string | null | undefined;
    age?: string | null | undefined;
    now?: number;
  } = {},
): number {
  let maxAge: number | undefined;
  for (const part of (cacheControl ?? "").split(",")) {
    const [name = "", value] = part
      .trim()
      .split("=", 2)
      .map((s) => s.trim());
    const directive = name.toLowerCase();
    if (directive === "no-store" || directive === "no-cache") return 0;
    if (directive === "max-age" && value !== undefined) {
      const unquoted = value.replace(/^"(.*)"$/, "$1");
      // a malformed max-age means the response is stale (RFC 9111 §4.2.1)
      maxAge = /^\d+$/.test(unquoted) ? Number(unquoted) : 0;
    }
  }
  let lifetimeMs: number;
  if (maxAge !== undefined) lifetimeMs = maxAge * 1000;
  else if (more.expires) {
    const expires = Date.parse(more.expires);
    const date = more.date ? Date.parse(more.date) : Number.NaN;
    const from = Number.isNaN(date) ? (more.now ?? Date.now()) : date;
    lifetimeMs = Number.isNaN(expires) ? 0 : Math.max(0, expires - from);
  } else return limits.defaultMs;
  const age = /^\d+$/.test(more.age?.trim() ?? "") ? Number(more.age!.trim()) * 1000 : 0;
  return Math.min(limits.maxMs, Math.max(limits.minMs, lifetimeMs - age));
}
