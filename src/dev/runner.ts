/**
 * `picomcp dev`: runs the user's server as a stdio child, restarts it when its files change, and serves
 * the console (console-server.ts) on 127.0.0.1, which speaks JSON-RPC to the child through the runner.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { serveConsole } from "./console-server.js";
import { GRAPH_ARGS, GRAPH_FD_ENV, watchChanges } from "./watch.js";

/** Options of {@link runDev}. */
export interface DevOptions {
  /** The server's entry file: a built `.js`, or a `.ts` where Node strips types (22.18+). */
  entry: string;
  /** Arguments passed to the entry. Default: none. */
  args?: readonly string[];
  /** The console's port; a taken one falls back to a free one. Default: 6280. */
  port?: number;
  /**
   * Receives what the runner has to say (restarts, exits) and each line the server writes to stderr,
   * as it comes. Default: `console.error`.
   */
  log?: (line: string) => void;
  /**
   * Milliseconds of quiet after the last file change before the restart: a build that writes many
   * files restarts the server once. Default: 150.
   */
  debounceMs?: number;
  /**
   * Globs of paths under the entry's folder whose changes never restart the server: `data` (a file or
   * folder of that name at any depth), `*.log`, `src/generated/**`. Default: none; `node_modules` and
   * folders whose name starts with a dot are never watched.
   */
  ignore?: readonly string[];
}

/** A running `picomcp dev`. */
export interface DevRunner {
  /** The console's address with this run's secret in its fragment, `http://127.0.0.1:<port>/#<secret>`: open it. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`, where the console answers (its endpoints with the secret's header). */
  readonly origin: string;
  /** Stops the watcher, the child and the console. */
  close(): Promise<void>;
}

/** How many of the server's last stderr lines an exit status carries to the page. */
const LAST_LINES = 40;

/** How to run `entry` with this Node, or an error that says what to do instead. */
export function nodeArgs(entry: string, version = process.versions.node): string[] {
  if (!/\.[cm]?ts$/.test(entry)) return [entry];
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 18)) return [entry];
  if (major === 22 && minor >= 6) return ["--experimental-strip-types", entry];
  throw new Error(
    `Node ${version} cannot run ${entry} as it is: build it first (npx tsc) and pass the .js file, or use Node 22.18+, which strips types`,
  );
}

/** Starts the child, the watcher and the console; resolves once the console listens. */
export async function runDev(options: DevOptions): Promise<DevRunner> {
  const entry = resolve(options.entry);
  if (!existsSync(entry)) throw new Error(`${options.entry} does not exist`);
  const argv = [...GRAPH_ARGS, ...nodeArgs(entry), ...(options.args ?? [])];
  const log = options.log ?? ((line: string) => console.error(line));
  let child: ChildProcess | undefined;
  let generation = 0;
  let status: object = { state: "starting" };
  let closing = false;
  // the current process's last stderr lines, in order: what a crash screen shows
  let stderr: string[] = [];
  // whether the current process ever answered a request: one that exits 0 without has never served
  let answered = false;

  const setStatus = (next: object) => {
    status = next;
    page.broadcast("status", "");
  };

  const start = () => {
    const gen = ++generation;
    stderr = [];
    answered = false;
    // MCP_TRANSPORT tells a server that serves HTTP by default (like the bookshop) to speak stdio; on
    // descriptor 3 it reports the modules it loads (watch.ts)
    const proc = spawn(process.execPath, argv, {
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      env: { ...process.env, MCP_TRANSPORT: "stdio", [GRAPH_FD_ENV]: "3" },
    });
    child = proc;
    watcher.follow(proc.stdio[3] as NodeJS.ReadableStream);
    lines(proc.stdout!, (got) => {
      for (const line of got) {
        const message = parse(line);
        if (message !== undefined && child === proc && isResponse(message)) answered = true;
        page.broadcast(message !== undefined ? "rpc" : "stdout", line);
      }
    });
    // one event per write, so a stack trace stays one entry, in order
    lines(proc.stderr!, (got) => {
      for (const line of got) log(line);
      if (child === proc) stderr = [...stderr, ...got].slice(-LAST_LINES);
      page.broadcast("stderr", got.join("\n"));
    });
    proc.stdin!.on("error", () => {}); // a child that died mid-write: its exit is reported below
    proc.on("error", (error) => {
      log(`picomcp dev: cannot start ${entry}: ${error.message}`);
      stderr = [...stderr, error.message];
    });
    // "close", not "exit": by then its stderr is read to the end, and the last lines are all there
    proc.on("close", (code, signal) => {
      // stop() lets go of the child before it ends it: only an exit of its own is news
      if (child !== proc || closing) return;
      child = undefined;
      if (code === 0 && !answered) {
        // it ran to its end without serving: the usual cause is a forgotten serveStdio(server)
        log(
          `picomcp dev: the server exited (code 0) without serving: it never answered a request. Does ${options.entry} call serveStdio(server) from picomcp/stdio? Waiting for a change to restart`,
        );
        setStatus({ state: "exited", generation: gen, code, signal, stderr, served: false });
        return;
      }
      log(`picomcp dev: the server exited (${signal ?? `code ${code}`}); waiting for a change to restart`);
      setStatus({ state: "exited", generation: gen, code, signal, stderr });
    });
    setStatus({ state: "running", generation: gen, pid: proc.pid });
  };

  const stop = () =>
    new Promise<void>((done) => {
      const proc = child;
      child = undefined;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return done();
      const kill = setTimeout(() => proc.kill("SIGKILL"), 2000);
      proc.once("exit", () => {
        clearTimeout(kill);
        done();
      });
      proc.kill("SIGTERM");
    });

  let restarting: Promise<void> = Promise.resolve();
  // from the restart's stop to the new child's start: the old child's module graph still says what
  // matters, so that what it writes while it exits (its state, on SIGTERM) restarts nothing
  let switching = false;
  const restart = (reason: string) => {
    restarting = restarting.then(async () => {
      if (closing) return;
      setStatus({ state: "restarting", reason });
      switching = true;
      try {
        await stop();
        if (!closing) start();
      } finally {
        switching = false;
      }
    });
    return restarting;
  };

  const page = await serveConsole(
    {
      status: () => status,
      send: (line) => {
        const stdin = child?.stdin;
        if (!stdin?.writable) return false;
        stdin.write(line);
        return true;
      },
      restart: async (reason) => {
        await restart(reason);
        return generation;
      },
    },
    options.port ?? 6280,
  );

  // made once the console listens: a console that cannot listen leaves no watcher behind
  const watcher = watchChanges({
    dir: dirname(entry),
    ignore: options.ignore ?? [],
    debounceMs: options.debounceMs ?? 150,
    running: () => child !== undefined || switching,
    onChange: (files) => {
      const what =
        files.length > 3 ? `${files.slice(0, 3).join(", ")} and ${files.length - 3} more` : files.join(", ");
      log(`picomcp dev: ${what} changed, restarting`);
      void restart(`${what} changed`);
    },
    log,
  });

  start();
  log(
    `picomcp dev: ${options.entry} over stdio; open the console at the address below (it carries this run's secret)`,
  );

  return {
    url: page.url,
    origin: page.origin,
    close: async () => {
      closing = true;
      watcher.close();
      await stop();
      await page.close();
    },
  };
}

/** Calls `each` with the complete lines of every chunk a stream gives (blank lines dropped). */
function lines(stream: NodeJS.ReadableStream, each: (lines: string[]) => void): void {
  let buffer = "";
  const flush = (upTo: number) => {
    const got = buffer
      .slice(0, upTo)
      .split("\n")
      .map((line) => line.replace(/\r$/, ""))
      .filter((line) => line.trim());
    buffer = buffer.slice(upTo + 1);
    if (got.length) each(got);
  };
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    const end = buffer.lastIndexOf("\n");
    if (end >= 0) flush(end);
  });
  // a last line without its newline, written just before the process ended
  stream.on("end", () => flush(buffer.length));
}

function parse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** A JSON-RPC response (or a batch of them): what a server writes once it serves. */
function isResponse(message: unknown): boolean {
  if (Array.isArray(message)) return message.some(isResponse);
  return (
    typeof message === "object" &&
    message !== null &&
    "id" in message &&
    ("result" in message || "error" in message)
  );
}
