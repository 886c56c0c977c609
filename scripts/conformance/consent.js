// A person at a browser, without the browser: follows an authorization URL through the authorization
// server's pages the way a browser would (redirects, cookies, the consent form's hidden fields posted
// back with Origin and Sec-Fetch-* as a browser sends them, `Origin: null` under a no-referrer policy) and stops at the redirect to the client's
// redirect URI, which it returns without fetching. Shared by `npm run conformance` (the
// authorization-code-grant scenario) and the sign-in tests (test/auth/sign-in-*.test.ts).

const entities = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'" };

/** Decodes the HTML character references an attribute value or a button's text may hold. */
export function decodeHtml(text) {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, ref) => {
    const r = ref.toLowerCase();
    if (r.startsWith("#x")) return String.fromCodePoint(Number.parseInt(r.slice(2), 16));
    if (r.startsWith("#") && r !== "#39") return String.fromCodePoint(Number(r.slice(1)));
    return entities[r] ?? all;
  });
}

function attributes(tag) {
  const out = {};
  for (const m of tag.matchAll(/([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
    const name = m[1].toLowerCase();
    if (name in out) continue;
    out[name] = decodeHtml(m[2] ?? m[3] ?? m[4] ?? "");
  }
  return out;
}

/**
 * The forms of an HTML page: their method, absolute action, the fields a browser would send (hidden and
 * text inputs, checked boxes, selected options) and their submit buttons.
 */
export function parseForms(html, pageUrl) {
  const forms = [];
  for (const f of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form\s*>/gi)) {
    const attrs = attributes(f[1]);
    const body = f[2];
    const fields = [];
    const submits = [];
    for (const i of body.matchAll(/<input\b([^>]*)>/gi)) {
      const a = attributes(i[1]);
      const type = (a.type ?? "text").toLowerCase();
      if (type === "submit" || type === "image") {
        submits.push({ name: a.name, value: a.value ?? "", label: a.value ?? "" });
        continue;
      }
      if (!a.name || "disabled" in a) continue;
      if ((type === "checkbox" || type === "radio") && !("checked" in a)) continue;
      if (type === "button" || type === "reset" || type === "file") continue;
      fields.push([a.name, a.value ?? (type === "checkbox" || type === "radio" ? "on" : "")]);
    }
    for (const s of body.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select\s*>/gi)) {
      const a = attributes(s[1]);
      if (!a.name) continue;
      const options = [...s[2].matchAll(/<option\b([^>]*)>([\s\S]*?)(?=<option\b|$)/gi)].map((o) => ({
        ...attributes(o[1]),
        text: decodeHtml(o[2].replace(/<[^>]*>/g, "").trim()),
      }));
      const chosen = options.find((o) => "selected" in o) ?? options[0];
      if (chosen) fields.push([a.name, chosen.value ?? chosen.text]);
    }
    for (const b of body.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button\s*>/gi)) {
      const a = attributes(b[1]);
      if ((a.type ?? "submit").toLowerCase() !== "submit") continue;
      const label = decodeHtml(
        b[2]
          .replace(/<[^>]*>/g, " ")
          .replace(/\s+/g, " ")
          .trim(),
      );
      submits.push({ name: a.name, value: a.value ?? "", label });
    }
    forms.push({
      method: (attrs.method ?? "get").toUpperCase(),
      action: new URL(attrs.action || pageUrl, pageUrl).href,
      fields,
      submits,
    });
  }
  return forms;
}

const APPROVE = /\b(approve|allow|accept|authori[sz]e|consent|continue|yes)\b/i;
const DENY = /\b(deny|reject|decline|cancel|no)\b/i;

/** The form and button that say `decision` ("approve" or "deny"), or undefined. */
export function chooseSubmit(forms, decision = "approve") {
  const wanted = decision === "deny" ? DENY : APPROVE;
  for (const form of forms) {
    for (const submit of form.submits) {
      if (wanted.test(`${submit.label} ${submit.value} ${submit.name ?? ""}`)) return { form, submit };
    }
  }
  return undefined;
}

/** True when `location` is the redirect URI, with the response's parameters on it. */
function isRedirectUri(location, redirectUri) {
  const a = new URL(location);
  const b = new URL(redirectUri);
  return a.origin === b.origin && a.pathname === b.pathname;
}

/**
 * Follows `authorizationUrl` as a browser would, approving (or denying) on the consent page, and
 * resolves with the URL the authorization server sent the browser back to (the redirect URI with
 * `code`, `state`, `iss`, or `error`). Throws with the page's status and text when a page has no
 * form to answer (a sign-in page the `cookies` do not get past, an error page).
 *
 * options: `redirectUri` (required), `cookies` (name → value, sent to every origin; the cookies that
 * pages set are kept per origin and sent back), `decision` ("approve"), `fetch`, `maxSteps` (10),
 * `pages` (an array that receives `{ url, status, html }` of every page read).
 */
export async function followAuthorization(authorizationUrl, options) {
  const { redirectUri, decision = "approve", maxSteps = 10, pages } = options;
  const send = options.fetch ?? globalThis.fetch;
  const jar = new Map(); // origin → Map(name → value)
  const cookieHeader = (origin) => {
    const own = jar.get(origin) ?? new Map();
    const all = { ...(options.cookies ?? {}), ...Object.fromEntries(own) };
    return Object.entries(all)
      .map(([k, v]) => `${k}=${v}`)
      .join("; ");
  };
  let step = { method: "GET", url: new URL(authorizationUrl).href, body: undefined, from: undefined };
  for (let n = 0; n < maxSteps; n++) {
    const target = new URL(step.url);
    if (isRedirectUri(target.href, redirectUri)) return target;
    const headers = {
      accept: "text/html,application/xhtml+xml",
      "sec-fetch-mode": "navigate",
      "sec-fetch-dest": "document",
      "sec-fetch-site": !step.from ? "none" : step.from === target.origin ? "same-origin" : "cross-site",
    };
    const cookie = cookieHeader(target.origin);
    if (cookie) headers.cookie = cookie;
    if (step.method === "POST") {
      headers["content-type"] = "application/x-www-form-urlencoded";
      // a page with a no-referrer policy makes a browser send `Origin: null` (Fetch's serialization)
      headers.origin = step.noReferrer ? "null" : step.from;
    }
    const res = await send(target.href, {
      method: step.method,
      headers,
      body: step.body,
      redirect: "manual",
    });
    const setCookies = typeof res.headers.getSetCookie === "function" ? res.headers.getSetCookie() : [];
    for (const line of setCookies) {
      const [pair] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      if (!jar.has(target.origin)) jar.set(target.origin, new Map());
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      // a cookie set to expire is removed, as a browser does
      if (/;\s*max-age=0\b/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line))
        jar.get(target.origin).delete(name);
      else jar.get(target.origin).set(name, value);
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      const next = new URL(location, target).href;
      if (isRedirectUri(next, redirectUri)) return new URL(next);
      // 307/308 repeat the method and body; 301/302/303 become GET, as browsers do
      step =
        res.status === 307 || res.status === 308
          ? { ...step, url: next, from: target.origin }
          : { method: "GET", url: next, body: undefined, from: target.origin };
      continue;
    }
    const html = await res.text();
    pages?.push({ url: target.href, status: res.status, html });
    const chosen = res.status === 200 ? chooseSubmit(parseForms(html, target.href), decision) : undefined;
    if (!chosen) {
      const text = html
        .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, "")
        .replace(/<[^>]*>/g, " ")
        .replace(/\s+/g, " ")
        .trim()
        .slice(0, 300);
      throw new Error(
        `the page at ${target.href} (${res.status}) has no form to ${decision}: ${text || "(empty)"}`,
      );
    }
    const noReferrer =
      /(^|,)\s*no-referrer\s*$/i.test(res.headers.get("referrer-policy") ?? "") ||
      /<meta\b[^>]*name=["']?referrer["']?[^>]*content=["']?no-referrer["'\s>]/i.test(html);
    const { form, submit } = chosen;
    const fields = [...form.fields];
    if (submit.name) fields.push([submit.name, submit.value]);
    const body = new URLSearchParams(fields).toString();
    step =
      form.method === "POST"
        ? { method: "POST", url: form.action, body, from: target.origin, noReferrer }
        : {
            method: "GET",
            url: `${form.action.split("?")[0]}?${body}`,
            body: undefined,
            from: target.origin,
          };
  }
  throw new Error(`no redirect to ${redirectUri} after ${maxSteps} steps`);
}
