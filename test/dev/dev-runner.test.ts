/**
 * `picomcp dev` over raw HTTP, as curl (or any local process) would try it: the secret on every endpoint,
 * Sec-Fetch-Site on the endpoints that change anything, the headers on every response; the child's
 * restarts and its stderr; the `picomcp` command's flags.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { nodeArgs } from "../../src/dev/runner.js";
import {
  call,
  cleanUp,
  pageHeaders,
  project,
  raw,
  secretOf,
  send,
  start,
  status,
  toolCall,
} from "../dev-helpers.js";

const cli = fileURLToPath(new URL("../../dist/dev/cli.js", import.meta.url));
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

afterEach(cleanUp);

const answering = (text: string) => `server.tool("answer", { run: () => ${JSON.stringify(text)} });`;
/** A tool that keeps every value it is called with: what ran, and in which order. */
const RECORDER = `const seen = [];
server.tool("record", {
  input: { type: "object", properties: { value: { type: "string" } }, required: ["value"] },
  run: ({ value }) => (seen.push(value), JSON.stringify(seen)),
});`;

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; base-uri 'none'; form-action 'none'; object-src 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

describe("picomcp dev: the runner", () => {
  it("passes messages both ways, and restarts the server when a file beside it changes", async () => {
    const p = project(answering("one"));
    const dev = await start(p.entry);
    expect((await call(dev, toolCall(1, "answer"))).result.content).toEqual([{ type: "text", text: "one" }]);
    p.write(answering("two"));
    await expect
      .poll(() => status(dev), { timeout: 30_000 })
      .toMatchObject({ state: "running", generation: 2 });
    expect((await call(dev, toolCall(2, "answer"))).result.content).toEqual([{ type: "text", text: "two" }]);
  });

  it("takes a free port when the one asked for is taken, and listens on 127.0.0.1 only", async () => {
    const taken = createServer();
    await new Promise<void>((ok) => taken.listen(0, "127.0.0.1", ok));
    const port = (taken.address() as { port: number }).port;
    try {
      const dev = await start(project(answering("x")).entry, { port });
      expect(dev.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(dev.origin).not.toBe(`http://127.0.0.1:${port}`);
    } finally {
      taken.close();
    }
  });

  it("refuses other hosts, other origins, non-JSON bodies, and unknown paths", async () => {
    const dev = await start(project(answering("x")).entry);
    const page = pageHeaders(dev);
    const json = { ...page, "content-type": "application/json" };
    const answer = async (...args: Parameters<typeof raw>) => {
      const { status, body } = await raw(...args);
      return { status, body };
    };
    expect(await answer(dev.origin, "GET", "/", { ...page, host: "evil.example" })).toEqual({
      status: 403,
      body: "Forbidden host",
    });
    expect(
      await answer(dev.origin, "POST", "/send", { ...json, origin: "http://evil.example" }, "{}"),
    ).toEqual({
      status: 403,
      body: "Forbidden origin",
    });
    expect(
      await answer(dev.origin, "POST", "/send", { ...page, "content-type": "text/plain" }, "{}"),
    ).toEqual({
      status: 415,
      body: "Content-Type must be application/json",
    });
    expect(await answer(dev.origin, "POST", "/send", json, "{not json")).toEqual({
      status: 400,
      body: "The body is not JSON",
    });
    expect((await raw(dev.origin, "GET", "/../package.json", page)).status).toBe(404);
    expect((await raw(dev.origin, "GET", "/console.html", page)).status).toBe(404);
    const html = await raw(dev.origin, "GET", "/", {
      ...page,
      host: page.host.replace("127.0.0.1", "localhost"),
    });
    expect(html.status).toBe(200);
    expect(html.body).toContain('<script type="module" src="/console.js"></script>');
  });

  it("says how to run a .ts entry on a Node that cannot strip types", () => {
    expect(nodeArgs("server.js", "20.19.0")).toEqual(["server.js"]);
    expect(nodeArgs("server.ts", "23.6.0")).toEqual(["server.ts"]);
    expect(nodeArgs("server.ts", "22.18.0")).toEqual(["server.ts"]);
    expect(nodeArgs("server.mts", "22.6.0")).toEqual(["--experimental-strip-types", "server.mts"]);
    expect(() => nodeArgs("server.ts", "20.19.0")).toThrow(
      "Node 20.19.0 cannot run server.ts as it is: build it first (npx tsc) and pass the .js file, or use Node 22.18+, which strips types",
    );
  });
});

describe("picomcp dev: the secret", () => {
  it("is 256 random bits, new each run, carried by the address's fragment, which no request sends", async () => {
    const one = await start(project(answering("x")).entry);
    const two = await start(project(answering("x")).entry);
    expect(one.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#[\w-]{43}$/);
    expect(secretOf(one)).not.toBe(secretOf(two));
    expect(one.url).toBe(`${one.origin}/#${secretOf(one)}`);
  });

  it("serves the page's files to anyone, with no cookie, since they hold no secret", async () => {
    const dev = await start(project(answering("x")).entry);
    const host = new URL(dev.url).host;
    for (const path of ["/", "/console.js", "/connection.js", "/console.css", "/favicon.svg"]) {
      const answer = await raw(dev.origin, "GET", path, { host });
      expect([path, answer.status, answer.headers["set-cookie"]]).toEqual([path, 200, undefined]);
      expect(answer.body).not.toContain(secretOf(dev));
    }
  });

  it("answers 401 to every endpoint without it, or with a wrong one, and runs nothing", async () => {
    const dev = await start(project(RECORDER).entry);
    const host = new URL(dev.url).host;
    const secret = secretOf(dev);
    const endpoints = [
      ["GET", "/events"],
      ["GET", "/no-such-file"],
      ["POST", "/send"],
      ["POST", "/restart"],
    ] as const;
    const body = JSON.stringify(toolCall(1, "record", { value: "evil" }));
    const port = new URL(dev.url).port;
    for (const credentials of [
      {},
      { "x-picomcp-secret": "" },
      { "x-picomcp-secret": `${secret.slice(1)}x` },
      { "x-picomcp-secret": secret.toUpperCase() },
      // the old ways: a cookie, the address's query, a bearer token
      { cookie: `picomcp-dev-${port}=${secret}` },
      { authorization: `Bearer ${secret}` },
    ]) {
      for (const [method, path] of endpoints) {
        const answer = await raw(
          dev.origin,
          method,
          path,
          { host, "sec-fetch-site": "same-origin", "content-type": "application/json", ...credentials },
          method === "POST" ? body : "",
        );
        expect([method, path, answer.status]).toEqual([method, path, 401]);
        expect(answer.body).toMatch(/Open the address that picomcp dev printed in its terminal/);
        expect(answer.headers["set-cookie"]).toBeUndefined();
      }
    }
    expect((await raw(dev.origin, "GET", `/events?token=${secret}`, { host })).status).toBe(401);
    expect((await raw(dev.origin, "GET", `/events#${secret}`, { host })).status).toBe(401);
    // nothing ran: the server's first call is this one, and the first process still runs
    expect(
      JSON.parse((await call(dev, toolCall(2, "record", { value: "good" }))).result.content[0].text),
    ).toEqual(["good"]);
    expect(await status(dev)).toMatchObject({ state: "running", generation: 1 });
  });

  it("refuses every preflight, so another origin's fetch with the secret's header is never sent", async () => {
    const dev = await start(project(answering("x")).entry);
    const host = new URL(dev.url).host;
    for (const path of ["/send", "/events", "/restart", "/"]) {
      const answer = await raw(dev.origin, "OPTIONS", path, {
        host,
        origin: "http://127.0.0.1:9",
        "access-control-request-method": "POST",
        "access-control-request-headers": "x-picomcp-secret",
      });
      expect([path, answer.status]).toEqual([path, 403]);
      expect(Object.keys(answer.headers).filter((h) => h.startsWith("access-control-"))).toEqual([]);
    }
  });
});

describe("picomcp dev: only the page itself changes anything", () => {
  it("refuses /send and /restart unless Sec-Fetch-Site is same-origin, with the right secret", async () => {
    const dev = await start(project(RECORDER).entry);
    for (const site of ["cross-site", "same-site", "none", undefined]) {
      const { "sec-fetch-site": _, ...rest } = pageHeaders(dev);
      const headers = site === undefined ? rest : { ...rest, "sec-fetch-site": site };
      const sent = await send(dev, toolCall(1, "record", { value: `from ${site}` }), headers);
      expect([site, sent.status, sent.body]).toEqual([
        site,
        403,
        "Forbidden: only the console's own page may send (Sec-Fetch-Site: same-origin)",
      ]);
      expect((await raw(dev.origin, "POST", "/restart", headers)).status).toBe(403);
    }
    expect(
      JSON.parse((await call(dev, toolCall(2, "record", { value: "page" }))).result.content[0].text),
    ).toEqual(["page"]);
    expect(await status(dev)).toMatchObject({ state: "running", generation: 1 });
    const restarted = await raw(dev.origin, "POST", "/restart", pageHeaders(dev));
    expect([restarted.status, restarted.body]).toEqual([202, '{"generation":2}']);
  });

  it("forbids framing and sniffing, and sends no referrer, on every response", async () => {
    const dev = await start(project(answering("x")).entry);
    const page = pageHeaders(dev);
    const url = new URL(dev.url);
    const answers = [
      await raw(dev.origin, "GET", "/", page),
      await raw(dev.origin, "GET", "/console.js", page),
      await raw(dev.origin, "GET", "/favicon.svg", page),
      await raw(dev.origin, "GET", "/events", page),
      await raw(dev.origin, "OPTIONS", "/send", { host: url.host }),
      await raw(dev.origin, "GET", "/events", { host: url.host }),
      await raw(dev.origin, "GET", "/", { ...page, host: "evil.example" }),
      await raw(dev.origin, "GET", "/nothing-here", page),
      await send(dev, toolCall(1, "answer")),
      await send(dev, toolCall(2, "answer"), { ...page, "sec-fetch-site": "cross-site" }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 403, 401, 403, 404, 202, 403]);
    for (const answer of answers) expect(answer.headers).toMatchObject(SECURITY_HEADERS);
    expect(answers[1]!.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(answers[2]!.headers["content-type"]).toBe("image/svg+xml");
  });
});

describe("picomcp dev: a server that crashes", () => {
  it("puts its stderr in the terminal, in order, then the exit; the status carries the last lines", async () => {
    const lines: string[] = [];
    const p = project(`server.tool("bad name", { run: () => "x" });`);
    const dev = await start(p.entry, { log: (line) => lines.push(line) });
    await expect.poll(() => status(dev), { timeout: 30_000 }).toMatchObject({ state: "exited", code: 1 });
    const error = lines.findIndex((l) => l.startsWith('TypeError: Invalid tool name "bad name"'));
    const exit = lines.indexOf("picomcp dev: the server exited (code 1); waiting for a change to restart");
    expect(error).toBeGreaterThanOrEqual(0);
    expect(exit).toBeGreaterThan(error);
    expect(lines[error + 1]).toMatch(/^ {4}at /);
    // the runner's first line, then the server's stderr as it wrote it, then its exit
    expect(lines[0]).toMatch(/^picomcp dev: .*server\.js over stdio/);
    const { stderr } = await status(dev);
    expect(stderr).toEqual(lines.slice(1, exit));
    expect(stderr[0]).toMatch(/^file:\/\/.*\.js:\d+$/);
    expect(stderr.at(-1)).toBe(`Node.js ${process.version}`);
  });
});

describe("the picomcp command", () => {
  const run = (...args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(process.execPath, [cli, ...args]);
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c) => (stdout += c));
      child.stderr.on("data", (c) => (stderr += c));
      child.on("exit", (code) => done({ code, stdout, stderr }));
    });

  it("prints its version, its help and the dev command's help on stdout", async () => {
    expect(await run("--version")).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
    const help = await run("--help");
    expect([help.code, help.stderr]).toEqual([0, ""]);
    expect(help.stdout).toMatch(/^Usage: picomcp <command>\n/);
    expect(help.stdout).toContain("  dev <entry.js>   run an MCP server with a console in the browser");
    expect(help.stdout).toContain("  --version        print picomcp's version");
    const dev = await run("dev", "--help");
    expect([dev.code, dev.stderr]).toEqual([0, ""]);
    expect(dev.stdout).toMatch(
      /^Usage: picomcp dev <entry.js> \[--port 6280\] \[--ignore <glob>\]\.\.\. \[-- arguments for the entry\]\n/,
    );
    expect(dev.stdout).toContain("  --ignore <glob>  changes there never restart the server");
    expect(dev.stdout).toContain("it carries a secret made for this run");
  });

  it("names a mistake on stderr: no command, an unknown one, no entry, a missing entry", async () => {
    const none = await run();
    expect([none.code, none.stdout]).toEqual([2, ""]);
    expect(none.stderr).toMatch(/^Usage: picomcp <command>/);
    const unknown = await run("serve");
    expect([unknown.code, unknown.stderr.split("\n")[0]]).toEqual([2, "Unknown command: serve"]);
    const bare = await run("dev");
    expect([bare.code, bare.stderr.split("\n")[0]]).toEqual([2, "picomcp dev needs the server's entry file"]);
    const ignore = await run("dev", "x.js", "--ignore");
    expect([ignore.code, ignore.stderr.split("\n")[0]]).toEqual([2, "--ignore takes a glob"]);
    const port = await run("dev", "x.js", "--port", "http");
    expect([port.code, port.stderr.split("\n")[0]]).toEqual([
      2,
      "--port takes a port number from 0 to 65535",
    ]);
    expect(await run("dev", "missing.js")).toEqual({
      code: 1,
      stdout: "",
      stderr: "picomcp dev: missing.js does not exist\n",
    });
  });
});
