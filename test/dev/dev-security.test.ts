/**
 * The dev console attacked in a real browser: opened without its secret or with a wrong one, framed by
 * a page of another origin (and of another site), driven by that page's forms and fetches, and made to run
 * an inline script. Only the address the `picomcp` command prints opens it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevRunner } from "../../src/dev/runner.js";
import { BROWSER_TIMEOUT, chromiumFor, launchBrowser, poll } from "../browser.js";
import { cleanUp, project, start, status } from "../dev-helpers.js";

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
  it("opens the console at the printed address, keeps the secret in an HttpOnly cookie, and drops it from the address bar", async () => {
    const { url, child } = await picomcpDev(project(RECORDER).entry);
    const page = await browser.newPage();
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
      const { origin, port, searchParams } = new URL(url);
      await page.goto(url);
      await poll(() => page.locator("#tools li").allTextContents()).toEqual(["record"]);
      expect(page.url()).toBe(`${origin}/`);
      expect(await page.evaluate(() => [document.cookie, location.href])).toEqual(["", `${origin}/`]);
      const cookies = await browser.cookies(origin);
      expect(
        cookies.map(({ name, value, httpOnly, sameSite, path }) => ({
          name,
          value,
          httpOnly,
          sameSite,
          path,
        })),
      ).toEqual([
        {
          name: `picomcp-dev-${port}`,
          value: searchParams.get("token"),
          httpOnly: true,
          sameSite: "Strict",
          path: "/",
        },
      ]);
      await page.locator("#tools li").first().click();
      await page.fill("#f-value", "from the page");
      await page.getByRole("button", { name: "Call" }).click();
      await poll(() => page.locator("#detail .result").textContent()).toBe('["from the page"]');
    } finally {
      await page.close();
      child.kill("SIGTERM");
    }
  });

  it("answers 401 to a browser with no cookie, or a wrong one, or a wrong token, and nothing runs", async () => {
    const dev = await start(project(RECORDER).entry);
    const port = new URL(dev.url).port;
    const fresh = await launchBrowser(chromium!);
    try {
      const page = fresh.pages()[0] ?? (await fresh.newPage());
      const open = async (url: string) => {
        const res = await page.goto(url);
        return [res?.status(), await page.locator("body").textContent()];
      };
      const refused = (why: string) => [
        401,
        `${why}. Open the address that picomcp dev printed in its terminal (${dev.origin}/?token=…): it carries a secret made for each run.`,
      ];
      expect(await open(`${dev.origin}/`)).toEqual(refused("This request has no secret"));
      expect(await open(`${dev.origin}/events`)).toEqual(refused("This request has no secret"));
      expect(await open(`${dev.origin}/?token=not-the-secret`)).toEqual(
        refused("This address's token is not this run's"),
      );
      await fresh.addCookies([{ name: `picomcp-dev-${port}`, value: "not-the-secret", url: dev.origin }]);
      expect(await open(`${dev.origin}/`)).toEqual(refused("This request's secret is not this run's"));
      // a page that never loaded restarted nothing and sent nothing
      expect(await status(dev)).toMatchObject({ state: "running", generation: 1 });
    } finally {
      await fresh.close();
    }
  });
});

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
    // the person has the console open: the browser holds its cookie
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
        // from another site the Strict cookie stays home (401); from the same site it comes, and
        // Sec-Fetch-Site refuses it (403)
        expect((await restart).status()).toBe(site.includes("localhost") ? 401 : 403);
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
