// The conformance suite's authorization-server scenarios (0.2.0-alpha.12 `conformance authorization`:
// authorization-server-metadata-endpoint, authorization-code-grant) against picomcp's authorization
// server (build/examples/conformance-auth.js on 127.0.0.1). The grant scenario prints an authorization
// URL and waits for the browser at http://127.0.0.1:<port>/callback: its stdout is read, the URL
// followed through the consent page (consent.js) and the redirect handed to its callback server.
// Used by scripts/conformance.js and test/auth/conformance-as.test.ts.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { followAuthorization } from "./consent.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const register = fileURLToPath(new URL("./register.mjs", import.meta.url));
const CLI = "node_modules/conformance-next/dist/index.js";

/** The scenarios the run must show (a run with fewer failed). */
export const AUTHORIZATION_SCENARIOS = ["authorization-server-metadata-endpoint", "authorization-code-grant"];

/**
 * A port that was free a moment ago, for the suite's callback server, which binds it later: picked at
 * random below the kernel's ephemeral range (32768 and up on Linux), where outgoing connections never
 * take one in between; the run is retried when it was taken all the same (EADDRINUSE).
 */
const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(20_000 + Math.floor(Math.random() * 12_000), "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** A port from {@link freePort}, trying a few until one is free. */
async function callbackPort() {
  for (let i = 0; ; i++) {
    try {
      return await freePort();
    } catch (error) {
      if (i >= 20 || error.code !== "EADDRINUSE") throw error;
    }
  }
}

/** Resolves with the first match of `pattern` in what `stream` prints (or rejects when `child` exits first). */
function waitFor(child, stream, pattern, what) {
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (chunk) => {
      seen += chunk;
      const m = pattern.exec(seen);
      if (m) {
        stream.off("data", onData);
        resolve(m);
      }
    };
    stream.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`${what} exited (${code}) before printing ${pattern}: ${seen}`)),
    );
  });
}

/**
 * Runs both scenarios once; resolves with the CLI's summary rows ({ mark, name, passed, failed }), its
 * whole output, and its exit code. `timeoutMs` bounds the whole run (default 120 s).
 */
export async function runAuthorizationScenarios({ timeoutMs = 120_000, attempts = 3 } = {}) {
  for (let attempt = 1; ; attempt++) {
    const run = await runOnce(timeoutMs);
    // the callback port was taken between its check and the suite binding it: a race, not a failure
    if (attempt >= attempts || !/EADDRINUSE/.test(run.out)) return run;
    console.warn(
      `conformance authorization: the callback port was taken before the suite bound it (EADDRINUSE); running again (${attempt + 1}/${attempts})`,
    );
  }
}

async function runOnce(timeoutMs) {
  const children = [];
  const timer = setTimeout(() => {
    for (const c of children) c.kill("SIGKILL");
  }, timeoutMs);
  try {
    const server = spawn(process.execPath, ["build/examples/conformance-auth.js"], {
      cwd: root,
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(server);
    const [, issuer, resource] = await waitFor(
      server,
      server.stdout,
      /^issuer (\S+)\nresource (\S+)$/m,
      "the authorization server",
    );
    // the suite's client: registered by RFC 7591 with the callback the grant scenario listens on
    const port = await callbackPort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const registered = await fetch(`${issuer}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "MCP conformance suite",
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }),
    });
    if (registered.status !== 201)
      throw new Error(`registration answered ${registered.status}: ${await registered.text()}`);
    const { client_id: clientId } = await registered.json();

    const cli = spawn(
      process.execPath,
      [
        "--import",
        register,
        CLI,
        "authorization",
        "--url",
        issuer,
        "--client-id",
        clientId,
        "--resource",
        resource,
        "--port",
        String(port),
      ],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(cli);
    let out = "";
    cli.stdout.on("data", (c) => (out += c));
    cli.stderr.on("data", (c) => (out += c));
    const exited = new Promise((resolve) => cli.on("exit", (code) => resolve(code)));
    // the person: follows the printed URL through the consent page, then lands on the suite's callback
    const browsing = waitFor(
      cli,
      cli.stdout,
      new RegExp(`^(${escapeRegExp(issuer)}/authorize\\?\\S+)$`, "m"),
      "the suite",
    )
      .then(async ([, url]) => {
        const back = await followAuthorization(url, { redirectUri });
        const res = await fetch(back);
        await res.body?.cancel();
      })
      .catch((error) => {
        // the suite would wait minutes for a callback that cannot come
        out += `\n[the browser step failed: ${error.message}]\n`;
        cli.kill("SIGTERM");
      });
    const code = await exited;
    await browsing;
    server.kill("SIGTERM");
    const rows = [...out.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gm)].map(
      ([, mark, name, passed, failed]) => ({ mark, name, passed: Number(passed), failed: Number(failed) }),
    );
    return { rows, out, code };
  } finally {
    clearTimeout(timer);
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  }
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
