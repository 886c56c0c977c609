// Helpers of the Redis tests: a redis-server of the test's own, picomcp instances as processes, a
// small HTTP proxy in front of them, and an SSE reader that waits for what it expects.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { accessSync, constants } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

const INSTANCE = fileURLToPath(new URL("./fixtures/redis-instance.js", import.meta.url));

/** The redis-server on the PATH, if any: with it each test file starts a server of its own. */
export const redisServer = onPath("redis-server");
/** Without redis-server, `REDIS_URL` names a running Redis for the tests that never stop it. */
export const sharedRedisUrl = redisServer ? undefined : process.env.REDIS_URL || undefined;
/** Under `PICOMCP_REQUIRE_SERVICES=1` (CI) nothing is skipped: a missing service fails the tests that need it. */
export const requireServices = process.env.PICOMCP_REQUIRE_SERVICES === "1";
/** Whether the tests that need a Redis run (else they are skipped, and test/redis-setup.ts says so once). */
export const withRedis = redisServer !== undefined || sharedRedisUrl !== undefined || requireServices;
/** Whether the tests that stop and restart a redis-server of their own run. */
export const withRedisServer = redisServer !== undefined || requireServices;
/** The install command the skip line and the failures name. */
export const INSTALL_REDIS = "apt-get install -y redis-server";

/** Channel and key names of this run: an external Redis may be shared with other runs. */
export const RUN = `t${process.pid}-${Date.now().toString(36)}`;

/** The absolute path of `command` in a PATH directory, if it is there and executable. */
export function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/**
 * A Redis for one test file: a redis-server of its own when it is on the PATH, else the one `REDIS_URL`
 * names (never stopped; `stop` only lets go of it).
 */
export async function useRedis(): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  if (sharedRedisUrl) {
    return { url: sharedRedisUrl, port: Number(new URL(sharedRedisUrl).port || 6379), stop: async () => {} };
  }
  const port = await freePort();
  const server = await startRedis(port);
  return { url: `redis://127.0.0.1:${port}`, port, stop: () => server.stop() };
}

/** Resolves once `check` holds (polled every 20 ms); rejects after `ms`, naming `what`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 15_000, what = "a condition") {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const s = createNetServer();
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  const port = (s.address() as { port: number }).port;
  s.close();
  await once(s, "close");
  return port;
}

/**
 * A redis-server of the test's own; fails loudly when it is not installed. No persistence, unless
 * `dir` is given: then every write is in its append-only file there before Redis answers it.
 */
export async function startRedis(port: number, dir?: string): Promise<{ stop(): Promise<void> }> {
  const persistence = dir
    ? ["--dir", dir, "--appendonly", "yes", "--appendfsync", "always"]
    : ["--appendonly", "no"];
  const child = spawn(
    redisServer ?? "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", ...persistence],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  await new Promise<void>((resolve, reject) => {
    child.once("error", (e) =>
      reject(new Error(`redis-server could not start (${e.message}): ${INSTALL_REDIS}`)),
    );
    child.once("exit", (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk;
      if (out.includes("Ready to accept connections")) resolve();
    });
  });
  // one exit, however many callers stop it (a killed child keeps exitCode null: signalCode says it ended)
  const exited = once(child, "exit");
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** One picomcp process (test/fixtures/redis-instance.js): its URL, and its stderr so far. */
export interface Instance {
  readonly url: string;
  readonly child: ChildProcess;
  stderr: string;
  stop(): Promise<void>;
}

/** Starts a picomcp instance named `name` (`script`: another fixture); with `redisUrl` on a RedisBus and a RedisEventStore. */
export async function startInstance(
  name: string,
  env: { [k: string]: string } = {},
  script = INSTANCE,
): Promise<Instance> {
  const child = spawn(process.execPath, [script], {
    // the instance uses Redis only when the test says so, whatever REDIS_URL the shell has
    env: { ...process.env, REDIS_URL: "", INSTANCE: name, CHANNEL: RUN, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const instance = { child, stderr: "", url: "" } as Instance & { url: string };
  child.stderr!.on("data", (chunk: Buffer) => {
    instance.stderr += chunk;
  });
  instance.url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.once("exit", (code) =>
      reject(new Error(`instance ${name} exited with ${code}: ${instance.stderr}`)),
    );
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.trim());
    });
  });
  instance.stop = async () => {
    // killed by a test already: it has exited, and no exit event will come again
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill();
    await once(child, "exit");
  };
  return instance;
}

/**
 * A round-robin HTTP proxy in front of `backends`. With `sticky`, a request naming a session goes
 * to the instance that created it (the deployment docs/scaling.md asks for); `x-to: <index>` picks
 * an instance (for the tests). Every answer says who served it in `x-backend`.
 */
export async function startProxy(
  backends: readonly string[],
  sticky: boolean,
): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const sessions = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const sid = req.headers["mcp-session-id"];
    const to = req.headers["x-to"];
    let index: number;
    if (typeof to === "string") index = Number(to);
    else if (sticky && typeof sid === "string" && sessions.has(sid)) index = sessions.get(sid)!;
    else index = next++ % backends.length;
    const target = new URL(backends[index]!);
    const headers = { ...req.headers, host: target.host };
    const upstream = httpRequest(target, { method: req.method!, headers }, (answer) => {
      const created = answer.headers["mcp-session-id"];
      if (typeof created === "string") sessions.set(created, index);
      res.writeHead(answer.statusCode!, { ...answer.headers, "x-backend": String(index) });
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    // a client that goes away closes the stream on the instance too
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** The JSON-RPC messages of an SSE response, as they arrive; `until` waits for a condition. */
export class SseMessages {
  readonly messages: any[] = [];
  readonly #waiters = new Set<() => void>();
  readonly #reader: ReadableStreamDefaultReader<string>;

  constructor(res: Response) {
    this.#reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    void this.#pump();
  }

  async #pump(): Promise<void> {
    let buf = "";
    try {
      for (;;) {
        const { done, value } = await this.#reader.read();
        if (done) return;
        buf += value;
        let end = buf.indexOf("\n\n");
        while (end !== -1) {
          const data = buf
            .slice(0, end)
            .split("\n")
            .filter((l) => l.startsWith("data: "))
            .map((l) => l.slice(6))
            .join("\n");
          buf = buf.slice(end + 2);
          end = buf.indexOf("\n\n");
          if (data) this.messages.push(JSON.parse(data));
        }
        for (const w of this.#waiters) w();
      }
    } catch {
      // cancelled
    }
  }

  /** Resolves once `check` holds for the messages so far; rejects after `ms`, saying what it had. */
  until(check: (messages: any[]) => boolean, ms = 10_000): Promise<void> {
    if (check(this.messages)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`timed out; got ${JSON.stringify(this.messages)}`));
      }, ms);
      const waiter = () => {
        if (!check(this.messages)) return;
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        resolve();
      };
      this.#waiters.add(waiter);
    });
  }

  close(): Promise<void> {
    return this.#reader.cancel().catch(() => {});
  }
}

/** What {@link faulty} does to a script call on `keys` with `args`: never answer, fail, or (undefined) send it. */
export type Fault = (keys: string[], args: string[]) => "hang" | "fail" | undefined;

/**
 * `client` (a real one) with faults put in: its scripts that `fault` names never answer, or fail, as on
 * a node that is away; the client bound to a call's deadline carries the same faults.
 */
export function faulty<C extends object>(client: C, fault: Fault): C {
  return new Proxy(client, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (key === "withCommandOptions")
        return (o: unknown) => faulty((value as (o: unknown) => object).call(target, o), fault);
      if (key === "evalSha" || key === "EVAL")
        return (script: string, o: { keys: string[]; arguments: string[] }) => {
          const f = fault(o.keys, o.arguments);
          if (f === "hang") return new Promise(() => {});
          if (f === "fail") return Promise.reject(new Error("Socket closed unexpectedly"));
          return (value as (s: string, o: object) => Promise<unknown>).call(target, script, o);
        };
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
