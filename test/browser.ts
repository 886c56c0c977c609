/**
 * The browser of every browser test: Debian's chromium when it is installed (`chromium` on the PATH),
 * or the binary the env var `CHROMIUM` names (`CHROMIUM=bundled` skips both), else the Chromium that the
 * exact-pinned dev dependency @sparticuz/chromium ships inside its package (brotli-compressed, with the
 * NSS libraries it links and a font), unpacked once into node_modules/.cache/ and started headless
 * through playwright-core. So `npm install && npm test` needs no browser from Debian. Where none can run
 * (not Linux x64, say), the suite is skipped with one loud line naming `apt-get install -y chromium`,
 * and fails instead under PICOMCP_REQUIRE_SERVICES=1, which CI sets.
 */
import { spawnSync } from "node:child_process";
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { createBrotliDecompress } from "node:zlib";
import { type BrowserContext, chromium } from "playwright-core";
import { expect } from "vitest";

/** A Chromium that starts here: its binary and what it needs in its environment. */
export interface Chromium {
  readonly executablePath: string;
  readonly env: Readonly<Record<string, string>>;
  /** Where it came from, for the test's log line. */
  readonly source: string;
}

const PACKAGE = "@sparticuz/chromium";
const cache = fileURLToPath(new URL("../node_modules/.cache/picomcp-chromium/", import.meta.url));

let found: Promise<Chromium | string> | undefined;

/** The Chromium the browser tests use, or why there is none (looked for once per test file). */
export function findChromium(): Promise<Chromium | string> {
  found ??= discover();
  return found;
}

/** `name` in a directory of PATH (Debian's chromium is /usr/bin/chromium), or undefined. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

async function discover(): Promise<Chromium | string> {
  const named = process.env.CHROMIUM;
  if (named && named !== "bundled")
    return existsSync(named)
      ? { executablePath: named, env: {}, source: `CHROMIUM=${named}` }
      : `CHROMIUM=${named} does not exist`;
  const system = named === "bundled" ? undefined : onPath("chromium");
  if (system) return { executablePath: system, env: {}, source: system };
  if (process.platform !== "linux" || process.arch !== "x64")
    return `${PACKAGE} ships a Chromium for Linux x64 only, and this is ${process.platform} ${process.arch}`;
  let bin: string;
  let version: string;
  try {
    // the package's root: the first directory above its main file whose package.json names it
    const manifest = (at: string) =>
      existsSync(join(at, "package.json"))
        ? (JSON.parse(readFileSync(join(at, "package.json"), "utf8")) as { name?: string; version: string })
        : undefined;
    let root = dirname(createRequire(import.meta.url).resolve(PACKAGE));
    while (manifest(root)?.name !== PACKAGE && dirname(root) !== root) root = dirname(root);
    bin = join(root, "bin");
    version = manifest(root)!.version;
  } catch (error) {
    return `${PACKAGE} is not installed (${(error as Error).message.split("\n")[0]})`;
  }
  const dir = join(cache, version);
  try {
    if (!existsSync(join(dir, "chromium"))) await unpack(bin, dir);
  } catch (error) {
    return `cannot unpack ${PACKAGE} ${version}: ${(error as Error).message}`;
  }
  const env = {
    LD_LIBRARY_PATH: [join(dir, "lib"), process.env.LD_LIBRARY_PATH].filter(Boolean).join(":"),
    FONTCONFIG_PATH: join(dir, "fonts"),
  };
  const probe = spawnSync(join(dir, "chromium"), ["--version"], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  if (probe.status !== 0)
    return `${PACKAGE} ${version} does not run here: ${(probe.error?.message ?? probe.stderr).trim() || `exit ${probe.status}`}`;
  return {
    executablePath: join(dir, "chromium"),
    env,
    source: `${PACKAGE} ${version} (${probe.stdout.trim()})`,
  };
}

/**
 * Unpacks the package's binary, its libraries and its font into `dir`. Several test files start at
 * once: each unpacks into a directory of its own and renames it into place, so none sees half a binary.
 */
async function unpack(bin: string, dir: string): Promise<void> {
  mkdirSync(dirname(dir), { recursive: true });
  const work = mkdtempSync(`${dir}.partial-`);
  try {
    await pipeline(
      createReadStream(join(bin, "chromium.br")),
      createBrotliDecompress(),
      createWriteStream(join(work, "chromium"), { mode: 0o755 }),
    );
    // al2023.tar.br holds lib/ (libnss3 and the rest it links), fonts.tar.br holds fonts/ (one font)
    for (const [archive, into] of [
      ["al2023.tar.br", work],
      ["fonts.tar.br", join(work, "fonts")],
    ] as const) {
      untar(await brotli(join(bin, archive)), into);
    }
    // the package's fonts.conf names serverless paths; this one names the font unpacked here
    writeFileSync(
      join(work, "fonts", "fonts.conf"),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(dir, "fonts", "fonts")}</dir>\n  <cachedir>${join(tmpdir(), "picomcp-chromium-fonts")}</cachedir>\n</fontconfig>\n`,
    );
    try {
      renameSync(work, dir);
    } catch (error) {
      // another test file unpacked it first
      if (!existsSync(join(dir, "chromium"))) throw error;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Writes the files and folders of a tar archive under `into`. The package's archives hold nothing else;
 * anything else (a link, a path out of `into`) is refused rather than guessed at. Done here, not by
 * `tar`, so a machine needs nothing but Node.
 */
function untar(archive: Buffer, into: string): void {
  for (let at = 0; at + 512 <= archive.length; ) {
    const field = (offset: number, length: number) =>
      archive
        .subarray(at + offset, at + offset + length)
        .toString("utf8")
        .replace(/\0.*$/s, "");
    const name = field(0, 100);
    if (!name) break; // the two empty blocks that end an archive
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const mode = Number.parseInt(field(100, 8).trim() || "644", 8);
    const type = field(156, 1) || "0";
    const path = field(345, 155) ? `${field(345, 155)}/${name}` : name;
    const body = archive.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === "x" || type === "g") continue; // pax metadata: nothing to write
    if (path.startsWith("/") || path.split("/").includes(".."))
      throw new Error(`the archive names a path outside its folder: ${path}`);
    const target = join(into, path);
    if (type === "5") mkdirSync(target, { recursive: true });
    else if (type === "0") {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, body, { mode });
    } else throw new Error(`the archive holds ${path} of tar type ${type}, which is not unpacked here`);
  }
}

async function brotli(file: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(createReadStream(file), createBrotliDecompress(), async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) chunks.push(chunk);
  });
  return Buffer.concat(chunks);
}

/**
 * The Chromium for `suite`, or undefined after one loud line saying why it is skipped; under
 * PICOMCP_REQUIRE_SERVICES=1 a missing browser throws instead, so CI never skips.
 */
export async function chromiumFor(suite: string): Promise<Chromium | undefined> {
  const browser = await findChromium();
  if (typeof browser !== "string") {
    console.info(`${suite}: ${browser.source}`);
    return browser;
  }
  const line = `${suite}: no Chromium can run here (${browser}); install one with: apt-get install -y chromium`;
  if (process.env.PICOMCP_REQUIRE_SERVICES === "1") throw new Error(`${line} (PICOMCP_REQUIRE_SERVICES=1)`);
  console.warn(`\n*** SKIPPED ${line}\n`);
  return undefined;
}

/** A headless browser with a fresh profile of its own; `close()` also removes the profile. */
export async function launchBrowser(
  browser: Chromium,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), "picomcp-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: browser.executablePath,
    headless: true,
    env: { ...(process.env as Record<string, string>), ...browser.env },
    viewport: options.viewport ?? { width: 1280, height: 760 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  // chromium may still be writing to the profile as it goes: retry, and never throw from the event
  context.on("close", () => {
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 10 });
    } catch {}
  });
  return context;
}

/** `expect.poll` with room for a loaded machine: it waits on the condition, for up to 30 s. */
export function poll<T>(fn: () => T | Promise<T>): ReturnType<typeof expect.poll<T>> {
  return expect.poll(fn, { timeout: 30_000 });
}

/** Room for a browser test on a loaded machine (several polls, page loads, restarts). */
export const BROWSER_TIMEOUT = 180_000;
