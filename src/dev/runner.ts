/**
 * `picomcp dev`: runs the user's server as a stdio child, restarts it when its files change, and serves
 * the console (console-server.ts) on 127.0.0.1, which speaks JSON-RPC to the child through the runner.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, type FSWatcher, watch } from "node:fs";
import { dirname, resolve } from "node:path";
import { serveConsole } from "./console-server.js";

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
  /** Milliseconds of quiet after a file change before the restart. Default: 150. */
  debounceMs?: number;
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

const IGNORED = /(^|[\\/])(node_modules|\.git)([\\/]|$)/;
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
  const argv = [...nodeArgs(entry), ...(options.args ?? [])];
  const log = options.log ?? ((line: string) => console.error(line));
  let child: ChildProcess | undefined;
  let generation = 0;
  let status: object = { state: "starting" };
  let closing = false;
  // the current process's last stderr lines, in order: what a crash screen shows
  let stderr: string[] = [];

  const setStatus = (next: object) => {
    status = next;
    page.broadcast("status", "");
  };

  const start = () => {
    const gen = ++generation;
    stderr = [];
    // MCP_TRANSPORT tells a server that serves HTTP by default (like the bookshop) to speak stdio
    const proc = spawn(process.execPath, argv, {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, MCP_TRANSPORT: "stdio" },
    });
    child = proc;
    lines(proc.stdout!, (got) => {
      for (const line of got) page.broadcast(isJson(line) ? "rpc" : "stdout", line);
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
  const restart = (reason: string) => {
    restarting = restarting.then(async () => {
      if (closing) return;
      setStatus({ state: "restarting", reason });
      await stop();
      if (!closing) start();
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

  let timer: ReturnType<typeof setTimeout> | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(entry), { recursive: true }, (_event, name) => {
      const file = name ? name.toString() : "";
      if (IGNORED.test(file)) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        log(`picomcp dev: ${file || "a file"} changed, restarting`);
        void restart(`${file || "a file"} changed`);
      }, options.debounceMs ?? 150);
    });
  } catch (error) {
    log(`picomcp dev: cannot watch ${dirname(entry)} (${(error as Error).message}); no restarts on change`);
  }

  start();
  log(
    `picomcp dev: ${options.entry} over stdio; open the console at the address below (it carries this run's secret)`,
  );

  return {
    url: page.url,
    origin: page.origin,
    close: async () => {
      closing = true;
      clearTimeout(timer);
      watcher?.close();
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

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
