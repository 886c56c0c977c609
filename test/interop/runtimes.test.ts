import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { build as rolldownBuild } from "rolldown";
import { afterAll, describe, expect, it } from "vitest";
import { runChecks } from "../runtimes/checks.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const check = "test/runtimes/portable-check.js";

// Deno, Bun and workerd come from the npm registry as devDependencies; the checks use no Node API.
const runtimes: [string, string, string[]][] = [
  ["Node", process.execPath, [check]],
  ["Deno", `${root}node_modules/.bin/deno`, ["run", "--allow-read=.", "--no-prompt", check]],
  ["Bun", `${root}node_modules/.bin/bun`, [check]],
];

describe("the core and the HTTP handler on other runtimes", () => {
  it.each(runtimes)(
    "run on %s: sessions, templates, SSE progress, the Origin guard, 2026-07-28 headers",
    (_name, bin, args) => {
      const out = execFileSync(bin, args, {
        cwd: root,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, NO_COLOR: "1" },
      });
      expect(out.trim()).toBe("portable: ok");
    },
  );

  it.each(runtimes)(
    "run picomcp/auth with jose on %s: RS256, ES256, EdDSA, and the 401",
    (_name, bin, args) => {
      const out = execFileSync(bin, [...args.slice(0, -1), "test/runtimes/auth-check.js"], {
        cwd: root,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, NO_COLOR: "1" },
      });
      expect(out.trim()).toBe("auth: ok");
    },
  );

  it.each(runtimes)(
    "fetch Client ID Metadata Documents on %s: read, redirect and huge body refused, private addresses refused",
    (name, bin, args) => {
      // Deno serves and fetches on 127.0.0.1 (and localhost) only with the permission to
      const flags =
        name === "Deno" ? ["run", "--allow-read=.", "--allow-net=127.0.0.1,localhost", "--no-prompt"] : [];
      const out = execFileSync(
        bin,
        [...(flags.length ? flags : args.slice(0, -1)), "test/runtimes/cimd-check.js"],
        {
          cwd: root,
          encoding: "utf8",
          timeout: 60_000,
          env: { ...process.env, NO_COLOR: "1" },
        },
      );
      expect(out.trim()).toBe("cimd: ok");
    },
  );

  let workerd: ChildProcess | undefined;
  afterAll(() => void workerd?.kill("SIGKILL"));

  it("run as a Cloudflare Worker in workerd", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    // every module of dist the worker reaches, by its path, so that relative imports resolve
    const modules = ["test/runtimes/worker.js", "test/runtimes/server.js", ...distModules()]
      .map((m) => `(name = "${m}", esModule = embed "../${m}")`)
      .join(",\n      ");
    // embedded paths are relative to the config file, which lives in a git-ignored folder of the repo
    const dir = `${root}.test-out`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      `${dir}/workerd-${port}.capnp`,
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [
      ${modules}
  ],
  compatibilityDate = "2025-09-01",
);
`,
    );
    workerd = spawn(`${root}node_modules/.bin/workerd`, ["serve", `${dir}/workerd-${port}.capnp`], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    workerd.stderr!.on("data", (c) => (stderr += c));
    const origin = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        await fetch(`${origin}/`);
        break;
      } catch {
        if (i > 100) throw new Error(`workerd did not start: ${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await runChecks((request: Request) => fetch(request), origin);
  }, 30_000);
  it("run picomcp/auth's fetchClientMetadata as a Cloudflare Worker in workerd (bundled as for Workers)", async () => {
    const dir = `${root}.test-out`;
    mkdirSync(dir, { recursive: true });
    // one file, as wrangler would make it: jose and picomcp/auth bundled for a platform without node:*
    const bundled = `${dir}/cimd-worker-${process.pid}.js`;
    await rolldownBuild({
      input: `${root}test/runtimes/cimd-worker.js`,
      platform: "browser",
      output: { file: bundled, format: "esm", codeSplitting: false },
      logLevel: "silent",
    });
    const port = await freePort();
    writeFileSync(
      `${dir}/cimd-workerd-${port}.capnp`,
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "cimd-worker-${process.pid}.js")],
  compatibilityDate = "2025-09-01",
);
`,
    );
    const child = spawn(`${root}node_modules/.bin/workerd`, ["serve", `${dir}/cimd-workerd-${port}.capnp`], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (c) => (stderr += c));
    try {
      let answer: Response | undefined;
      for (let i = 0; !answer; i++) {
        answer = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
        if (!answer && i > 100) throw new Error(`workerd did not start: ${stderr}`);
        if (!answer) await new Promise((r) => setTimeout(r, 100));
      }
      expect(await answer.text()).toBe("cimd: ok");
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);
});

function freePort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function distModules(): string[] {
  const out = execFileSync(
    process.execPath,
    [
      "-e",
      "console.log(require('fs').readdirSync('dist',{recursive:true}).filter(f=>f.endsWith('.js')).join('\\n'))",
    ],
    {
      cwd: root,
      encoding: "utf8",
    },
  );
  return out
    .trim()
    .split("\n")
    .map((f) => `dist/${f}`);
}
