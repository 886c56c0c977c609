/**
 * A server that crashes, in the console in a real browser: at start (a registration mistake) and later
 * (a tool that exits the process), and an entry that never serves. The page says the server exited, with its last stderr lines in order
 * and what to do; the header is never left at "connecting…"; a fix or a restart brings it back.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BROWSER_TIMEOUT, chromiumFor, launchBrowser, poll } from "../browser.js";
import { cleanUp, project, start, status } from "../dev-helpers.js";

const chromium = await chromiumFor("the dev console's crash screen in chromium");

let browser: BrowserContext;
let page: Page;
beforeAll(async () => {
  if (!chromium) return;
  browser = await launchBrowser(chromium);
  page = browser.pages()[0] ?? (await browser.newPage());
}, BROWSER_TIMEOUT);
afterAll(async () => {
  await browser?.close();
  await cleanUp();
});

const out = fileURLToPath(new URL("../../.test-out/", import.meta.url));
const text = (selector: string) => page.locator(selector).textContent();
const WHAT_TO_DO =
  "Fix it and save: picomcp dev restarts the server when a file beside it changes. Or press Restart server.";

describe.skipIf(!chromium)(
  "the dev console in chromium: a server that crashes",
  { timeout: BROWSER_TIMEOUT },
  () => {
    it("at start: shows the exit and its stack in order, then the fixed server once it is saved", async () => {
      const p = project(`server.tool("bad name", { run: () => "x" });`);
      const dev = await start(p.entry);
      await page.goto(dev.url);
      await poll(() => text("#server")).toBe("exited (code 1)");
      expect(await text("#detail h1")).toBe("The server exited (code 1)");
      expect(await text("#status")).toBe("exited (code 1)");
      const shown = (await text("#detail pre.stderr"))!.split("\n");
      // the lines as the runner kept them, oldest first: the error, then the frames under it
      expect(shown).toEqual((await status(dev)).stderr);
      const error = shown.findIndex((l) => l.startsWith('TypeError: Invalid tool name "bad name"'));
      expect(error).toBeGreaterThan(0);
      expect(shown[error + 1]).toMatch(/^ {4}at createToolEntry /);
      expect(shown.at(-1)).toBe(`Node.js ${process.version}`);
      expect(await page.locator("#detail .hint").allTextContents()).toEqual([WHAT_TO_DO]);
      // in Logs too, one entry per write, its lines in order
      const logged = await page.locator("#logs li.stderr").allTextContents();
      expect(logged.some((entry) => entry.includes(`${shown[error]}\n${shown[error + 1]}\n`))).toBe(true);
      for (const list of ["tools", "resources", "templates", "prompts"])
        expect(await page.locator(`#${list} li`).count()).toBe(0);
      mkdirSync(out, { recursive: true });
      await page.screenshot({ path: join(out, "dev-console-crash.png") });

      p.write(`server.tool("fixed", { run: () => "works" });`);
      await poll(() => page.locator("#tools li").allTextContents()).toEqual(["fixed"]);
      expect(await text("#server")).toBe("p 1 · 2025-11-25");
      expect(await text("#detail")).toBe("Pick a tool, resource, template or prompt.");
    });

    it("later: a tool that ends the process shows the crash, and Restart server brings it back", async () => {
      const p = project(
        `server.tool("quit", { run: () => { console.error("giving up on purpose"); setTimeout(() => process.exit(3), 10); return "bye"; } });`,
      );
      const dev = await start(p.entry);
      await page.goto(dev.url);
      await poll(() => text("#server")).toBe("p 1 · 2025-11-25");
      await page.selectOption("#era", "2026-07-28");
      await poll(() => text("#server")).toBe("p 1 · 2026-07-28");
      await page.locator("#tools li").first().click();
      await page.getByRole("button", { name: "Call" }).click();
      await poll(() => text("#server")).toBe("exited (code 3)");
      expect(await text("#detail h1")).toBe("The server exited (code 3)");
      expect(await text("#detail pre.stderr")).toBe("giving up on purpose");
      await page.getByRole("button", { name: "Restart server" }).click();
      await poll(() => text("#server")).toBe("p 1 · 2026-07-28");
      await poll(() => page.locator("#tools li").allTextContents()).toEqual(["quit"]);
      expect(await page.locator("#detail pre.stderr").count()).toBe(0);
    });

    it("an entry that never calls serveStdio: says it exited without serving, and why, until it does", async () => {
      const p = project(`server.tool("served", { run: () => "yes" });`);
      const serving = readFileSync(p.entry, "utf8");
      writeFileSync(p.entry, serving.replace("serveStdio(server);", ""));
      const dev = await start(p.entry);
      await page.goto(dev.url);
      await poll(() => text("#detail h1")).toBe("The server exited (code 0) without serving");
      expect(await page.locator("#detail .hint").allTextContents()).toEqual([
        "It never answered a request: it ran to its end and stopped. Does the entry call serveStdio(server) from picomcp/stdio? Add it as the file's last line and save: picomcp dev restarts the server.",
      ]);
      expect(await text("#server")).toBe("exited (code 0)");
      writeFileSync(p.entry, serving);
      await poll(() => page.locator("#tools li").allTextContents()).toEqual(["served"]);
      expect(await text("#server")).toBe("p 1 · 2025-11-25");
    });
  },
);
