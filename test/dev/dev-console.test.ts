/**
 * The dev console in a real headless browser (Debian's chromium, driven by playwright-core) against the
 * bookshop example: list, call a tool, fill a template with completion, see notifications arrive, switch
 * eras. A screenshot lands in .test-out/ for a person to look at.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRunner, runDev } from "../../src/dev/runner.js";
import { BROWSER_TIMEOUT, chromiumFor, launchBrowser, poll } from "../browser.js";
import { cleanUp, project, start } from "../dev-helpers.js";

const bookshop = fileURLToPath(new URL("../../build/examples/bookshop.js", import.meta.url));
const filesystem = fileURLToPath(new URL("../../build/examples/filesystem.js", import.meta.url));
const asking = fileURLToPath(new URL("../fixtures/dev-input-server.js", import.meta.url));
const out = fileURLToPath(new URL("../../.test-out/", import.meta.url));

let browser: BrowserContext;
let dev: DevRunner;
let page: Page;
/** What went wrong as the page loaded: console errors, failed or refused requests. */
const problems: string[] = [];
/** Every response the page got as it loaded, as `status path`. */
const loaded: string[] = [];

const chromium = await chromiumFor("the dev console in chromium");

beforeAll(async () => {
  if (!chromium) return;
  dev = await runDev({ entry: bookshop, port: 0, log: () => {} });
  browser = await launchBrowser(chromium);
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    loaded.push(`${r.status()} ${new URL(r.url()).pathname}`);
    if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`);
  });
  await page.goto(dev.url);
}, BROWSER_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await dev?.close();
});

const nav = (list: string) => page.locator(`#${list} li`);

describe.skipIf(!chromium)(
  "the dev console in chromium, against the bookshop",
  { timeout: BROWSER_TIMEOUT },
  () => {
    it("lists every primitive of the server", async () => {
      await poll(() => nav("tools").allTextContents()).toEqual(["search_books", "add_book"]);
      expect(await nav("resources").allTextContents()).toEqual([
        "config://app",
        "books://1The Left Hand of Darkness",
        "books://2Kindred",
        "books://3Solaris",
      ]);
      expect(await nav("templates").allTextContents()).toEqual(["books://{id}"]);
      expect(await nav("prompts").allTextContents()).toEqual(["recommend"]);
      expect(await page.locator("#server").textContent()).toBe("bookshop 1.0.0 · 2025-11-25");
    });

    it("loads its modules and its icon with no error, and the address bar loses the secret", async () => {
      await poll(() => page.locator("body").getAttribute("data-ready")).toBeTruthy();
      expect(problems).toEqual([]);
      expect(loaded.slice(0, 2)).toEqual(["200 /", "200 /console.css"]);
      for (const module of [
        "console",
        "connection",
        "views",
        "forms",
        "dialogs",
        "traffic",
        "dom",
        "uri-template",
      ])
        expect(loaded).toContain(`200 /${module}.js`);
      expect(page.url()).toBe(`${dev.origin}/`);
      // a full Chromium fetches the icon by itself (the headless shell fetches none): it is there to fetch
      const icon = await page.evaluate(async () => {
        const href = document.querySelector('link[rel="icon"]')?.getAttribute("href") ?? "";
        const res = await fetch(href);
        return [href, res.status, res.headers.get("content-type"), (await res.text()).startsWith("<svg")];
      });
      expect(icon).toEqual(["/favicon.svg", 200, "image/svg+xml", true]);
    });

    it("calls a tool from a form, with a missing field shown beside it", async () => {
      await nav("tools").filter({ hasText: "search_books" }).click();
      await page.getByRole("button", { name: "Call" }).click();
      await poll(() => page.locator('[data-field="query"] .error').textContent()).toBe("required");
      await page.fill("#f-query", "lem");
      await page.getByRole("button", { name: "Call" }).click();
      await poll(() => page.locator("#detail .result").textContent()).toBe("3: Solaris — Stanisław Lem");
      // the bar is there while the call runs; a finished call leaves its answer, not an empty bar
      expect(await page.locator("#detail progress").count()).toBe(0);
    });

    it("fills a template with completion as you type, and reads it", async () => {
      await nav("templates").first().click();
      await page.locator("#f-id").pressSequentially("2");
      await poll(() => page.locator('[data-field="id"]').getAttribute("data-completions")).toBe("2");
      expect(await page.locator("#detail p.uri").textContent()).toBe("books://2");
      await page.getByRole("button", { name: "Read" }).click();
      await poll(() => page.locator("#detail .result").textContent()).toBe(
        '{"id":"2","title":"Kindred","author":"Octavia E. Butler"}',
      );
    });

    it("subscribes, and shows progress and a log message as they arrive", async () => {
      await nav("resources").filter({ hasText: "books://3" }).click();
      await page.getByRole("button", { name: "Subscribe" }).click();
      await nav("tools").filter({ hasText: "add_book" }).click();
      await page.fill("#f-title", "Ficciones");
      await page.fill("#f-author", "Jorge Luis Borges");
      await page.getByRole("button", { name: "Call" }).click();
      await poll(() => page.locator("#detail .result").textContent()).toBe("Added book 4: Ficciones");
      expect(await page.locator("#detail progress").count()).toBe(0);
      await poll(() => page.locator("#logs li").first().textContent()).toBe(
        '[info] {"added":"4","title":"Ficciones"}',
      );
      const notes = await page.locator("#notifications li").allTextContents();
      expect(notes.some((n) => n.endsWith("progress 1/1 Shelved"))).toBe(true);
      expect(notes.some((n) => n.endsWith("subscribed to books://3"))).toBe(true);
      expect(await page.locator("#traffic li").count()).toBeGreaterThan(10);
      mkdirSync(out, { recursive: true });
      await page.screenshot({ path: join(out, "dev-console.png") });
    });

    it("switches to 2026-07-28 and serves the same primitives statelessly", async () => {
      await page.selectOption("#era", "2026-07-28");
      await poll(() => page.locator("#server").textContent()).toBe("bookshop 1.0.0 · 2026-07-28");
      await poll(() => nav("tools").allTextContents()).toEqual(["search_books", "add_book"]);
      await nav("prompts").first().click();
      await page.fill("#f-genre", "poetry");
      await page.getByRole("button", { name: "Get" }).click();
      await poll(() => page.locator("#detail .result").textContent()).toBe(
        "Recommend one book from our catalog for someone who likes poetry.",
      );
      const sent = await page.locator("#traffic li.out").first().textContent();
      expect(sent).toContain('"io.modelcontextprotocol/protocolVersion":"2026-07-28"');
    });
  },
);

describe.skipIf(!chromium)(
  "the dev console in chromium, against the filesystem example",
  { timeout: BROWSER_TIMEOUT },
  () => {
    it("lists the files, reads one, hears it change, and reads it again through read_resource", async () => {
      const root = realpathSync(mkdtempSync(join(tmpdir(), "picomcp-fs-console-")));
      writeFileSync(join(root, "notes.md"), "# Notes\n");
      const uri = pathToFileURL(join(root, "notes.md")).href;
      const files = await runDev({ entry: filesystem, args: [root], port: 0, log: () => {} });
      try {
        await page.goto(files.url);
        await poll(() => nav("tools").allTextContents()).toEqual(["list_resources", "read_resource"]);
        expect(await nav("resources").allTextContents()).toEqual([`${uri}notes.md`]);
        expect(await nav("templates").allTextContents()).toEqual([
          `${pathToFileURL(root).href}/{+path}${basename(root)}`,
        ]);
        await nav("resources").first().click();
        await page.getByRole("button", { name: "Subscribe" }).click();
        await page.getByRole("button", { name: "Read" }).click();
        await poll(() => page.locator("#detail .result").textContent()).toBe("# Notes\n");
        writeFileSync(join(root, "notes.md"), "# Notes\nchanged\n");
        await poll(() => page.locator("#notifications li").allTextContents()).toContainEqual(
          expect.stringMatching(`resources/updated ${uri}$`),
        );
        await nav("tools").filter({ hasText: "read_resource" }).click();
        await page.fill("#f-uri", uri);
        await page.getByRole("button", { name: "Call" }).click();
        await poll(() => page.locator("#detail .result").textContent()).toBe(`${uri}\n# Notes\nchanged\n`);
        await page.screenshot({ path: join(out, "dev-console-filesystem.png") });
      } finally {
        await files.close();
        rmSync(root, { recursive: true, force: true });
      }
    });
  },
);

describe.skipIf(!chromium)(
  "the dev console in chromium: the server asks the person at the page",
  { timeout: BROWSER_TIMEOUT },
  () => {
    let runner: DevRunner;
    beforeAll(async () => {
      runner = await runDev({ entry: asking, port: 0, log: () => {} });
    });
    afterAll(() => runner?.close());

    const call = async (tool: string) => {
      await nav("tools").filter({ hasText: tool }).click();
      await page.getByRole("button", { name: "Call" }).click();
    };
    const dialog = () => page.locator("dialog#ask");
    // a page load of its own each time: from the console's own address, the address differs only in
    // its fragment, which the page answers with a reload of its own
    const open = async () => {
      await page.goto("about:blank");
      await page.goto(runner.url);
    };
    const answer = () => page.locator("#detail .result").textContent();

    it.each(["2025-11-25", "2026-07-28"])(
      "%s: an elicitation is a form in a dialog (accept, decline), sampling a reply written as the model",
      async (era) => {
        await open();
        if (era !== "2025-11-25") await page.selectOption("#era", era);
        await poll(() => page.locator("#server").textContent()).toContain(era);
        await poll(() => nav("tools").allTextContents()).toEqual(["order", "haiku", "hurry"]);

        await call("order");
        await poll(() => dialog().isVisible()).toBe(true);
        expect(await dialog().locator(".message").textContent()).toBe("How many copies?");
        await dialog().getByRole("button", { name: "Accept" }).click();
        // a required field left empty is shown, and the dialog stays
        await poll(() => dialog().locator('[data-field="copies"] .error').textContent()).toBe("required");
        await page.fill("#ask-copies", "3");
        await page.check("#ask-gift");
        await dialog().getByRole("button", { name: "Accept" }).click();
        await poll(answer).toBe("3 copies, gift-wrapped");
        expect(await dialog().isVisible()).toBe(false);

        await call("order");
        await dialog().getByRole("button", { name: "Decline" }).click();
        await poll(answer).toBe("no order (decline)");

        await call("haiku");
        await poll(() => dialog().locator(".messages li").allTextContents()).toEqual([
          "user: A haiku about a pond",
        ]);
        await page.fill("#ask-reply", "an old pond / a frog jumps in / the sound of water");
        await dialog().getByRole("button", { name: "Send" }).click();
        await poll(answer).toBe("The model said: an old pond / a frog jumps in / the sound of water");

        await call("haiku");
        await dialog().getByRole("button", { name: "Reject" }).click();
        await poll(answer).toContain("rejected");
        const traffic = await page.locator("#traffic").textContent();
        if (era === "2025-11-25") expect(traffic).toContain('"method":"elicitation/create"');
        else expect(traffic).toContain('"resultType":"input_required"');
      },
    );

    it("2025-11-25: a question the server withdraws (notifications/cancelled) leaves the screen, unanswered", async () => {
      await open();
      await poll(() => nav("tools").allTextContents()).toEqual(["order", "haiku", "hurry"]);
      await call("hurry");
      await poll(() => dialog().isVisible()).toBe(true);
      await poll(answer).toBe("too late");
      expect(await dialog().isVisible()).toBe(false);
      // nothing was sent back for the withdrawn elicitation: no answer, no error, under its id
      const wire = async (cls: string) =>
        (await page.locator(`#traffic li.${cls}`).allTextContents()).map((t) => JSON.parse(t.slice(2)));
      const asked = (await wire("in")).find((m) => m.method === "elicitation/create");
      expect(asked?.id).toBeDefined();
      expect((await wire("out")).filter((m) => m.id === asked.id && m.method === undefined)).toEqual([]);
    });
  },
);

describe.skipIf(!chromium)("the dev console in chromium: two tabs", { timeout: BROWSER_TIMEOUT }, () => {
  it("a second tab takes the server over; the first says so and can take it back by reloading", async () => {
    const runner = await runDev({ entry: bookshop, port: 0, log: () => {} });
    const first = await browser.newPage();
    const second = await browser.newPage();
    try {
      const ready = (p: Page) =>
        poll(() => p.locator("#tools li").allTextContents()).toEqual(["search_books", "add_book"]);
      const taken = (p: Page) =>
        poll(() => p.locator("#detail .taken").textContent()).toBe(
          "Another tab took this server over. Reload this page to take it back.",
        );
      const search = async (p: Page) => {
        await p.locator("#tools li").filter({ hasText: "search_books" }).click();
        await p.fill("#f-query", "lem");
        await p.getByRole("button", { name: "Call" }).click();
        await poll(() => p.locator("#detail .result").textContent()).toBe("3: Solaris — Stanisław Lem");
      };
      await first.goto(runner.url);
      await ready(first);
      await second.goto(runner.url);
      await ready(second);
      await taken(first);
      expect(await first.locator("#status").textContent()).toBe("taken over by another tab");
      expect(await first.locator("#tools li").count()).toBe(0);
      await search(second);
      // the first tab heard none of the second's traffic
      expect(await first.locator("#traffic").textContent()).not.toContain("3: Solaris");
      // a stale page's message is refused by the runner, not written to the server
      const refused = await first.evaluate(async () => {
        const r = await fetch("/send", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-picomcp-page": "stale-page",
            "x-picomcp-secret": sessionStorage.getItem("picomcp-dev-secret") ?? "",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: "x", method: "ping" }),
        });
        return [r.status, await r.text()];
      });
      expect(refused).toEqual([409, "Another page drives the server now: reload this one to take it back"]);
      await first.reload();
      await ready(first);
      await taken(second);
      await search(first);
    } finally {
      await first.close();
      await second.close();
      await runner.close();
    }
  });
});

describe.skipIf(!chromium)(
  "the dev console in chromium: a slow event stream",
  { timeout: BROWSER_TIMEOUT },
  () => {
    it("restarts the server only once its event stream is answered, so it hears its first answers", async () => {
      const runner = await runDev({ entry: bookshop, port: 0, log: () => {} });
      const p = await browser.newPage();
      const asked: string[] = [];
      p.on("request", (r) => asked.push(new URL(r.url()).pathname));
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let holding = false;
      // the page's first event stream waits until the test lets it through
      await p.route(
        (url) => url.pathname === "/events",
        async (route) => {
          if (!holding) {
            holding = true;
            await held;
          }
          await route.continue();
        },
      );
      try {
        await p.goto(runner.url);
        await poll(() => holding).toBe(true);
        // the page's module has run: a restart it did not wait for would have been asked by now
        await poll(() => p.evaluate(() => document.readyState)).toBe("complete");
        expect(asked.filter((path) => path === "/restart")).toEqual([]);
        release();
        await poll(() => p.locator("#tools li").allTextContents()).toEqual(["search_books", "add_book"]);
        expect(asked.filter((path) => path === "/restart")).toEqual(["/restart"]);
      } finally {
        release();
        await p.close();
        await runner.close();
      }
    });
  },
);

describe.skipIf(!chromium)("the dev console in chromium: long names", { timeout: BROWSER_TIMEOUT }, () => {
  const TEMPLATE =
    "library://{collection}/shelves/{shelf}/books/{isbn}/editions/{edition}/chapters{/chapter*}{?lang,format}";
  const TOOL = "a_rather_long_tool_name_that_a_narrow_list_would_have_cut_somewhere";
  afterAll(cleanUp);

  it("wraps a long template or tool name in the list, so all of it can be read", async () => {
    const p = project(`server.resource(${JSON.stringify(TEMPLATE)}, { read: () => "x" });
server.tool(${JSON.stringify(TOOL)}, { run: () => "x" });`);
    const runner = await start(p.entry);
    await page.goto(runner.url);
    await poll(() => nav("templates").allTextContents()).toEqual([TEMPLATE]);
    for (const item of [nav("templates").first(), nav("tools").first()]) {
      const box = await item.evaluate((n) => ({
        text: n.textContent,
        overflow: n.scrollWidth - n.clientWidth,
        lines: n.getBoundingClientRect().height / Number.parseFloat(getComputedStyle(n).lineHeight),
      }));
      expect(box.overflow).toBeLessThanOrEqual(0);
      expect(box.lines).toBeGreaterThan(1.5);
      expect([TEMPLATE, TOOL]).toContain(box.text);
    }
  });
});
