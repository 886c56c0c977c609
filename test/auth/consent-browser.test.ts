/**
 * The consent page in a real browser: a person approves a client and the code reaches the client's
 * callback with `state` and `iss`; the page framed by another origin is refused by the browser; a page
 * of another origin that posts the consent form (with a CSRF token it got from an authorization of its
 * own) is refused, and the person's own authorization stays unapproved.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BROWSER_TIMEOUT, chromiumFor, launchBrowser, poll } from "../browser.js";
import {
  authorizeUrl,
  openConsent,
  pkce,
  redeem,
  registerClient,
  standard,
  useAuthServers,
} from "./as-helpers.js";

const chromium = await chromiumFor("the consent page in chromium");
const serve = useAuthServers();

let browser: BrowserContext;
beforeAll(async () => {
  if (chromium) browser = await launchBrowser(chromium);
}, BROWSER_TIMEOUT);
afterAll(async () => {
  await browser?.close();
});

/** A server on 127.0.0.1 answering `pages` by path and keeping every URL asked. */
async function site(pages: {
  [path: string]: string;
}): Promise<{ origin: string; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? "");
    const body = pages[new URL(req.url ?? "/", "http://x").pathname];
    res.writeHead(body === undefined ? 404 : 200, { "content-type": "text/html" }).end(body ?? "");
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

describe.skipIf(!chromium)("the consent page in chromium", { timeout: BROWSER_TIMEOUT }, () => {
  it("is approved by the person, and the code reaches the client's callback", async () => {
    const s = await serve({ scopes: ["notes:read"] });
    const callback = await site({ "/callback": "<p>done</p>" });
    const redirect = `${callback.origin}/callback`;
    const clientId = await registerClient(s.origin, { redirect_uris: [redirect] });
    const { verifier, challenge } = pkce();
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on("console", (m) => violations.push(m.text()));
    try {
      await page.goto(
        authorizeUrl(s.origin, standard(clientId, challenge, s.resource, { redirect_uri: redirect })),
      );
      expect(await page.locator("h1").textContent()).toBe(
        "Allow Test client to use 127.0.0.1:" + new URL(s.origin).port + "?",
      );
      // the page's own style applies under its policy (a nonce), nothing is refused
      expect(
        await page
          .locator("button")
          .first()
          .evaluate((b) => getComputedStyle(b).paddingLeft),
      ).not.toBe("0px");
      await page.getByRole("button", { name: "Approve" }).click();
      await poll(() => callback.seen.length).toBe(1);
      const back = new URL(callback.seen[0]!, callback.origin);
      expect(back.searchParams.get("state")).toBe("st-123");
      expect(back.searchParams.get("iss")).toBe(s.origin);
      const token = await redeem(
        s,
        clientId,
        { code: back.searchParams.get("code")!, verifier },
        { redirect_uri: redirect },
      );
      expect(token.status).toBe(200);
      expect(violations.filter((v) => v.includes("Content Security Policy"))).toEqual([]);
    } finally {
      await page.close();
      callback.server.close();
    }
  });

  it("cannot be framed by another origin", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    const evil = await site({
      "/frame": `<iframe src="${url.replace(/&/g, "&amp;")}"></iframe><iframe src="/inner"></iframe>`,
      "/inner": "<p id=inner>an ordinary frame</p>",
    });
    const page = await browser.newPage();
    const refusals: string[] = [];
    page.on("console", (m) => refusals.push(m.text()));
    try {
      await page.goto(`${evil.origin}/frame`);
      const frames = () => page.frames().filter((f) => f !== page.mainFrame());
      await poll(() =>
        frames()
          .map((f) => f.url())
          .sort(),
      ).toEqual(["chrome-error://chromewebdata/", `${evil.origin}/inner`]);
      await poll(() => refusals.join("\n")).toContain("frame-ancestors 'none'");
    } finally {
      await page.close();
      evil.server.close();
    }
  });

  it("refuses the consent form posted by a page of another origin", async () => {
    const s = await serve();
    const clientId = await registerClient(s.origin);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    // the attacker's own authorization gives it a valid CSRF token; the person's browser has no cookie for it
    const stolen = await openConsent(url);
    const evil = await site({
      "/drive": `<form method="post" action="${s.origin}/consent"><input name="csrf" value="${stolen.csrf}"><input name="decision" value="approve"></form><script>document.forms[0].submit()</script>`,
    });
    const page = await browser.newPage();
    try {
      // the person has a consent page of their own open in the same browser
      const mine = await browser.newPage();
      await mine.goto(url);
      const posted = page.waitForResponse((r) => r.url() === `${s.origin}/consent`);
      await page.goto(`${evil.origin}/drive`);
      const res = await posted;
      expect(res.status()).toBe(403);
      expect(res.headers().location).toBeUndefined();
      // the person's own page still approves, once
      const callbackAsked = mine.waitForRequest((r) => r.url().startsWith("http://127.0.0.1:9/callback"));
      await mine.getByRole("button", { name: "Approve" }).click();
      expect(new URL((await callbackAsked).url()).searchParams.get("iss")).toBe(s.origin);
      await mine.close();
    } finally {
      await page.close();
      evil.server.close();
    }
  });
});
