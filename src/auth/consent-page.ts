/**
 * The consent page: names the client, where it will send the person, the resource and the scopes;
 * approve or deny by a POST that carries a secret bound to this authorization and to this browser.
 */
import type { AsContext } from "./as-context.js";
import { escapeHtml, page } from "./oauth-http.js";
import type { ClientRecord, PendingAuthorization } from "./store.js";

/** The cookie that binds an authorization in progress to the browser its consent page was shown in. */
export function consentCookie(pendingId: string): string {
  return `picomcp-consent-${pendingId.slice(0, 16)}`;
}

/** The `Set-Cookie` of the browser binding (`value` empty and a zero age to clear it). */
export function consentCookieHeader(
  ctx: AsContext,
  pendingId: string,
  value: string,
  maxAge: number,
): string {
  const secure = ctx.secure ? "; Secure" : "";
  return `${consentCookie(pendingId)}=${value}; Path=${ctx.basePath}/consent; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`;
}

/** The value of cookie `name` in `request`, if it sent one. */
export function cookieOf(request: Request, name: string): string | undefined {
  const header = request.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function hostOf(uri: string | undefined): string | undefined {
  if (!uri) return undefined;
  try {
    const u = new URL(uri);
    return u.host || `${u.protocol}`;
  } catch {
    return undefined;
  }
}

/** The consent page for `pending`, with `secret` in its form (the CSRF token; the cookie holds the same). */
export function consentPage(
  ctx: AsContext,
  client: ClientRecord,
  pending: PendingAuthorization,
  secret: string,
  maxAge: number,
): Response {
  const name =
    typeof client.client_name === "string" && client.client_name !== "" ? client.client_name : undefined;
  const who = name ?? "An unnamed application";
  const redirect = new URL(pending.redirectUri);
  const target = redirect.host ? `${redirect.protocol}//${redirect.host}` : `${redirect.protocol}`;
  const resource = new URL(pending.resource);
  const rows: [string, string][] = [
    ["Application", who],
    ["It sends you back to", target],
  ];
  if (client.kind === "metadata-document")
    rows.push(["Published at", hostOf(client.client_id) ?? client.client_id]);
  else rows.push(["Registered", "by the application itself, here"]);
  const site = hostOf(typeof client.client_uri === "string" ? client.client_uri : undefined);
  // a registered client's website is only what it says of itself; a document's is published by its host
  if (site) rows.push([client.kind === "registered" ? "Says its website is" : "Its website", site]);
  rows.push(["Wants to use", pending.resource]);
  rows.push(["With the scopes", pending.scopes.length ? pending.scopes.join(" ") : "(none)"]);
  if (pending.identity) rows.push(["Signed in as", pending.identity.subject]);
  else if (ctx.signIn) rows.push(["You sign in with", ctx.signIn.name]);
  const dl = rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join("");
  const warning =
    client.kind === "registered"
      ? `<p class="warn">The application named itself; only approve if you started this sign-in and know ${escapeHtml(target)}.</p>`
      : "";
  const body =
    `<h1>Allow ${escapeHtml(who)} to use ${escapeHtml(resource.host)}?</h1>` +
    `<dl>${dl}</dl>${warning}` +
    `<form method="post" action="${escapeHtml(`${ctx.basePath}/consent`)}">` +
    `<input type="hidden" name="csrf" value="${escapeHtml(secret)}">` +
    `<button type="submit" name="decision" value="approve">Approve</button>` +
    `<button type="submit" name="decision" value="deny">Deny</button></form>`;
  return page(200, `Allow ${who}?`, body, {
    "set-cookie": consentCookieHeader(ctx, pending.id, secret, maxAge),
  });
}
