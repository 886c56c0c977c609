// The server processes of the test deployments (test/redis-deployments.ts): one node started from a config
// file in a directory of its own, its faults (killed, paused), and redis-cli to ask it how it is.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, createCluster, createSentinel } from "redis";
import { INSTALL_REDIS, onPath, redisServer } from "./redis-helpers.js";

/** redis-cli, which creates a cluster and asks the nodes how they are. */
export const redisCli = onPath("redis-cli");
/** The install command that brings redis-cli. */
export const INSTALL_REDIS_CLI = "apt-get install -y redis-tools";

/** Fails at once, saying how to get it, where redis-cli is missing (a cluster or Sentinel set needs it). */
export function needRedisCli(): void {
  if (!redisCli) throw new Error(`redis-cli is not on the PATH: ${INSTALL_REDIS_CLI}`);
}

/** How long a deployment may take to become healthy again after a start or a fault. */
export const HEALTHY_MS = 30_000;

/** The first words of what `redis-cli -p <port> <args>` prints; rejects when the node does not answer. */
export function cli(port: number, ...args: string[]): Promise<string> {
  return redisCliRun(2_000, ["-h", "127.0.0.1", "-p", String(port), ...args]);
}

/** What redis-cli prints for `args`; rejects when it fails or takes more than `timeout` ms. */
export function redisCliRun(timeout: number, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(redisCli ?? "redis-cli", args, { timeout }, (error, stdout, stderr) => {
      if (error) reject(new Error(`redis-cli ${args.join(" ")}: ${stderr || error.message}`));
      else resolve(stdout.trim());
    });
  });
}

/** The `field:value` lines of an INFO reply, as a record. */
export function info(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(":");
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return out;
}

/** One server process of a deployment: a cluster node, a data node or a sentinel, started from its config file. */
export class Node {
  readonly url: string;
  readonly #args: string[];
  readonly #bin: string;
  readonly #ready: string;
  #child: ChildProcess | undefined;
  #exited: Promise<unknown> = Promise.resolve();
  #paused = false;
  /** The last few kilobytes of what it printed (its output is always read: a full pipe would stop it). */
  output = "";

  readonly name: string;
  readonly port: number;
  readonly dir: string;

  constructor(
    name: string,
    port: number,
    dir: string,
    config: string,
    options: { bin?: string | undefined; sentinel?: boolean } = {},
  ) {
    this.name = name;
    this.port = port;
    this.dir = dir;
    this.url = `redis://127.0.0.1:${port}`;
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "redis.conf");
    writeFileSync(file, `port ${port}\nbind 127.0.0.1\ndir ${dir}\n${config}\n`);
    this.#args = options.sentinel ? [file, "--sentinel"] : [file];
    this.#bin = options.bin ?? redisServer ?? "redis-server";
    this.#ready = options.sentinel ? "Sentinel ID is" : "Ready to accept connections";
  }

  /** Its process id while it runs. */
  get pid(): number | undefined {
    return this.running ? this.#child!.pid : undefined;
  }

  /** Whether its process runs (paused or not). */
  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Whether it runs and is not paused: whether it can answer. */
  get answering(): boolean {
    return this.running && !this.#paused;
  }

  /** Starts it (from its config file and what it saved in its directory); resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.running) return;
    const child = spawn(this.#bin, this.#args, { stdio: ["ignore", "pipe", "pipe"] });
    this.#child = child;
    this.#paused = false;
    this.#exited = once(child, "exit");
    await new Promise<void>((resolve, reject) => {
      let fresh = ""; // what this start printed: an earlier start's line says nothing of this one
      const heard = (chunk: Buffer) => {
        this.output = (this.output + chunk).slice(-8_000);
        if (fresh.length < 100_000) fresh += chunk;
        if (fresh.includes(this.#ready)) resolve();
      };
      child.stdout!.on("data", heard);
      child.stderr!.on("data", heard);
      child.once("error", (e) =>
        reject(new Error(`${this.#bin} could not start (${e.message}): ${INSTALL_REDIS}`)),
      );
      child.once("exit", (code) => reject(new Error(`${this.name} exited with ${code}: ${this.output}`)));
    });
  }

  /** Kills it (SIGKILL: what it had not written to disk is lost); resolves once it has exited. */
  async kill(): Promise<void> {
    if (this.running) this.#child!.kill("SIGKILL");
    await this.#exited;
    this.#paused = false;
  }

  /** Stops it where it is (SIGSTOP): its connections stay open, nothing answers. */
  pause(): void {
    if (!this.running) throw new Error(`${this.name} is not running`);
    this.#child!.kill("SIGSTOP");
    this.#paused = true;
  }

  /** Lets a paused node go on (SIGCONT). */
  resume(): void {
    if (!this.running) throw new Error(`${this.name} is not running`);
    this.#child!.kill("SIGCONT");
    this.#paused = false;
  }

  /** What redis-cli prints for a command sent to it. */
  cli(...args: string[]): Promise<string> {
    return cli(this.port, ...args);
  }

  /** Its role now, as it says (`master`, `slave`, `sentinel`), or `unreachable`. */
  async role(): Promise<string> {
    if (!this.answering) return "unreachable";
    return this.cli("ROLE").then(
      (r) => r.split("\n")[0]!,
      () => "unreachable",
    );
  }

  /** Calls per command since its start or the last `CONFIG RESETSTAT` (`INFO commandstats`). */
  async commandStats(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const [key, value] of Object.entries(info(await this.cli("INFO", "commandstats")))) {
      const calls = /calls=(\d+)/.exec(value);
      if (key.startsWith("cmdstat_") && calls) out[key.slice(8)] = Number(calls[1]);
    }
    return out;
  }
}

/** The deployments the tests run on. */
export type DeploymentKind = "single" | "cluster" | "sentinel" | "valkey";

/** A client of one node, as users create it (not connected). */
export const newClient = (url: string) => createClient({ url });
/** A cluster client, as users create it (not connected). */
export const newCluster = (rootNodes: { url: string }[]) => createCluster({ rootNodes });
/** A Sentinel client, as users create it (not connected). */
export const newSentinel = (name: string, sentinelRootNodes: { host: string; port: number }[]) =>
  createSentinel({ name, sentinelRootNodes });

/** A node-redis client of one of the deployments. */
export type AnyClient =
  | ReturnType<typeof newClient>
  | ReturnType<typeof newCluster>
  | ReturnType<typeof newSentinel>;

/**
 * Makes a node on free ports (`make` picks them) and starts it, into `into`; when another process took a
 * port between the pick and the bind, makes it again on others (a few times).
 */
export async function startOnFreePorts(into: Node[], make: () => Promise<Node>): Promise<Node> {
  for (let attempt = 1; ; attempt++) {
    const node = await make();
    into.push(node);
    try {
      await node.start();
      return node;
    } catch (error) {
      into.splice(into.indexOf(node), 1);
      if (attempt >= 5 || !String(error).includes("Address already in use")) throw error;
    }
  }
}

/** What every deployment gives the tests. */
export interface Deployment {
  readonly kind: DeploymentKind;
  readonly nodes: readonly Node[];
  /** A client of the deployment, not connected (the stores connect it, or the caller does). */
  client(): AnyClient;
  /** The URLs of the masters now (a SCAN over them sees every key). */
  masters(): Promise<string[]>;
  /** Every process stopped (SIGKILL); resolves once they have exited. */
  down(): Promise<void>;
  /** Every process started again with its data; resolves once the deployment is healthy. */
  up(): Promise<void>;
  /** Stops every process and removes its directory. */
  stop(): Promise<void>;
}

/** Temp directories of the deployments, and how each one's nodes end. */
export function scratch(what: string) {
  const root = mkdtempSync(join(tmpdir(), `picomcp-${what}-`));
  return {
    root,
    async remove(nodes: readonly Node[]) {
      for (const n of nodes) if (n.running && !n.answering) n.resume();
      await Promise.all(nodes.map((n) => n.kill()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

// a replica syncs at once (not after the default 5 s a master waits for more replicas to sync together)
export const PERSIST = 'appendonly yes\nappendfsync always\nsave ""\nrepl-diskless-sync-delay 0';
